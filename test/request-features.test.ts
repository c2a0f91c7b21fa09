import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import {
  defineApp,
  defineBusinessLogic,
  defineFeatureView,
  defineModel,
  defineRankingPipeline,
  defineRealtimeFeatures,
  type EntityOf,
  Feature,
  type FeatureValue,
  featureColumns,
  getFeature,
  getFeatures,
  ProductEntity,
  QueryEntity,
  type RankdRequest,
  Type,
} from '../src/index.js';
import {
  nullable,
  RedisMonitor,
  RedisStats,
  rawClient,
  sleep,
  uploadEntities,
} from './helpers/ranking-app.js';
import { startTestRedis, type TestRedis } from './helpers/redis-server.js';
import { postJson, testServer } from './helpers/server.js';

const Product = ProductEntity.extend({
  fields: { title: nullable(Type.String()), price: nullable(Type.Number()) },
});
type ProductData = EntityOf<typeof Product>;

// Stored feature views.
const Stats = defineFeatureView({
  name: 'stats',
  entity: Product,
  features: {
    ctr: Feature.float({ default: 0.5 }),
    views: Feature.integer(),
    label: Feature.string({ default: 'none' }),
    flag: Feature.boolean({ default: true }),
    emb: Feature.vector(3),
  },
});
const QueryStats = defineFeatureView({
  name: 'qstats',
  entity: QueryEntity,
  features: { popularity: Feature.float({ default: 0 }) },
});
const PairStats = defineFeatureView({
  name: 'pq',
  entity: [Product, QueryEntity],
  features: { clicks: Feature.integer({ default: 0 }) },
});
const FRESH_FEATURES = { score: Feature.float({ default: -1 }) };
/** Rows older than 60 s read as missing. */
const Fresh = defineFeatureView({ name: 'fresh', entity: Product, ttlSeconds: 60, features: FRESH_FEATURES });
/** The same view without a TTL: writes rows that Redis keeps, whatever their age. */
const FreshWithoutTtl = defineFeatureView({ name: 'fresh', entity: Product, features: FRESH_FEATURES });
const Short = defineFeatureView({
  name: 'short',
  entity: Product,
  ttlSeconds: 2,
  features: { value: Feature.float({ default: -1 }) },
});

const randomDelay = () => sleep(Math.floor(Math.random() * 6));
const numberIn = (text: string) => Number(/\d+/.exec(text)?.[0] ?? -1);
const queryOf = (request: RankdRequest) => (request.query as { query: string } | undefined)?.query ?? '';

// Real-time features: per entity (reading a stored feature), per pair, per request.
const PerProduct = defineRealtimeFeatures({
  name: 'rt_product',
  entity: Product,
  requires: ['stats:ctr'],
  features: { price_x2: Feature.float(), ctr_plus_one: Feature.float() },
  compute: (product) => ({
    price_x2: typeof product.price === 'number' ? product.price * 2 : null,
    ctr_plus_one: (getFeature(product, 'stats:ctr') as number) + 1,
  }),
});
const PerPair = defineRealtimeFeatures({
  name: 'rt_pair',
  entity: Product,
  with: QueryEntity,
  features: { tag: Feature.string(), title_match: Feature.float({ default: 0 }) },
  async compute(product, query) {
    await randomDelay();
    const title = String(product.title ?? '').toLowerCase();
    return {
      tag: `${product.product_id}|${query.query}`,
      title_match: title.includes(String(query.query)) ? 1 : null,
    };
  },
});
const PerRequest = defineRealtimeFeatures({
  name: 'rt_req',
  features: { qlen: Feature.integer(), rid: Feature.string(), qnum: Feature.integer() },
  async compute(request) {
    await randomDelay();
    return {
      qlen: queryOf(request).length,
      rid: request.request_id as string,
      qnum: numberIn(queryOf(request)),
    };
  },
});

