/**
 * The feature store over HTTP: `POST /api/v1/features/upload`, `/get` and `/delete` with views of
 * every feature type, defaults, TTLs and a pair view. Typed round trips, whole-row replacement,
 * isolation of views, TTL expiry, 422s that write nothing, MAX_BATCH, Redis outages (503) and the
 * OpenAPI document. Pipelines reading features are covered by request-features.test.ts and
 * ranking-features.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { defineApp, defineFeatureView, Feature, ProductEntity, UserEntity } from '../src/index.js';
import { sleep } from './helpers/ranking-app.js';
import { RawRedis, TEST_KEYS } from './helpers/raw-redis.js';
import { startTestRedis, TEST_REDIS_MODE, type TestRedis } from './helpers/redis-server.js';
import { postJson, testServer } from './helpers/server.js';

const MAX_BATCH = 20;
const UPLOAD = '/api/v1/features/upload';
const GET = '/api/v1/features/get';
const DELETE = '/api/v1/features/delete';

/** Every feature type, with and without defaults. */
const Typed = defineFeatureView({
  name: 'typed',
  entity: ProductEntity,
  features: {
    price: Feature.float({ default: 1.5 }),
    count: Feature.integer({ default: 0 }),
    active: Feature.boolean({ default: true }),
    label: Feature.string({ default: 'none' }),
    embedding: Feature.vector(3),
    note: Feature.string(),
    free_vector: Feature.vector(),
    ratio: Feature.float(),
  },
});
const TYPED_FEATURES = Object.keys(Typed.features);
/** A second view of the same entity type, to show that writing one view leaves the other alone. */
const Other = defineFeatureView({
  name: 'other',
  entity: ProductEntity,
  features: { score: Feature.float({ default: 0 }), name: Feature.string({ default: 'anon' }) },
});
const TTL_FEATURES = { value: Feature.float({ default: -1 }) };
const Ttl = defineFeatureView({ name: 'ttl', entity: ProductEntity, ttlSeconds: 60, features: TTL_FEATURES });
/** The same view without its TTL: a writer that stores rows whatever their age. */
const TtlWithout = defineFeatureView({ name: 'ttl', entity: ProductEntity, features: TTL_FEATURES });
const Short = defineFeatureView({
  name: 'short',
  entity: ProductEntity,
  ttlSeconds: 2,
  features: { value: Feature.float({ default: -1 }) },
});
const Pair = defineFeatureView({
  name: 'pair',
  entity: [ProductEntity, UserEntity],
  features: { clicks: Feature.integer({ default: 0 }), affinity: Feature.float() },
});

const app = defineApp({ name: 'features-http', featureViews: [Typed, Other, Ttl, Short, Pair] });

/** Every view here is keyed by a product (a pair view by its first entity, a product). */
const rowKey = (view: string, id: string) => TEST_KEYS.featureRow(view, [id], 'product');
const pairKey = (view: string, first: string, second: string) =>
  TEST_KEYS.featureRow(view, [first, second], 'product');

let redis: TestRedis;
let server: FastifyInstance;
/** Reads stored bytes; the Redis-down test kills Redis under it too (it reconnects, its errors are ignored). */
let raw: RawRedis;

before(async () => {
  redis = await startTestRedis();
  server = await testServer(redis, { app, env: { MAX_BATCH: String(MAX_BATCH) } });
  raw = await RawRedis.connect(redis);
});

test('row keys: default:features:<view>:<id> on a single Redis (pairs <len>.<first>:<second>), hash-tagged on a cluster', () => {
  const single = TEST_REDIS_MODE === 'single';
  assert.equal(
    rowKey('typed', 'p1'),
    single ? 'default:features:typed:p1' : 'default:features:typed:{product:p1}',
  );
  assert.equal(
    pairKey('pair', 'p1', 'u1'),
    single ? 'default:features:pair:2.p1:u1' : 'default:features:pair:{product:p1}:u1',
  );
});

after(async () => {
  await server?.close();
  await raw?.close();
  await redis?.stop();
});

async function upload(feature_view: string, rows: unknown[], to = server) {
  const res = await postJson(to, UPLOAD, { feature_view, rows });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body as { feature_view: string; written: number; expired: number };
}

async function read(body: Record<string, unknown>) {
  const res = await postJson(server, GET, body);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.results as Array<{
    entity_id: unknown;
    values: Record<string, unknown>;
    defaulted: string[];
    views: Record<string, { state: string; event_timestamp?: string }>;
  }>;
}

async function readOne(view: string, id: unknown) {
  const [result] = await read({ feature_view: view, entity_ids: [id] });
  assert.ok(result);
  return result;
}

