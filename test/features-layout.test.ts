/**
 * Layout evolution of the feature store: rows written under one declaration of a view stay
 * readable — over HTTP and through getFeature in a pipeline — after the declaration changes
 * (a feature added, one removed, the order changed), and the other way round (an old server
 * reading rows a newer one wrote). Bytes in a format or layout rankd does not know are
 * `unknown_layout`, damaged rows of one it knows `unreadable`; never a 500.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { createClient, RESP_TYPES } from 'redis';
import {
  defineApp,
  defineFeatureView,
  defineModel,
  defineRankingPipeline,
  Feature,
  type FeatureValue,
  getFeature,
  ProductEntity,
} from '../src/index.js';
import { startTestRedis, type TestRedis } from './helpers/redis-server.js';
import { postJson, testServer } from './helpers/server.js';

/** The first declaration of the view. */
const StatsV1 = defineFeatureView({
  name: 'product_stats',
  entity: ProductEntity,
  features: {
    ctr: Feature.float({ default: 0 }),
    sold: Feature.integer({ default: 0 }),
    retired: Feature.string({ default: 'old default' }),
    tags: Feature.vector(2),
    label: Feature.string({ default: 'none' }),
    hot: Feature.boolean({ default: false }),
  },
});
const V1_FEATURES = Object.keys(StatsV1.features);

/** The changed declaration: `retired` removed, three features added, the rest in another order. */
const StatsV2 = defineFeatureView({
  name: 'product_stats',
  entity: ProductEntity,
  features: {
    label: Feature.string({ default: 'none' }),
    added_float: Feature.float({ default: 7.5 }),
    tags: Feature.vector(2),
    hot: Feature.boolean({ default: false }),
    added_text: Feature.string({ default: 'new' }),
    sold: Feature.integer({ default: 0 }),
    added_vector: Feature.vector(2),
    ctr: Feature.float({ default: 0 }),
  },
});
const V2_FEATURES = Object.keys(StatsV2.features);
const ADDED = ['added_float', 'added_text', 'added_vector'];

/** What the model read, per request and product: every V2 feature through getFeature. */
const seen = new Map<string, Record<string, Record<string, unknown>>>();
const asJson = (value: FeatureValue | null) => (value instanceof Float32Array ? [...value] : value);

const ProbeModel = defineModel({
  name: 'ProbeModel',
  entity: ProductEntity,
  features: V2_FEATURES.map((f) => `product_stats:${f}`),
  score(products, request) {
    const read: Record<string, Record<string, unknown>> = {};
    for (const product of products) {
      const values: Record<string, unknown> = {};
      for (const feature of V2_FEATURES)
        values[feature] = asJson(getFeature(product, `product_stats:${feature}`));
      read[String(product.product_id)] = values;
    }
    seen.set(request.request_id as string, read);
    return products.map((p) => Number(getFeature(p, 'product_stats:ctr')));
  },
});

const appV1 = defineApp({ name: 'layout-v1', featureViews: [StatsV1] });
const appV2 = defineApp({
  name: 'layout-v2',
  featureViews: [StatsV2],
  pipelines: [defineRankingPipeline({ name: 'ProbePipeline', candidate: ProductEntity, model: ProbeModel })],
});

const rowKey = (id: string) => `default:features:product_stats:${id}`;

let redis: TestRedis;
let raw: ReturnType<typeof bufferClient>;

function bufferClient(url: string) {
  return createClient({ url }).withTypeMapping({ [RESP_TYPES.BLOB_STRING]: Buffer });
}

before(async () => {
  redis = await startTestRedis();
  raw = bufferClient(redis.url);
  // The last test restarts Redis under this client: it reconnects, its errors are expected.
  raw.on('error', () => undefined);
  await raw.connect();
});

after(async () => {
  await raw?.close();
  await redis?.stop();
});

async function upload(server: FastifyInstance, rows: unknown[]) {
  const res = await postJson(server, '/api/v1/features/upload', { feature_view: 'product_stats', rows });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.written, rows.length);
}

type Result = {
  entity_id: string;
  values: Record<string, unknown>;
  defaulted: string[];
  views: Record<string, { state: string; event_timestamp?: string; reason?: string }>;
};