// A pipeline whose real-time groups are split by what they read: `rt_early` lists no stored
// feature, so it runs while the feature rows are still being read; `rt_late` requires one, so it
// and `rt_after` (declared after it) run once the rows are in.
/** What `rt_early` saw when it tried to read a stored feature it did not list, by request_id. */
const earlyLookups = new Map<string, string>();
const Early = defineRealtimeFeatures({
  name: 'rt_early',
  entity: Product,
  features: { title_length: Feature.integer() },
  compute(product, request) {
    try {
      getFeature(product, 'stats:ctr');
      earlyLookups.set(request.request_id as string, 'read');
    } catch (error) {
      earlyLookups.set(request.request_id as string, (error as Error).message);
    }
    return { title_length: String(product.title ?? '').length };
  },
});
const Late = defineRealtimeFeatures({
  name: 'rt_late',
  entity: Product,
  requires: ['stats:ctr', 'rt_early:title_length'],
  features: { ctr_times_length: Feature.float() },
  compute: (product) => ({
    ctr_times_length:
      (getFeature(product, 'stats:ctr') as number) * (getFeature(product, 'rt_early:title_length') as number),
  }),
});
const AfterLate = defineRealtimeFeatures({
  name: 'rt_after',
  entity: Product,
  features: { late_plus_one: Feature.float() },
  // Lists nothing, but reads the group declared before it: it still runs after that group.
  compute: (product) => ({ late_plus_one: (getFeature(product, 'rt_late:ctr_times_length') as number) + 1 }),
});
const SplitModel = defineModel({
  name: 'SplitModel',
  entity: Product,
  features: ['rt_late:ctr_times_length', 'rt_after:late_plus_one'],
  score(products, request) {
    reads.set(request.request_id as string, {
      late: products.map((p) => getFeature(p, 'rt_late:ctr_times_length')),
      after: products.map((p) => getFeature(p, 'rt_after:late_plus_one')),
    });
    return products.map(() => 1);
  },
});

/** The request's own identifier, for per-request features. */
const requestRef = (request: RankdRequest) => ({ type: 'request', id: request.request_id as string });

// Every read the probe model makes, by request_id.
const reads = new Map<string, Record<string, unknown>>();
let extraReads: ((products: readonly ProductData[], request: RankdRequest) => void) | undefined;

const asArray = (value: FeatureValue | null) => (value instanceof Float32Array ? [...value] : value);

const ProbeModel = defineModel({
  name: 'ProbeModel',
  entity: Product,
  features: [
    'stats:ctr',
    'stats:views',
    'stats:label',
    'stats:flag',
    'stats:emb',
    'qstats:popularity',
    'pq:clicks',
    'fresh:score',
    'short:value',
    'rt_product:price_x2',
    'rt_product:ctr_plus_one',
    'rt_pair:tag',
    'rt_pair:title_match',
    'rt_req:qlen',
  ],
  score(products, request) {
    const query = request.query as object;
    const perProduct: Record<string, Record<string, unknown>> = {};
    for (const p of products) {
      const read: Record<string, unknown> = {};
      for (const name of this.features ?? []) {
        if (name.startsWith('qstats:') || name.startsWith('rt_req:')) continue;
        read[name] = asArray(getFeature(p, name));
      }
      read['pq:clicks (pair)'] = getFeature([p, query], 'pq:clicks');
      read['rt_pair:tag (pair)'] = getFeature([p, query], 'rt_pair:tag');
      read['stats:ctr (type::id)'] = getFeature(`product::${p.product_id}`, 'stats:ctr');
      read['stats:ctr ({type, id})'] = getFeature({ type: 'product', id: String(p.product_id) }, 'stats:ctr');
      perProduct[String(p.product_id)] = read;
    }
    extraReads?.(products, request);
    reads.set(request.request_id as string, {
      products: perProduct,
      query: { 'qstats:popularity': getFeature(query, 'qstats:popularity') },
      request: { 'rt_req:qlen': getFeature(requestRef(request), 'rt_req:qlen') },
      batch: getFeatures(products, ['stats:ctr', 'stats:label']),
      pairBatch: getFeatures(
        products.map((p) => [p, query] as const),
        ['pq:clicks', 'stats:ctr'],
      ),
      columns: featureColumns(products, [
        'stats:ctr',
        'stats:views',
        'stats:flag',
        'stats:label',
        'pq:clicks',
      ]).map((column) => Array.from(column)),
    });
    return products.map(() => 1);
  },
});