const prefixed = (view: string, names: string[]) => names.map((n) => `${view}:${n}`);

describe('typed round trips', () => {
  test('every feature type, through feature_view: floats in 64 bits, integers to 2^53-1, false, unicode, "", vectors in 32 bits', async () => {
    const p1 = {
      entity_id: 'p1',
      price: 0.1,
      count: 2 ** 53 - 1,
      active: false,
      label: 'Grüße, 世界 🎉 \u0000 "quoted"\n',
      embedding: [0.1, -2.5, 1e-7],
      note: '',
      free_vector: [3.3, 1e20, -0.5, 7, 0.2],
      ratio: -1234.5678e-10,
      event_timestamp: '2026-01-31T12:34:56Z',
    };
    const p2 = {
      entity_id: 'p2',
      price: -0.3,
      count: -(2 ** 53 - 1),
      active: true,
      label: 'x',
      embedding: [1, 2, 3],
      note: 'n',
      free_vector: [],
      ratio: 0,
      event_timestamp: 1_700_000_000_123,
    };
    assert.deepEqual(await upload('typed', [p1, p2]), { feature_view: 'typed', written: 2, expired: 0 });

    const [r1, r2] = await read({ feature_view: 'typed', entity_ids: ['p1', 'p2'] });
    assert.ok(r1 && r2);
    assert.equal(r1.entity_id, 'p1');
    assert.deepEqual(r1.values, {
      'typed:price': 0.1,
      'typed:count': 9007199254740991,
      'typed:active': false,
      'typed:label': p1.label,
      'typed:embedding': p1.embedding.map(Math.fround),
      'typed:note': '',
      'typed:free_vector': p1.free_vector.map(Math.fround),
      'typed:ratio': -1234.5678e-10,
    });
    // The fround values differ from the sent ones: the test would notice if vectors were kept in 64 bits.
    assert.notEqual(Math.fround(0.1), 0.1);
    assert.deepEqual(r1.defaulted, [], 'false and "" are values, not defaults');
    assert.deepEqual(r1.views, { typed: { state: 'fresh', event_timestamp: '2026-01-31T12:34:56.000Z' } });

    assert.deepEqual(r2.values, {
      'typed:price': -0.3,
      'typed:count': -9007199254740991,
      'typed:active': true,
      'typed:label': 'x',
      'typed:embedding': [1, 2, 3],
      'typed:note': 'n',
      'typed:free_vector': [],
      'typed:ratio': 0,
    });
    assert.deepEqual(r2.defaulted, []);
    assert.deepEqual(r2.views, {
      typed: { state: 'fresh', event_timestamp: new Date(1_700_000_000_123).toISOString() },
    });
  });

  test('null and absent values, and entities without a row, read as the declared default (or null) and are listed in defaulted', async () => {
    await upload('typed', [
      { entity_id: 'p3', price: null, count: 5, embedding: null, label: null },
      { entity_id: 'p4', active: false, note: null },
    ]);
    const [p3, p4, none] = await read({ feature_view: 'typed', entity_ids: ['p3', 'p4', 'no-such'] });
    assert.ok(p3 && p4 && none);
    const defaults = {
      'typed:price': 1.5,
      'typed:count': 0,
      'typed:active': true,
      'typed:label': 'none',
      'typed:embedding': null,
      'typed:note': null,
      'typed:free_vector': null,
      'typed:ratio': null,
    };
    assert.deepEqual(p3.values, { ...defaults, 'typed:count': 5 });
    assert.deepEqual(
      p3.defaulted.sort(),
      prefixed(
        'typed',
        TYPED_FEATURES.filter((f) => f !== 'count'),
      ).sort(),
    );
    assert.equal(p3.views.typed?.state, 'fresh');
    assert.deepEqual(p4.values, { ...defaults, 'typed:active': false });
    assert.deepEqual(
      p4.defaulted.sort(),
      prefixed(
        'typed',
        TYPED_FEATURES.filter((f) => f !== 'active'),
      ).sort(),
    );
    assert.deepEqual(none.values, defaults);
    assert.deepEqual(none.defaulted.sort(), prefixed('typed', TYPED_FEATURES).sort());
    assert.deepEqual(none.views, { typed: { state: 'missing' } });
  });

  test('without event_timestamp the row is stamped with the upload time', async () => {
    const before = Date.now();
    await upload('typed', [{ entity_id: 'p-now', price: 2 }]);
    const after = Date.now();
    const stamp = (await readOne('typed', 'p-now')).views.typed?.event_timestamp;
    assert.ok(stamp, 'a fresh row echoes its event_timestamp');
    const ms = Date.parse(stamp);
    assert.ok(ms >= before && ms <= after, `${stamp} lies within the upload call`);
  });

  test('through features: names of two views of one entity type, only those asked', async () => {
    await upload('other', [{ entity_id: 'p1', score: 4.25, name: 'one' }]);
    const [p1, none] = await read({
      features: ['typed:count', 'other:score', 'typed:embedding'],
      entity_ids: ['p1', 'no-such'],
    });
    assert.ok(p1 && none);
    assert.deepEqual(p1.values, {
      'typed:count': 2 ** 53 - 1,
      'other:score': 4.25,
      'typed:embedding': [0.1, -2.5, 1e-7].map(Math.fround),
    });
    assert.deepEqual(p1.defaulted, []);
    assert.equal(p1.views.typed?.state, 'fresh');
    assert.equal(p1.views.other?.state, 'fresh');
    assert.deepEqual(Object.keys(p1.views).sort(), ['other', 'typed']);
    assert.deepEqual(none.values, { 'typed:count': 0, 'other:score': 0, 'typed:embedding': null });
    assert.deepEqual(none.defaulted.sort(), ['other:score', 'typed:count', 'typed:embedding']);
    assert.deepEqual(none.views, { typed: { state: 'missing' }, other: { state: 'missing' } });
  });

  test('a numeric entity id names the same row as its string', async () => {
    await upload('other', [{ entity_id: 42, score: 42.5 }]);
    const result = await readOne('other', '42');
    assert.equal(result.values['other:score'], 42.5);
    assert.equal((await readOne('other', 42)).values['other:score'], 42.5);
    assert.ok(await raw.exists(rowKey('other', '42')));
  });

  test('/get: exactly one of feature_view and features, known features, one entity type → else 422', async () => {
    const cases: Array<[body: Record<string, unknown>, loc: unknown[]]> = [
      [{ entity_ids: ['p1'] }, ['body']],
      [{ feature_view: 'typed', features: ['typed:price'], entity_ids: ['p1'] }, ['body']],
      [{ feature_view: 'nope', entity_ids: ['p1'] }, ['body', 'feature_view']],
      [{ features: ['typed:price', 'typed:colour'], entity_ids: ['p1'] }, ['body', 'features', 1]],
      [{ features: ['typed:toString'], entity_ids: ['p1'] }, ['body', 'features', 0]],
      [{ features: ['nope:price'], entity_ids: ['p1'] }, ['body', 'features', 0]],
      [{ features: ['price'], entity_ids: ['p1'] }, ['body', 'features', 0]],
      [{ features: ['typed:price', 'pair:clicks'], entity_ids: ['p1'] }, ['body', 'features']],
    ];
    for (const [body, loc] of cases) {
      const res = await postJson(server, GET, body);
      assert.equal(res.status, 422, `${JSON.stringify(body)} → ${JSON.stringify(res.body)}`);
      assert.equal(res.body.error_code, 'RANKD_VALIDATION');
      assert.deepEqual(
        res.body.detail.map((p: { loc: unknown }) => p.loc),
        [loc],
        `${JSON.stringify(body)} → ${JSON.stringify(res.body)}`,
      );
    }
  });
});

