/**
 * The feature store against hostile input and damaged data (found by a fuzz run): event times a
 * date cannot hold are a 422 naming the row, with nothing of the call written (a batch with one
 * bad row used to write the others); rows whose stored bytes cannot be read (an older build's
 * out-of-range times, damaged bytes, a damaged layout record) read as `unreadable` (or
 * `unknown_layout`) in features/get and as defaults in ranking, never a 500; and a failure that is
 * not an outage (a command Redis rejects, a bug building one) is never a 503 "Redis is not available".
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { ErrorReply } from 'redis';
import { RedisUnavailableError } from '../src/errors/index.js';
import { RowLayout } from '../src/features/row-layout.js';
import {
  defineApp,
  defineFeatureView,
  defineModel,
  defineRankingPipeline,
  Feature,
  getFeature,
  ProductEntity,
} from '../src/index.js';
import { RedisConnection } from '../src/redis/connection.js';
import { RawRedis, TEST_KEYS } from './helpers/raw-redis.js';
import { startTestRedis, type TestRedis } from './helpers/redis-server.js';
import { postJson, testServer } from './helpers/server.js';

const UPLOAD = '/api/v1/features/upload';
const GET = '/api/v1/features/get';

const FEATURES = { score: Feature.float({ default: 0.5 }), label: Feature.string({ default: 'none' }) };
/** With a TTL: rows are written with SET ... PXAT in a MULTI (where 1e19 used to fail half way). */
const Dated = defineFeatureView({
  name: 'dated',
  entity: ProductEntity,
  ttlSeconds: 30 * 86400,
  features: FEATURES,
});
/** Without one: rows are written with MSET (where 9e18 used to be stored, then read as a 500). */
const Plain = defineFeatureView({ name: 'plain', entity: ProductEntity, features: FEATURES });

/** What the model read last, by product id. */
let seen: Record<string, { dated: unknown; plain: unknown }> = {};
const Probe = defineModel({
  name: 'Probe',
  entity: ProductEntity,
  features: ['dated:score', 'plain:score'],
  score(products) {
    seen = {};
    for (const p of products)
      seen[String(p.product_id)] = {
        dated: getFeature(p, 'dated:score'),
        plain: getFeature(p, 'plain:score'),
      };
    return products.map((p) => Number(getFeature(p, 'dated:score')) + Number(getFeature(p, 'plain:score')));
  },
});
const app = defineApp({
  name: 'features-hostile',
  featureViews: [Dated, Plain],
  pipelines: [defineRankingPipeline({ name: 'Probe', candidate: ProductEntity, model: Probe })],
});

const rowKey = (view: string, id: string) => TEST_KEYS.featureRow(view, [id], 'product');
const NOW = Date.now();

let redis: TestRedis;
let server: FastifyInstance;
let raw: RawRedis;

before(async () => {
  redis = await startTestRedis();
  server = await testServer(redis, { app });
  raw = await RawRedis.connect(redis);
});

after(async () => {
  await raw?.close();
  await server?.close();
  await redis?.stop();
});

/** Sets `key` to `bytes` behind rankd's back, as a damaged or older build's row would be. */
async function setRaw(key: string, bytes: Buffer | string): Promise<void> {
  await (await raw.nodeForKey(key)).set(key, bytes);
}

/** A row of `view`'s current layout written by rankd's own encoder, with any event time at all. */
function rowWithTime(view: typeof Dated, eventTimestampMs: number): Buffer {
  return view.layout.encode({ score: 0.9, label: 'stored' }, eventTimestampMs);
}