// A second pipeline for the concurrency test: reads per-request and pair features with awaits between.
let inFlight = 0;
let maxInFlight = 0;
const IsolationModel = defineModel({
  name: 'IsolationModel',
  entity: Product,
  features: ['rt_req:qnum', 'rt_req:rid', 'rt_pair:tag', 'stats:label'],
  async score(products, request) {
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    try {
      const seen: unknown[] = [];
      const scores: number[] = [];
      for (const [i, p] of products.entries()) {
        const qnum = getFeature(requestRef(request), 'rt_req:qnum') as number;
        await randomDelay();
        const tag = getFeature(p, 'rt_pair:tag');
        await randomDelay();
        const rid = getFeature(requestRef(request), 'rt_req:rid');
        await randomDelay();
        seen.push([qnum, tag, rid, getFeature(p, 'stats:label')]);
        scores.push(qnum * 100 + i);
      }
      reads.set(request.request_id as string, { seen });
      return scores;
    } finally {
      inFlight--;
    }
  },
});

const app = defineApp({
  name: 'features-test',
  featureViews: [Stats, QueryStats, PairStats, Fresh, Short],
  pipelines: [
    defineRankingPipeline({
      name: 'MyRankingPipeline',
      candidate: Product,
      realtimeFeatures: [PerProduct, PerPair, PerRequest],
      model: ProbeModel,
    }),
    defineRankingPipeline({
      name: 'SplitPipeline',
      path: '/split',
      candidate: Product,
      realtimeFeatures: [Early, Late, AfterLate],
      model: SplitModel,
    }),
    defineRankingPipeline({
      name: 'IsolationPipeline',
      path: '/isolation',
      candidate: Product,
      realtimeFeatures: [PerPair, PerRequest],
      model: IsolationModel,
    }),
  ],
});

let redis: TestRedis;
let server: FastifyInstance;
let raw: Awaited<ReturnType<typeof rawClient>>;
let stats: RedisStats;

before(async () => {
  redis = await startTestRedis();
  server = await testServer(redis, { app });
  raw = await rawClient(redis);
  stats = new RedisStats(raw);
  await uploadEntities(server, 'product', [
    { product_id: 'p1', title: 'Scented candle', price: 10 },
    { product_id: 'p2', title: 'Lamp', price: 25 },
    { product_id: 'p3', title: 'Mug' },
  ]);
  const now = Date.now();
  const store = server.rankd.features;
  await store.write(Stats, [
    {
      ids: ['p1'],
      values: { ctr: 0.25, views: 7, label: 'hot', flag: false, emb: [1, 2, 3] },
      eventTimestampMs: now,
    },
    // A row whose values are all missing: each reads as its default (or null).
    { ids: ['p3'], values: { ctr: null }, eventTimestampMs: now },
  ]);
  await store.write(QueryStats, [{ ids: ['candle'], values: { popularity: 0.8 }, eventTimestampMs: now }]);
  await store.write(PairStats, [
    { ids: ['p1', 'candle'], values: { clicks: 9 }, eventTimestampMs: now },
    { ids: ['p2', 'lamp'], values: { clicks: 4 }, eventTimestampMs: now },
  ]);
});

after(async () => {
  await server?.close();
  await raw?.close();
  await redis?.stop();
});

beforeEach(() => {
  extraReads = undefined;
});

let requests = 0;
async function readsOf(body: Record<string, unknown>, path = '/api/v1/ranking') {
  const request_id = `f${++requests}`;
  const res = await postJson(server, path, { request_id, ...body });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const read = reads.get(request_id);
  assert.ok(read, 'the model ran');
  // biome-ignore lint/suspicious/noExplicitAny: the probe's record, asserted field by field
  return read as any;
}
const candle = (...ids: string[]) => ({
  query: { query: 'candle' },
  candidates: ids.map((product_id) => ({ product_id })),
});