describe('a row replaces the row of its view, and only that', () => {
  test('a second upload without some features leaves them at their defaults', async () => {
    await upload('typed', [
      {
        entity_id: 'r1',
        price: 9.5,
        count: 9,
        active: false,
        label: 'first',
        embedding: [1, 1, 1],
        note: 'kept?',
        free_vector: [1],
        ratio: 0.5,
      },
    ]);
    await upload('typed', [{ entity_id: 'r1', count: 10, event_timestamp: 1_000 }]);
    const r1 = await readOne('typed', 'r1');
    assert.deepEqual(r1.values, {
      'typed:price': 1.5,
      'typed:count': 10,
      'typed:active': true,
      'typed:label': 'none',
      'typed:embedding': null,
      'typed:note': null,
      'typed:free_vector': null,
      'typed:ratio': null,
    });
    assert.deepEqual(
      r1.defaulted.sort(),
      prefixed(
        'typed',
        TYPED_FEATURES.filter((f) => f !== 'count'),
      ).sort(),
    );
    assert.deepEqual(r1.views.typed, { state: 'fresh', event_timestamp: new Date(1_000).toISOString() });
  });

  test("writing one view of an entity leaves the entity's other views byte for byte", async () => {
    await upload('other', [{ entity_id: 'iso', score: 3.5, name: 'isolated', event_timestamp: 5_000 }]);
    await upload('typed', [{ entity_id: 'iso', price: 1 }]);
    const otherBefore = await raw.getBytes(rowKey('other', 'iso'));
    assert.ok(Buffer.isBuffer(otherBefore) && otherBefore.length > 0);
    // Rewrite the typed row twice and delete it: the other row must not change.
    await upload('typed', [{ entity_id: 'iso', price: 2, label: 'a much longer label than before' }]);
    await upload('typed', [{ entity_id: 'iso', count: 3 }]);
    assert.deepEqual(await raw.getBytes(rowKey('other', 'iso')), otherBefore);
    const [result] = await read({
      features: ['other:score', 'other:name', 'typed:count'],
      entity_ids: ['iso'],
    });
    assert.deepEqual(result?.values, { 'other:score': 3.5, 'other:name': 'isolated', 'typed:count': 3 });
    assert.deepEqual(result?.views.other, { state: 'fresh', event_timestamp: new Date(5_000).toISOString() });
  });

  test('a call writes exactly one key per row (and the layout record), no other view', async () => {
    const before = await raw.dbSize();
    await upload('typed', [
      { entity_id: 'k1', price: 1 },
      { entity_id: 'k2', price: 2 },
    ]);
    assert.equal(await raw.dbSize(), before + 2);
    assert.equal(await raw.exists([rowKey('typed', 'k1'), rowKey('typed', 'k2')]), 2);
    assert.equal(await raw.exists([rowKey('other', 'k1'), rowKey('other', 'k2')]), 0);
  });
});