describe('event times a date cannot hold', () => {
  const OUT_OF_RANGE: Array<[string, unknown]> = [
    ['just past the largest Date', 8.64e15 + 1],
    ['9.2e18 (used to be stored, then every read was a 500)', 9.2e18],
    ['1e19 (used to be a 503 "Redis is not available")', 1e19],
    ['1e21', 1e21],
    ['-1e16', -1e16],
    ['the year 10000 as ISO 8601', '+010000-01-01T00:00:00Z'],
    ['the largest Date as ISO 8601', '+275760-09-13T00:00:00.000Z'],
    ['before 1970 as ISO 8601', '1969-12-31T23:59:59Z'],
  ];

  /** Times JSON can carry only as text: 1e400 parses to Infinity. */
  const NAN_LIKE = ['1e400', '-1e400', '"NaN"', '"Infinity"', '"-Infinity"'];

  /** Uploads `[normal, bad]` (the bad row's time as raw JSON) and checks the 422 and that nothing was written. */
  async function rejected(view: string, what: string, timeJson: string, id: string): Promise<void> {
    const good = `good-${id}`;
    const bad = `bad-${id}`;
    const body =
      `{"feature_view":"${view}","rows":[{"entity_id":"${good}","score":0.1,"event_timestamp":${NOW}},` +
      `{"entity_id":"${bad}","score":0.2,"event_timestamp":${timeJson}}]}`;
    const res = await postJson(server, UPLOAD, body);
    assert.equal(res.status, 422, `${what}: ${JSON.stringify(res.body)}`);
    assert.equal(res.body.error_code, 'RANKD_VALIDATION', what);
    assert.equal(res.body.detail.length, 1, `${what}: ${JSON.stringify(res.body)}`);
    const [problem] = res.body.detail;
    assert.deepEqual(problem.loc, ['body', 'rows', 1, 'event_timestamp'], what);
    // Nothing of the call reached Redis: neither the normal row nor the bad one.
    assert.equal(await raw.exists([rowKey(view, good), rowKey(view, bad)]), 0, what);
  }

  for (const view of ['dated', 'plain']) {
    test(`${view}: times outside 1970..9999 are a 422 naming row and entity id, and [normal, bad] writes nothing`, async () => {
      for (const [n, [what, time]] of OUT_OF_RANGE.entries()) {
        await rejected(view, what, JSON.stringify(time), `${view}-${n}`);
        const res = await postJson(server, UPLOAD, {
          feature_view: view,
          rows: [{ entity_id: `again-${view}-${n}`, score: 1, event_timestamp: time }],
        });
        const [problem] = res.body.detail;
        assert.match(problem.msg, new RegExp(`"again-${view}-${n}"`), `${what}: names the entity id`);
        assert.match(problem.msg, /1970-01-01T00:00:00Z and 9999-12-31T23:59:59\.999Z/, what);
      }
      for (const [n, time] of NAN_LIKE.entries()) await rejected(view, time, time, `${view}-nan-${n}`);
    });
  }

  test('the ends of the range are written and read back as those times, where 9.2e18 was written too', async () => {
    const res = await postJson(server, UPLOAD, {
      feature_view: 'plain',
      rows: [
        { entity_id: 'epoch', score: 1, event_timestamp: 0 },
        { entity_id: 'last-ms', score: 2, event_timestamp: 253402300799999 },
        { entity_id: 'last-iso', score: 3, event_timestamp: '9999-12-31T23:59:59.999Z' },
      ],
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.written, 3);
    const get = await postJson(server, GET, {
      feature_view: 'plain',
      entity_ids: ['epoch', 'last-ms', 'last-iso'],
    });
    assert.equal(get.status, 200, JSON.stringify(get.body));
    assert.deepEqual(
      get.body.results.map(
        (r: { views: { plain: { event_timestamp: string } } }) => r.views.plain.event_timestamp,
      ),
      ['1970-01-01T00:00:00.000Z', '9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59.999Z'],
    );
    // One millisecond more is refused (this part fails where any f64 was taken).
    const past = await postJson(server, UPLOAD, {
      feature_view: 'plain',
      rows: [{ entity_id: 'past-last', score: 4, event_timestamp: 253402300800000 }],
    });
    assert.equal(past.status, 422, JSON.stringify(past.body));
  });
});

describe('stored rows that cannot be read', () => {
  const cut = rowWithTime(Plain, NOW).subarray(0, 20);
  const damaged: Record<string, (view: typeof Dated) => Buffer> = {
    'time 9.2e18 (an older build)': (view) => rowWithTime(view, 9.2e18),
    'time 1e300': (view) => rowWithTime(view, 1e300),
    'time NaN': (view) => rowWithTime(view, Number.NaN),
    'time -Infinity': (view) => rowWithTime(view, Number.NEGATIVE_INFINITY),
    'cut short': () => cut,
    'a single byte': () => Buffer.from([RowLayout.FORMAT_VERSION]),
  };
  const ids = Object.keys(damaged);

  before(async () => {
    for (const view of [Dated, Plain]) {
      for (const [id, make] of Object.entries(damaged)) await setRaw(rowKey(view.name, id), make(view));
      const res = await postJson(server, UPLOAD, {
        feature_view: view.name,
        rows: [{ entity_id: 'good', score: 0.75, label: 'fine', event_timestamp: NOW }],
      });
      assert.equal(res.status, 200, JSON.stringify(res.body));
    }
    // The damaged rows are really stored (else this would test nothing).
    assert.equal(
      await raw.exists(ids.flatMap((id) => [rowKey('dated', id), rowKey('plain', id)])),
      2 * ids.length,
    );
  });

  for (const view of ['dated', 'plain']) {
    test(`${view}: features/get reads each as state unreadable with a reason and the defaults`, async () => {
      const res = await postJson(server, GET, { feature_view: view, entity_ids: [...ids, 'good'] });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const results = res.body.results;
      for (const [i, id] of ids.entries()) {
        const result = results[i];
        assert.equal(result.entity_id, id);
        const state = result.views[view];
        assert.equal(state.state, 'unreadable', `${id}: ${JSON.stringify(state)}`);
        assert.equal(typeof state.reason, 'string', id);
        assert.ok(state.reason.length > 0, id);
        assert.deepEqual(result.values, { [`${view}:score`]: 0.5, [`${view}:label`]: 'none' }, id);
        assert.deepEqual(result.defaulted.sort(), [`${view}:label`, `${view}:score`], id);
      }
      assert.equal(results.at(-1).views[view].state, 'fresh');
      assert.equal(results.at(-1).values[`${view}:score`], 0.75);
    });
  }

  test('ranking answers 200 and reads their features as the defaults', async () => {
    const res = await postJson(server, '/api/v1/ranking', {
      request_id: 'hostile-rank',
      candidates: [...ids, 'good'].map((product_id) => ({ product_id })),
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    for (const id of ids) assert.deepEqual(seen[id], { dated: 0.5, plain: 0.5 }, id);
    assert.deepEqual(seen.good, { dated: 0.75, plain: 0.75 });
    assert.equal(res.body.ranked_candidates[0].candidate_id, 'good');
  });

  test('a damaged layout record: its rows read as unknown_layout, not a 400 or 500', async () => {
    const fingerprint = 0x0badf00d;
    const row = Buffer.alloc(RowLayout.HEADER_BYTES);
    row.writeUInt8(RowLayout.FORMAT_VERSION, 0);
    row.writeUInt32LE(fingerprint, 1);
    row.writeDoubleLE(NOW, 5);
    await setRaw(rowKey('plain', 'bad-record'), row);
    const layouts = TEST_KEYS.featureLayouts();
    await (await raw.nodeForKey(layouts)).hSet(layouts, String(fingerprint), '{not json');
    const res = await postJson(server, GET, { feature_view: 'plain', entity_ids: ['bad-record'] });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body.results[0].views, { plain: { state: 'unknown_layout' } });
    assert.equal(res.body.results[0].values['plain:score'], 0.5);
  });
});

describe('a failure that is not an outage is not a 503', () => {
  test('an upload while the layout record key holds a string: 500 (damaged data), not "Redis is not available"', async () => {
    const layouts = TEST_KEYS.featureLayouts();
    const node = await raw.nodeForKey(layouts);
    await node.set(layouts, 'not a hash');
    try {
      const res = await postJson(server, UPLOAD, {
        feature_view: 'plain',
        rows: [{ entity_id: 'w', score: 1 }],
      });
      assert.equal(res.status, 500, JSON.stringify(res.body));
      assert.equal(res.body.error_code, 'RANKD_INTERNAL');
      assert.equal(await raw.exists(rowKey('plain', 'w')), 0);
    } finally {
      // rankd records the layout again with every write.
      await node.del(layouts);
    }
    // Redis was fine all along: the next upload works.
    const res = await postJson(server, UPLOAD, {
      feature_view: 'plain',
      rows: [{ entity_id: 'w', score: 1 }],
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
  });

  test('RedisConnection: a command Redis rejects and a bad argument pass through as themselves', async () => {
    const connection = new RedisConnection({
      url: redis.url,
      clusterNodes: redis.clusterNodes?.split(','),
      connectTimeoutMs: 500,
      commandTimeoutMs: 2000,
    });
    try {
      assert.ok(await connection.waitUntilReady(5000));
      // PXAT past 2^63 ms: Redis answers ERR (the old path of a 1e19 event time).
      const rejected = await connection.setMany([['hostile:k', 'v', 1e19]]).then(
        () => undefined,
        (error: unknown) => error,
      );
      assert.ok(rejected instanceof ErrorReply, String(rejected));
      assert.ok(!(rejected instanceof RedisUnavailableError));
      // node-redis refuses a number as an argument: a bug, a TypeError, never a 503.
      const bug = await connection.mset([['hostile:k', 5 as unknown as string]]).then(
        () => undefined,
        (error: unknown) => error,
      );
      assert.ok(bug instanceof TypeError, String(bug));
    } finally {
      await connection.close();
    }
  });
});