describe('stored features', () => {
  test('a stored value, its declared default when the row is missing, null when there is no default', async () => {
    const read = await readsOf(candle('p1', 'p2', 'p3'));
    const { p1, p2, p3 } = read.products;
    assert.equal(p1['stats:ctr'], 0.25);
    assert.equal(p1['stats:views'], 7);
    assert.equal(p1['stats:label'], 'hot');
    assert.equal(p1['stats:flag'], false, 'a stored false is not replaced by the default true');
    assert.deepEqual(p1['stats:emb'], [1, 2, 3]);
    // No row for p2: defaults, and null where there is none.
    assert.equal(p2['stats:ctr'], 0.5);
    assert.equal(p2['stats:views'], null);
    assert.equal(p2['stats:label'], 'none');
    assert.equal(p2['stats:flag'], true);
    assert.equal(p2['stats:emb'], null);
    // A row with missing values reads the same.
    assert.deepEqual(
      [p3['stats:ctr'], p3['stats:views'], p3['stats:label'], p3['stats:flag'], p3['stats:emb']],
      [0.5, null, 'none', true, null],
    );
  });

  test('the entity may be named by its object, "type::id" or {type, id}; getFeatures is the batch form', async () => {
    const read = await readsOf(candle('p1', 'p2'));
    assert.equal(read.products.p1['stats:ctr (type::id)'], 0.25);
    assert.equal(read.products.p1['stats:ctr ({type, id})'], 0.25);
    assert.equal(read.products.p2['stats:ctr (type::id)'], 0.5);
    assert.deepEqual(read.batch, [
      [0.25, 'hot'],
      [0.5, 'none'],
    ]);
    // Pairs, and a per-product feature read by the pair's first entity.
    assert.deepEqual(read.pairBatch, [
      [9, 0.25],
      [0, 0.5],
    ]);
  });

  test('featureColumns: one column of numbers per feature, as models read them', async () => {
    const read = await readsOf(candle('p1', 'p2'));
    assert.deepEqual(read.columns, [
      [0.25, 0.5], // stored, then the default
      [7, Number.NaN], // stored, then missing (no default)
      [0, 1], // booleans: a stored false, then the default true
      [Number.NaN, Number.NaN], // strings are not numbers
      [9, 0], // a pair view by its first entity: p2's row is for another query
    ]);
  });

  test('a query view and a product × query view: read by the product alone or by the pair', async () => {
    const read = await readsOf(candle('p1', 'p2'));
    assert.equal(read.query['qstats:popularity'], 0.8);
    assert.equal(read.products.p1['pq:clicks'], 9);
    assert.equal(read.products.p1['pq:clicks (pair)'], 9);
    // p2's row is for the query "lamp", not this one.
    assert.equal(read.products.p2['pq:clicks'], 0);
    assert.equal(read.products.p2['pq:clicks (pair)'], 0);
    const lamp = await readsOf({ query: { query: 'lamp' }, candidates: [{ product_id: 'p2' }] });
    assert.equal(lamp.products.p2['pq:clicks'], 4);
    assert.equal(lamp.query['qstats:popularity'], 0);
  });

  test('reading a pair that has no row does not change what the entity alone reads', async () => {
    let afterMiss: unknown;
    extraReads = (products) => {
      const p1 = products.find((p) => p.product_id === 'p1') as object;
      assert.equal(getFeature([p1, 'query::something else'], 'pq:clicks'), 0);
      afterMiss = getFeature(p1, 'pq:clicks');
    };
    await readsOf(candle('p1'));
    assert.equal(afterMiss, 9);
  });

  test('all stored views of a request are read with one MGET (the index has its own)', async () => {
    const monitor = await RedisMonitor.start(redis);
    try {
      await stats.reset();
      monitor.clear();
      await readsOf(candle('p1', 'p2'));
      assert.equal(await stats.calls('mget'), 2, 'one MGET for the entities, one for the features');
      const mgets = await monitor.mgets();
      const featureReads = mgets.filter((keys) => keys.some((k) => k.startsWith('default:features:')));
      assert.equal(featureReads.length, 1);
      const views = new Set(featureReads[0]?.map((k) => k.split(':')[2]));
      assert.deepEqual([...views].sort(), ['fresh', 'pq', 'qstats', 'short', 'stats']);
      assert.equal(featureReads[0]?.length, 2 + 1 + 2 + 2 + 2, 'each row key once');
    } finally {
      await monitor.stop();
    }
  });
});