describe('pair view (product × user)', () => {
  test('rows are keyed by [product_id, user_id]; ids containing ":" cannot collide', async () => {
    assert.deepEqual(
      await upload('pair', [
        { entity_id: ['p1', 'u1'], clicks: 3, affinity: 0.75 },
        { entity_id: ['p1', 'u2'], clicks: 5 },
        { entity_id: [7, 'u1'], clicks: 7 },
        { entity_id: ['a:b', 'c'], clicks: 11 },
        { entity_id: ['a', 'b:c'], clicks: 13 },
      ]),
      { feature_view: 'pair', written: 5, expired: 0 },
    );
    assert.equal(
      await raw.exists([
        pairKey('pair', 'p1', 'u1'),
        pairKey('pair', 'p1', 'u2'),
        pairKey('pair', '7', 'u1'),
        pairKey('pair', 'a:b', 'c'),
        pairKey('pair', 'a', 'b:c'),
      ]),
      5,
    );
    const ids = [
      ['p1', 'u1'],
      ['p1', 'u2'],
      ['7', 'u1'],
      ['a:b', 'c'],
      ['a', 'b:c'],
      ['u1', 'p1'],
      ['p2', 'u1'],
    ];
    const results = await read({ feature_view: 'pair', entity_ids: ids });
    assert.deepEqual(
      results.map((r) => r.entity_id),
      ids,
    );
    assert.deepEqual(
      results.map((r) => r.values['pair:clicks']),
      [3, 5, 7, 11, 13, 0, 0],
    );
    assert.deepEqual(
      results.map((r) => r.values['pair:affinity']),
      [0.75, null, null, null, null, null, null],
    );
    assert.deepEqual(
      results.map((r) => r.views.pair?.state),
      ['fresh', 'fresh', 'fresh', 'fresh', 'fresh', 'missing', 'missing'],
    );
  });

  test('ids of the wrong shape → 422 at the row’s (or the id’s) entity_id, nothing written', async () => {
    const badPairIds: unknown[] = [
      'p1',
      ['p1'],
      ['p1', 'u1', 'x'],
      ['p1', null],
      ['', 'u1'],
      ['p1', { id: 1 }],
      5,
    ];
    for (const id of badPairIds) {
      await assertRejected(
        'pair',
        [
          { entity_id: ['ok-a', 'u'], clicks: 1 },
          { entity_id: id, clicks: 1 },
        ],
        [pairKey('pair', 'ok-a', 'u')],
        (loc) => loc.length >= 4 && sameLoc(loc.slice(0, 4), ['body', 'rows', 1, 'entity_id']),
      );
      const got = await postJson(server, GET, { feature_view: 'pair', entity_ids: [['p1', 'u1'], id] });
      assert.equal(got.status, 422, `get ${JSON.stringify(id)} → ${JSON.stringify(got.body)}`);
      assert.ok(
        got.body.detail.some((p: { loc: Loc }) => sameLoc(p.loc.slice(0, 3), ['body', 'entity_ids', 1])),
        JSON.stringify(got.body),
      );
      const del = await postJson(server, DELETE, { feature_view: 'pair', entity_ids: [id] });
      assert.equal(del.status, 422, `delete ${JSON.stringify(id)} → ${JSON.stringify(del.body)}`);
    }
    // A pair on a single-entity view.
    await assertRejected(
      'typed',
      [
        { entity_id: 'ok-b', price: 1 },
        { entity_id: ['p1', 'u1'], price: 1 },
      ],
      [rowKey('typed', 'ok-b')],
      (loc) => sameLoc(loc.slice(0, 4), ['body', 'rows', 1, 'entity_id']),
    );
  });
});