async function readAll(server: FastifyInstance, ids: string[]): Promise<Result[]> {
  const res = await postJson(server, '/api/v1/features/get', {
    feature_view: 'product_stats',
    entity_ids: ids,
  });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.results;
}

let requests = 0;
/** Ranks `ids` on `server` (a V2 server) and returns what the model read, by product id. */
async function rank(server: FastifyInstance, ids: string[]) {
  const request_id = `layout-${++requests}`;
  const res = await postJson(server, '/api/v1/ranking', {
    request_id,
    candidates: ids.map((product_id) => ({ product_id })),
  });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const read = seen.get(request_id);
  assert.ok(read, 'the model ran');
  return {
    read,
    ranked: res.body.ranked_candidates as Array<{ candidate_id: string; ranked_score: number }>,
  };
}

const prefixed = (names: string[]) => names.map((n) => `product_stats:${n}`);
/** The V2 values of a row with no stored value: each feature's default. */
const V2_DEFAULTS = {
  label: 'none',
  added_float: 7.5,
  tags: null,
  hot: false,
  added_text: 'new',
  sold: 0,
  added_vector: null,
  ctr: 0,
};

describe('a changed declaration reads rows written under the old one', () => {
  let v1: FastifyInstance;
  let v2: FastifyInstance;
  const T1 = Date.parse('2026-03-01T10:00:00Z');

  before(async () => {
    v1 = await testServer(redis, { app: appV1 });
    await upload(v1, [
      {
        entity_id: 'old-full',
        ctr: 0.125,
        sold: 2 ** 40 + 3,
        retired: 'gone soon',
        tags: [0.1, -4],
        label: 'Grüße 🎉',
        hot: true,
        event_timestamp: T1,
      },
      { entity_id: 'old-partial', sold: 5, retired: 'only this and sold', event_timestamp: T1 },
    ]);
    // The server with the new declaration is a new process as far as rankd knows: nothing shared
    // with the first but Redis.
    v2 = await testServer(redis, { app: appV2 });
  });

  after(async () => {
    await v1?.close();
    await v2?.close();
  });

  test('the declarations really differ (else this file tests nothing)', () => {
    assert.notEqual(StatsV1.layout.fingerprint, StatsV2.layout.fingerprint);
    assert.notDeepEqual(
      V1_FEATURES.filter((f) => V2_FEATURES.includes(f)),
      V2_FEATURES.filter((f) => V1_FEATURES.includes(f)),
    );
  });

  test('over HTTP: shared features keep their values, added ones read as defaults, the removed one is gone', async () => {
    const [full, partial, none] = await readAll(v2, ['old-full', 'old-partial', 'never']);
    assert.ok(full && partial && none);
    assert.deepEqual(full.values, {
      'product_stats:label': 'Grüße 🎉',
      'product_stats:added_float': 7.5,
      'product_stats:tags': [Math.fround(0.1), -4],
      'product_stats:hot': true,
      'product_stats:added_text': 'new',
      'product_stats:sold': 2 ** 40 + 3,
      'product_stats:added_vector': null,
      'product_stats:ctr': 0.125,
    });
    assert.deepEqual(full.defaulted.sort(), prefixed(ADDED).sort());
    assert.deepEqual(full.views, {
      product_stats: { state: 'fresh', event_timestamp: new Date(T1).toISOString() },
    });
    assert.deepEqual(partial.values, {
      ...Object.fromEntries(Object.entries(V2_DEFAULTS).map(([k, v]) => [`product_stats:${k}`, v])),
      'product_stats:sold': 5,
    });
    assert.deepEqual(partial.defaulted.sort(), prefixed(V2_FEATURES.filter((f) => f !== 'sold')).sort());
    assert.equal(partial.views.product_stats?.state, 'fresh');
    assert.deepEqual(none.views, { product_stats: { state: 'missing' } });
    const removed = await postJson(v2, '/api/v1/features/get', {
      features: ['product_stats:retired'],
      entity_ids: ['old-full'],
    });
    assert.equal(removed.status, 422, JSON.stringify(removed.body));
  });

  test('through getFeature in a pipeline: the same values', async () => {
    const { read, ranked } = await rank(v2, ['old-partial', 'never', 'old-full']);
    assert.deepEqual(read['old-full'], {
      label: 'Grüße 🎉',
      added_float: 7.5,
      tags: [Math.fround(0.1), -4],
      hot: true,
      added_text: 'new',
      sold: 2 ** 40 + 3,
      added_vector: null,
      ctr: 0.125,
    });
    assert.deepEqual(read['old-partial'], { ...V2_DEFAULTS, sold: 5 });
    assert.deepEqual(read.never, V2_DEFAULTS);
    // Scored by ctr: the old row's value decides the order.
    assert.deepEqual(
      ranked.map((c) => c.candidate_id),
      ['old-full', 'old-partial', 'never'],
    );
  });

  test('rows of both layouts side by side; a row rewritten under the new one replaces the old', async () => {
    await upload(v2, [
      {
        entity_id: 'old-partial',
        ctr: 0.5,
        added_float: 1.25,
        added_text: 'written by v2',
        added_vector: [1, 2],
        event_timestamp: T1 + 1000,
      },
    ]);
    const { read } = await rank(v2, ['old-full', 'old-partial']);
    assert.deepEqual(read['old-partial'], {
      ...V2_DEFAULTS,
      ctr: 0.5,
      added_float: 1.25,
      added_text: 'written by v2',
      added_vector: [1, 2],
    });
    assert.equal(read['old-full']?.ctr, 0.125, 'the old-layout row is still read');
    const stored = await raw.get(rowKey('old-partial'));
    assert.ok(Buffer.isBuffer(stored));
    assert.equal(stored.readUInt32LE(1), StatsV2.layout.fingerprint, 'the rewritten row has the new layout');
  });

  test('a server still on the old declaration reads rows written under the new one', async () => {
    const [partial] = await readAll(v1, ['old-partial']);
    assert.deepEqual(partial?.values, {
      'product_stats:ctr': 0.5,
      'product_stats:sold': 0,
      'product_stats:retired': 'old default',
      'product_stats:tags': null,
      'product_stats:label': 'none',
      'product_stats:hot': false,
    });
    assert.deepEqual(partial?.defaulted.sort(), prefixed(V1_FEATURES.filter((f) => f !== 'ctr')).sort());
    assert.deepEqual(partial?.views.product_stats, {
      state: 'fresh',
      event_timestamp: new Date(T1 + 1000).toISOString(),
    });
  });
});