describe('TTL', () => {
  test('a row older than the view’s ttlSeconds reads as missing, even while Redis still holds it', async () => {
    const now = Date.now();
    const store = server.rankd.features;
    // Written through the TTL-less twin, so Redis keeps the old row.
    await store.write(FreshWithoutTtl, [
      { ids: ['p1'], values: { score: 0.9 }, eventTimestampMs: now - 120_000 },
      { ids: ['p2'], values: { score: 0.7 }, eventTimestampMs: now - 1_000 },
    ]);
    assert.equal(await raw.pTTL('default:features:fresh:p1'), -1, 'the old row has no expiry in Redis');
    const read = await readsOf(candle('p1', 'p2'));
    assert.equal(read.products.p1['fresh:score'], -1, 'expired by its event timestamp: the default');
    assert.equal(read.products.p2['fresh:score'], 0.7);
    // Through the view with the TTL, an already expired row is not written at all.
    assert.equal(
      await store.write(Fresh, [{ ids: ['p3'], values: { score: 0.5 }, eventTimestampMs: now - 120_000 }]),
      0,
    );
    assert.equal(await raw.exists('default:features:fresh:p3'), 0);
  });

  test('a row of a view with a TTL expires in Redis by itself, then reads as its default', async () => {
    const written = Date.now();
    await server.rankd.features.write(Short, [
      { ids: ['p3'], values: { value: 0.3 }, eventTimestampMs: written },
    ]);
    const ttl = await raw.pTTL('default:features:short:p3');
    assert.ok(ttl > 0 && ttl <= 2000, `Redis expires the row (PTTL ${ttl})`);
    const fresh = await readsOf(candle('p3'));
    assert.equal(fresh.products.p3['short:value'], 0.3);
    await sleep(written + 2_100 - Date.now());
    assert.equal(await raw.exists('default:features:short:p3'), 0, 'Redis dropped the key');
    const expired = await readsOf(candle('p3'));
    assert.equal(expired.products.p3['short:value'], -1);
  });
});

describe('real-time features', () => {
  test('per entity (from hydrated fields and a stored feature), per pair and per request', async () => {
    const read = await readsOf(candle('p1', 'p2', 'p3'));
    const { p1, p2, p3 } = read.products;
    assert.equal(p1['rt_product:price_x2'], 20, 'from the hydrated price');
    assert.equal(p2['rt_product:price_x2'], 50);
    assert.equal(p3['rt_product:price_x2'], null, 'no price, no default: null');
    assert.equal(p1['rt_product:ctr_plus_one'], 1.25, 'computed from the stored ctr');
    assert.equal(p2['rt_product:ctr_plus_one'], 1.5, 'computed from the default ctr');
    for (const [id, p] of Object.entries(read.products) as Array<[string, Record<string, unknown>]>) {
      assert.equal(p['rt_pair:tag'], `${id}|candle`);
      assert.equal(p['rt_pair:tag (pair)'], `${id}|candle`);
    }
    assert.equal(p1['rt_pair:title_match'], 1);
    assert.equal(p2['rt_pair:title_match'], 0, 'computed null: the default');
    assert.equal(read.request['rt_req:qlen'], 'candle'.length);
  });

  test('groups that list no stored feature run before the rows are in; the rest, in declared order, after', async () => {
    const read = await readsOf(candle('p1', 'p2'), '/api/v1/split');
    const request_id = `f${requests}`;
    // p1: ctr 0.25 stored, title "Scented candle" (14); p2: no row, default ctr 0.5, "Lamp" (4).
    assert.deepEqual(read.late, [0.25 * 14, 0.5 * 4], 'rt_late read the stored rows and rt_early');
    assert.deepEqual(read.after, [0.25 * 14 + 1, 0.5 * 4 + 1], 'rt_after ran after rt_late');
    const lookup = earlyLookups.get(request_id) ?? '';
    assert.match(lookup, /"stats:ctr" is stored, and was read before the stored features arrived/);
    assert.match(lookup, /`requires`/, 'the message says what to change');
  });

  test('getFeature outside a request is an error that says so', () => {
    assert.throws(() => getFeature('product::p1', 'stats:ctr'), /getFeature works only inside pipeline code/);
  });
});