describe('TTL', () => {
  test('a row older than the TTL is not written (counted in expired); one just inside it is fresh and expires in Redis', async () => {
    const now = Date.now();
    const result = await upload('ttl', [
      { entity_id: 't-old', value: 1, event_timestamp: now - 61_000 },
      { entity_id: 't-inside', value: 2, event_timestamp: new Date(now - 50_000).toISOString() },
      { entity_id: 't-now', value: 3 },
    ]);
    assert.deepEqual(result, { feature_view: 'ttl', written: 2, expired: 1 });
    assert.equal(await raw.exists(rowKey('ttl', 't-old')), 0);
    const pttl = await raw.pTTL(rowKey('ttl', 't-inside'));
    assert.ok(pttl > 0 && pttl <= 10_000, `Redis drops the row at event time + TTL (PTTL ${pttl})`);
    const nowTtl = await raw.pTTL(rowKey('ttl', 't-now'));
    assert.ok(nowTtl > 50_000 && nowTtl <= 60_000, `PTTL ${nowTtl}`);
    const [old, inside, fresh] = await read({
      feature_view: 'ttl',
      entity_ids: ['t-old', 't-inside', 't-now'],
    });
    assert.deepEqual(old, {
      entity_id: 't-old',
      values: { 'ttl:value': -1 },
      defaulted: ['ttl:value'],
      views: { ttl: { state: 'missing' } },
    });
    assert.deepEqual(inside?.values, { 'ttl:value': 2 });
    assert.deepEqual(inside?.views.ttl, {
      state: 'fresh',
      event_timestamp: new Date(now - 50_000).toISOString(),
    });
    assert.deepEqual(fresh?.values, { 'ttl:value': 3 });
  });

  test('a row Redis still holds but older than the TTL reads as expired, with the default', async () => {
    // A writer whose declaration of the view has no TTL, so Redis keeps the old row.
    const writer = await testServer(redis, { app: defineApp({ featureViews: [TtlWithout] }) });
    try {
      const old = Date.now() - 120_000;
      assert.deepEqual(
        await upload('ttl', [{ entity_id: 't-stale', value: 9, event_timestamp: old }], writer),
        {
          feature_view: 'ttl',
          written: 1,
          expired: 0,
        },
      );
    } finally {
      await writer.close();
    }
    assert.equal(await raw.exists(rowKey('ttl', 't-stale')), 1);
    assert.deepEqual(await readOne('ttl', 't-stale'), {
      entity_id: 't-stale',
      values: { 'ttl:value': -1 },
      defaulted: ['ttl:value'],
      views: { ttl: { state: 'expired' } },
    });
  });

  test('a fresh row of a 2 s view reads as its default once 2 s have passed', async () => {
    const written = Date.now();
    await upload('short', [{ entity_id: 's1', value: 0.25, event_timestamp: written }]);
    const fresh = await readOne('short', 's1');
    assert.deepEqual(fresh.values, { 'short:value': 0.25 });
    assert.equal(fresh.views.short?.state, 'fresh');
    await sleep(written + 2_100 - Date.now());
    const later = await readOne('short', 's1');
    assert.deepEqual(later.values, { 'short:value': -1 });
    assert.deepEqual(later.defaulted, ['short:value']);
    assert.ok(['expired', 'missing'].includes(later.views.short?.state ?? ''), JSON.stringify(later.views));
    assert.equal(later.views.short?.event_timestamp, undefined);
  });
});

type Loc = ReadonlyArray<string | number>;
const sameLoc = (a: Loc, b: Loc) => JSON.stringify(a) === JSON.stringify(b);

/**
 * Uploads `rows` (given as an object, or as JSON text for values JSON.stringify cannot write),
 * expects a 422 whose problems all satisfy `expected` (a predicate or the exact list of locs),
 * and checks that nothing was written: DBSIZE unchanged and none of `absentKeys` exists.
 */