describe('bytes rankd cannot read', () => {
  let server: FastifyInstance;

  before(async () => {
    server = await testServer(redis, { app: appV2 });
    // A good row next to the bad ones, to show the bad ones spoil nothing else of the request.
    await upload(server, [{ entity_id: 'good', ctr: 0.75, label: 'good' }]);
  });

  after(async () => {
    await server?.close();
  });

  /** A valid row of the current layout, to damage. */
  const validRow = () =>
    StatsV2.layout.encode(
      { label: 'a label', ctr: 0.5, tags: [1, 2], added_text: 'text', added_vector: [3, 4] },
      Date.now(),
    );

  const header = (version: number, fingerprint: number) => {
    const bytes = Buffer.alloc(13 + 8 * 4 + 4 * 4, 0);
    bytes.writeUInt8(version, 0);
    bytes.writeUInt32LE(fingerprint, 1);
    bytes.writeDoubleLE(Date.now(), 5);
    return bytes;
  };
  const unknownFingerprint = (StatsV2.layout.fingerprint ^ 0x5a5a5a5a) >>> 0;

  const badRows: Record<string, () => Buffer> = {
    'random bytes': () => {
      const bytes = randomBytes(64);
      bytes[0] = 0xee;
      return bytes;
    },
    'an empty string': () => Buffer.alloc(0),
    'JSON text': () => Buffer.from('{"ctr":0.9,"label":"json"}'),
    'a single byte': () => Buffer.from([1]),
    'a header cut short': () => validRow().subarray(0, 9),
    'format version 2': () => header(2, StatsV2.layout.fingerprint),
    'an unknown layout fingerprint': () => header(1, unknownFingerprint),
    'a row of the current layout cut in its fixed part': () => validRow().subarray(0, 13 + 12),
    'a row of the current layout cut in its strings': () => {
      const row = validRow();
      return row.subarray(0, row.length - 10);
    },
    'a row of the current layout whose string length is absurd': () => {
      const row = validRow();
      // The first variable-size feature (label) starts after the header and the 4 fixed ones.
      row.writeUInt32LE(0x7ffffff0, 13 + 8 * 4);
      return row;
    },
  };

  /** The rows of rankd's format and a layout it knows, but damaged: `unreadable`, not `unknown_layout`. */
  const UNREADABLE = new Set([
    'an empty string',
    'a single byte',
    'a header cut short',
    'a row of the current layout cut in its fixed part',
    'a row of the current layout cut in its strings',
    'a row of the current layout whose string length is absurd',
  ]);

  test('each reads as state unknown_layout or unreadable with the defaults over HTTP, and ranks with the defaults', async () => {
    const ids = Object.keys(badRows);
    for (const [id, make] of Object.entries(badRows)) await raw.set(rowKey(id), make());
    // The damaged rows are really stored (the test would prove nothing otherwise).
    assert.equal(await raw.exists(ids.map(rowKey)), ids.length);

    const res = await postJson(server, '/api/v1/features/get', {
      feature_view: 'product_stats',
      entity_ids: [...ids, 'good'],
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const results = res.body.results as Result[];
    for (const [i, id] of ids.entries()) {
      const result = results[i];
      assert.equal(result?.entity_id, id);
      if (UNREADABLE.has(id)) {
        assert.equal(result?.views.product_stats?.state, 'unreadable', id);
        assert.match(String(result?.views.product_stats?.reason), /bytes|header/, id);
      } else assert.deepEqual(result?.views, { product_stats: { state: 'unknown_layout' } }, id);
      assert.deepEqual(
        result?.values,
        Object.fromEntries(Object.entries(V2_DEFAULTS).map(([k, v]) => [`product_stats:${k}`, v])),
        id,
      );
      assert.deepEqual(result?.defaulted.sort(), prefixed(V2_FEATURES).sort(), id);
    }
    assert.equal(results.at(-1)?.views.product_stats?.state, 'fresh');
    assert.equal(results.at(-1)?.values['product_stats:ctr'], 0.75);

    const { read, ranked } = await rank(server, [...ids, 'good']);
    for (const id of ids) assert.deepEqual(read[id], V2_DEFAULTS, id);
    assert.equal(read.good?.ctr, 0.75);
    assert.equal(ranked[0]?.candidate_id, 'good');
  });

  test('one bad row at a time, through features of the view: never a 500', async () => {
    for (const [id, make] of Object.entries(badRows)) {
      await raw.set(rowKey(id), make());
      const res = await postJson(server, '/api/v1/features/get', {
        features: ['product_stats:label', 'product_stats:added_vector', 'product_stats:ctr'],
        entity_ids: [id],
      });
      assert.equal(res.status, 200, `${id}: ${JSON.stringify(res.body)}`);
      assert.deepEqual(res.body.results[0].values, {
        'product_stats:label': 'none',
        'product_stats:added_vector': null,
        'product_stats:ctr': 0,
      });
      const { read } = await rank(server, [id]);
      assert.deepEqual(read[id], V2_DEFAULTS, id);
    }
  });
});

describe('layouts survive Redis losing its data', () => {
  test('rows written after a Redis restart (no persistence) stay readable after the declaration changes', async () => {
    const v1 = await testServer(redis, { app: appV1 });
    try {
      await upload(v1, [{ entity_id: 'before-restart', ctr: 0.1 }]);
      await redis.kill();
      await redis.restart();
      assert.ok(await v1.rankd.redis.waitUntilReady(15_000), 'the server reconnects');
      assert.equal(await raw.exists(rowKey('before-restart')), 0, 'Redis lost its data');
      await upload(v1, [{ entity_id: 'after-restart', ctr: 0.2, sold: 3, retired: 'x' }]);
    } finally {
      await v1.close();
    }
    const v2 = await testServer(redis, { app: appV2 });
    try {
      const [row] = await readAll(v2, ['after-restart']);
      assert.equal(row?.views.product_stats?.state, 'fresh', JSON.stringify(row));
      assert.equal(row?.values['product_stats:ctr'], 0.2);
      assert.equal(row?.values['product_stats:sold'], 3);
    } finally {
      await v2.close();
    }
  });
});