describe('declared features are checked at start', () => {
  const pipelineWith = (options: { model?: string[]; requires?: string[]; step?: string[] }) =>
    defineApp({
      featureViews: [Stats],
      pipelines: [
        defineRankingPipeline({
          name: 'CheckedPipeline',
          candidate: Product,
          realtimeFeatures: [
            defineRealtimeFeatures({
              name: 'rt_checked',
              entity: Product,
              requires: options.requires ?? [],
              features: { one: Feature.float() },
              compute: () => ({ one: 1 }),
            }),
          ],
          model: defineModel({ name: 'ScoreModel', features: options.model ?? [], score: () => [] }),
          businessLogic: [
            defineBusinessLogic({ name: 'PinStep', features: options.step ?? [], apply: (c) => c }),
          ],
        }),
      ],
    });

  test('known names pass', () => {
    assert.doesNotThrow(() =>
      pipelineWith({
        model: ['stats:ctr', 'rt_checked:one'],
        requires: ['stats:label'],
        step: ['stats:flag'],
      }),
    );
  });

  test('an unknown feature of a known view names the component, the view and the feature', () => {
    assert.throws(
      () => pipelineWith({ model: ['stats:nope'] }),
      (error: Error) =>
        /CheckedPipeline/.test(error.message) &&
        /ScoreModel/.test(error.message) &&
        /stats has no feature nope/.test(error.message),
    );
  });

  test('an unknown view or group names the component', () => {
    assert.throws(
      () => pipelineWith({ step: ['nostats:ctr'] }),
      (error: Error) => /PinStep/.test(error.message) && /nostats/.test(error.message),
    );
    assert.throws(
      () => pipelineWith({ requires: ['stats:missing'] }),
      (error: Error) => /rt_checked/.test(error.message) && /missing/.test(error.message),
    );
  });

  test('a name without a group names the component', () => {
    assert.throws(
      () => pipelineWith({ model: ['ctr'] }),
      (error: Error) => /ScoreModel/.test(error.message) && /group:feature/.test(error.message),
    );
  });
});

describe('request isolation', () => {
  test('50 concurrent requests each read only their own features', async () => {
    reads.clear();
    maxInFlight = 0;
    const ids = ['p1', 'p2', 'p3'];
    const responses = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        postJson(server, '/api/v1/isolation', {
          request_id: `iso-${i}`,
          query: { query: `q${i}` },
          candidates: ids.map((product_id) => ({ product_id })),
        }),
      ),
    );
    assert.ok(maxInFlight > 1, 'requests overlapped inside the model');
    for (const [i, res] of responses.entries()) {
      assert.equal(res.status, 200, JSON.stringify(res.body));
      // Score = own query number × 100 + position: descending means the reverse order.
      assert.deepEqual(
        res.body.ranked_candidates,
        [2, 1, 0].map((j) => ({ candidate_id: ids[j], ranked_score: i * 100 + j })),
      );
      assert.deepEqual(
        reads.get(`iso-${i}`)?.seen,
        ids.map((id) => [i, `${id}|q${i}`, `iso-${i}`, id === 'p1' ? 'hot' : 'none']),
      );
    }
  });
});