async function assertRejected(
  view: string,
  rows: unknown[] | string,
  absentKeys: string[],
  expected: ((loc: Loc) => boolean) | Loc[],
): Promise<Array<{ loc: Loc; msg: string; type: string }>> {
  const sizeBefore = await raw.dbSize();
  const payload =
    typeof rows === 'string'
      ? `{"feature_view":${JSON.stringify(view)},"rows":${rows}}`
      : { feature_view: view, rows };
  const res = await postJson(server, UPLOAD, payload);
  const what = `${typeof rows === 'string' ? rows : JSON.stringify(rows)} → ${JSON.stringify(res.body)}`;
  assert.equal(res.status, 422, what);
  assert.equal(res.body.error_code, 'RANKD_VALIDATION', what);
  const problems = res.body.detail as Array<{ loc: Loc; msg: string; type: string }>;
  assert.ok(Array.isArray(problems) && problems.length > 0, what);
  for (const problem of problems) assert.equal(typeof problem.msg, 'string', what);
  if (typeof expected === 'function') {
    assert.ok(
      problems.every((p) => expected(p.loc)),
      what,
    );
  } else {
    assert.deepEqual(
      problems.map((p) => p.loc),
      expected,
      what,
    );
  }
  assert.equal(await raw.dbSize(), sizeBefore, `nothing written: ${what}`);
  if (absentKeys.length > 0) assert.equal(await raw.exists(absentKeys), 0, `valid rows not written: ${what}`);
  return problems;
}

describe('invalid uploads → 422 naming row and feature; nothing of the call is written', () => {
  const valid = (id: string) => ({ entity_id: id, price: 1, count: 1, label: 'ok', embedding: [1, 2, 3] });
  const validKeys = [rowKey('typed', 'ok-1'), rowKey('typed', 'ok-2'), rowKey('typed', 'bad')];
  // Each call of `middle` uses fresh ids, so that a call wrongly accepted fails only its own case.
  let calls = 0;
  /** A call of three rows whose middle one has `feature: value` (JSON text) next to valid rows. */
  const middle = (feature: string, json: string): [rows: string, keys: string[]] => {
    const ids = ['ok-a', 'bad', 'ok-b'].map((id) => `${id}-${++calls}`);
    const [a, bad, b] = ids as [string, string, string];
    return [
      `[${JSON.stringify(valid(a))},{"entity_id":"${bad}","${feature}":${json}},${JSON.stringify(valid(b))}]`,
      ids.map((id) => rowKey('typed', id)),
    ];
  };

  test('unknown feature view', async () => {
    await assertRejected(
      'nope',
      [valid('ok-1')],
      [rowKey('nope', 'ok-1'), rowKey('typed', 'ok-1')],
      [['body', 'feature_view']],
    );
  });

  test('unknown feature, including names every object inherits', async () => {
    for (const name of ['colour', 'Price', 'toString', 'constructor', 'hasOwnProperty']) {
      const [rows, keys] = middle(name, '1');
      const [problem] = await assertRejected('typed', rows, keys, [['body', 'rows', 1, name]]);
      assert.match(problem?.msg ?? '', new RegExp(name), 'the message names the feature');
    }
  });

  const wrongValues: Record<string, string[]> = {
    price: ['"0.5"', '"NaN"', '"Infinity"', '1e999', '-1e999', 'true', '{}', '[1]'],
    ratio: ['"NaN"', 'false'],
    count: ['1.5', '"3"', '9007199254740992', '-9007199254740992', '1e999', 'true', '"NaN"', '[]'],
    active: ['1', '0', '"true"', '"false"', '[]', '{}'],
    label: ['5', 'true', '["a"]', '{}'],
    note: ['0'],
    embedding: [
      '"1,2,3"',
      '[1,2]',
      '[1,2,3,4]',
      '[]',
      '[1,"2",3]',
      '[1,null,3]',
      '[1,"NaN",3]',
      '[1,1e999,3]',
      '[1,2,3e39]',
      '{"0":1,"1":2,"2":3}',
      '3',
    ],
    free_vector: ['"v"', '[true]', '[[1]]', '[-1e39]'],
  };
  for (const [feature, values] of Object.entries(wrongValues)) {
    test(`wrong values of ${Typed.features[feature as keyof typeof Typed.features].kind} feature ${feature}`, async () => {
      for (const json of values) {
        const [rows, keys] = middle(feature, json);
        const [problem] = await assertRejected('typed', rows, keys, [['body', 'rows', 1, feature]]);
        assert.match(problem?.msg ?? '', new RegExp(feature));
      }
    });
  }

  test('bad event_timestamp', async () => {
    for (const json of ['"yesterday"', '"2026-13-45T00:00:00Z"', '""', '-5', '1e999', 'true', '{}', '[1]']) {
      const [rows, keys] = middle('event_timestamp', json);
      await assertRejected('typed', rows, keys, [['body', 'rows', 1, 'event_timestamp']]);
    }
  });

  test('every bad row and feature of a call is reported', async () => {
    await assertRejected(
      'typed',
      [
        { entity_id: 'ok-1', price: 'cheap' },
        valid('ok-2'),
        { entity_id: 'bad', count: 0.5, active: 'yes', event_timestamp: 'never' },
      ],
      validKeys,
      (loc) =>
        [
          ['body', 'rows', 0, 'price'],
          ['body', 'rows', 2, 'count'],
          ['body', 'rows', 2, 'active'],
          ['body', 'rows', 2, 'event_timestamp'],
        ].some((l) => sameLoc(l, loc)),
    );
    const res = await postJson(server, UPLOAD, {
      feature_view: 'typed',
      rows: [
        { entity_id: 'ok-1', price: 'cheap' },
        valid('ok-2'),
        { entity_id: 'bad', count: 0.5, active: 'yes' },
      ],
    });
    assert.deepEqual(
      res.body.detail.map((p: { loc: Loc }) => p.loc),
      [
        ['body', 'rows', 0, 'price'],
        ['body', 'rows', 2, 'count'],
        ['body', 'rows', 2, 'active'],
      ],
    );
  });

  test('a row without entity_id, or rows that are not objects', async () => {
    await assertRejected('typed', [valid('ok-1'), { price: 1 }], validKeys, [
      ['body', 'rows', 1, 'entity_id'],
    ]);
    await assertRejected('typed', [valid('ok-1'), 'p1'], validKeys, (loc) =>
      sameLoc(loc, ['body', 'rows', 1]),
    );
  });

  test('a TTL view rejects a bad row even when the other rows are expired or fresh', async () => {
    await assertRejected(
      'ttl',
      [
        { entity_id: 'ttl-ok', value: 1 },
        { entity_id: 'ttl-bad', value: 'x' },
      ],
      [rowKey('ttl', 'ttl-ok'), rowKey('ttl', 'ttl-bad')],
      [['body', 'rows', 1, 'value']],
    );
  });

  test('the same rows without the bad one are written (the fixtures are not what failed)', async () => {
    assert.deepEqual(await upload('typed', [valid('ok-1'), valid('ok-2')]), {
      feature_view: 'typed',
      written: 2,
      expired: 0,
    });
    assert.equal(await raw.exists(validKeys), 2);
    await postJson(server, DELETE, { feature_view: 'typed', entity_ids: ['ok-1', 'ok-2'] });
    assert.equal(await raw.exists(validKeys), 0);
  });
});

describe('MAX_BATCH', () => {
  const rows = (n: number, prefix: string) =>
    Array.from({ length: n }, (_, i) => ({ entity_id: `${prefix}${i}`, price: i }));

  test(`more than ${MAX_BATCH} rows or ids → 422 and nothing written; ${MAX_BATCH} pass`, async () => {
    const over = rows(MAX_BATCH + 1, 'mb');
    await assertRejected(
      'typed',
      over,
      [rowKey('typed', 'mb0'), rowKey('typed', `mb${MAX_BATCH}`)],
      [['body', 'rows']],
    );
    const ids = over.map((r) => r.entity_id);
    for (const [path, body] of [
      [GET, { feature_view: 'typed', entity_ids: ids }],
      [DELETE, { feature_view: 'typed', entity_ids: ids }],
    ] as const) {
      const res = await postJson(server, path, body);
      assert.equal(res.status, 422, `${path}: ${JSON.stringify(res.body)}`);
      assert.deepEqual(res.body.detail[0].loc, ['body', 'entity_ids']);
    }
    assert.deepEqual(await upload('typed', rows(MAX_BATCH, 'mb')), {
      feature_view: 'typed',
      written: MAX_BATCH,
      expired: 0,
    });
    const results = await read({ feature_view: 'typed', entity_ids: ids.slice(0, MAX_BATCH) });
    assert.deepEqual(
      results.map((r) => r.values['typed:price']),
      Array.from({ length: MAX_BATCH }, (_, i) => i),
    );
  });
});

describe('POST /api/v1/features/delete', () => {
  test("deletes that view's rows only and counts those that existed", async () => {
    await upload('typed', [
      { entity_id: 'd1', price: 1 },
      { entity_id: 'd2', price: 2 },
    ]);
    await upload('other', [
      { entity_id: 'd1', score: 1 },
      { entity_id: 'd2', score: 2 },
    ]);
    const otherBytes = await raw.getBytes(rowKey('other', 'd1'));
    const res = await postJson(server, DELETE, {
      feature_view: 'typed',
      entity_ids: ['d1', 'never-there', 'd1'],
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body, { feature_view: 'typed', deleted_count: 1 });
    assert.equal(await raw.exists(rowKey('typed', 'd1')), 0);
    assert.equal(await raw.exists(rowKey('typed', 'd2')), 1, 'an id not named stays');
    assert.deepEqual(await raw.getBytes(rowKey('other', 'd1')), otherBytes, 'the other view stays');
    const [d1, d2] = await read({ features: ['typed:price', 'other:score'], entity_ids: ['d1', 'd2'] });
    assert.deepEqual(d1?.values, { 'typed:price': 1.5, 'other:score': 1 });
    assert.deepEqual(d1?.views, { typed: { state: 'missing' }, other: d1?.views.other });
    assert.equal(d1?.views.other?.state, 'fresh');
    assert.deepEqual(d2?.values, { 'typed:price': 2, 'other:score': 2 });
    const again = await postJson(server, DELETE, { feature_view: 'typed', entity_ids: ['d1'] });
    assert.deepEqual(again.body, { feature_view: 'typed', deleted_count: 0 });
  });

  test('pair rows are deleted by [product_id, user_id]', async () => {
    await upload('pair', [
      { entity_id: ['dp', 'u1'], clicks: 1 },
      { entity_id: ['dp', 'u2'], clicks: 2 },
    ]);
    const res = await postJson(server, DELETE, { feature_view: 'pair', entity_ids: [['dp', 'u1']] });
    assert.deepEqual(res.body, { feature_view: 'pair', deleted_count: 1 });
    assert.equal(await raw.exists(pairKey('pair', 'dp', 'u1')), 0);
    assert.equal(await raw.exists(pairKey('pair', 'dp', 'u2')), 1);
  });

  test('an unknown view → 422', async () => {
    const res = await postJson(server, DELETE, { feature_view: 'nope', entity_ids: ['d2'] });
    assert.equal(res.status, 422);
    assert.deepEqual(res.body.detail[0].loc, ['body', 'feature_view']);
    assert.equal(await raw.exists(rowKey('typed', 'd2')), 1);
  });
});

describe('OpenAPI', () => {
  test('/openapi.json documents the three feature routes with their bodies, 200, 422 and 503', async () => {
    const res = await server.inject({ method: 'GET', url: '/openapi.json' });
    assert.equal(res.statusCode, 200);
    const doc = res.json();
    // Bodies are named components (`{ $ref }`): the schema itself is in components.schemas.
    const schemaOf = (schema: { $ref?: string }) =>
      schema.$ref === undefined
        ? schema
        : doc.components.schemas[schema.$ref.replace('#/components/schemas/', '')];
    for (const [path, operationId] of [
      [UPLOAD, 'features_upload'],
      [GET, 'features_get'],
      [DELETE, 'features_delete'],
    ] as const) {
      const op = doc.paths[path]?.post;
      assert.ok(op, `${path} is documented`);
      assert.equal(op.operationId, operationId);
      assert.ok(op.summary, `${path} has a summary`);
      assert.ok(op.requestBody.content['application/json'].schema, `${path} documents its body`);
      for (const status of ['200', '422', '503'])
        assert.ok(op.responses[status]?.content?.['application/json'], `${path} documents ${status}`);
      assert.ok(schemaOf(op.responses['422'].content['application/json'].schema).properties?.error_code);
    }
    const uploadBody = schemaOf(doc.paths[UPLOAD].post.requestBody.content['application/json'].schema);
    assert.deepEqual(uploadBody.properties.feature_view.enum, ['typed', 'other', 'ttl', 'short', 'pair']);
    assert.equal(uploadBody.properties.rows.maxItems, MAX_BATCH);
  });
});

describe('Redis down', () => {
  test('upload, get and delete answer 503 while Redis is down, and work again once it is back', async () => {
    await redis.kill();
    try {
      const calls: Array<[string, unknown]> = [
        [UPLOAD, { feature_view: 'typed', rows: [{ entity_id: 'down', price: 1 }] }],
        // A view never written by this server: its layout is not registered yet.
        [UPLOAD, { feature_view: 'short', rows: [{ entity_id: 'down', value: 1 }] }],
        [GET, { feature_view: 'typed', entity_ids: ['p1'] }],
        [DELETE, { feature_view: 'typed', entity_ids: ['p1'] }],
      ];
      for (const round of [1, 2]) {
        for (const [path, body] of calls) {
          const res = await postJson(server, path, body);
          assert.equal(res.status, 503, `${path} (round ${round}): ${JSON.stringify(res.body)}`);
          assert.equal(res.body.error_code, 'RANKD_REDIS_UNAVAILABLE');
        }
      }
    } finally {
      await redis.restart();
    }
    assert.ok(await server.rankd.redis.waitUntilReady(15_000), 'the server reconnects');
    await upload('typed', [{ entity_id: 'back', price: 8 }]);
    assert.deepEqual((await readOne('typed', 'back')).values['typed:price'], 8);
  });
});
