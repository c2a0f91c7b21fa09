/**
 * A ranking request whose model uses stored features from two product views (product_stats,
 * product_sales) and the similarity between the request's user's embedding (user_profile) and each
 * product's, computed in a product × user real-time group. The expected order is computed here from
 * the uploaded data. Also: a product without rows gets the views' defaults, a user without a profile
 * gets the similarity's default, and the request reads every feature row with one MGET.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import {
  defineApp,
  defineFeatureView,
  defineModel,
  defineRankingPipeline,
  defineRealtimeFeatures,
  embeddingSimilarity,
  Feature,
  type FeatureValue,
  getFeature,
  ProductEntity,
  Type,
  UserEntity,
} from '../src/index.js';
import { groupKeys } from '../src/redis/batches.js';
import { hashSlot } from '../src/redis/hash-slot.js';
import { nullable, RedisStats, uploadEntities } from './helpers/ranking-app.js';
import { RawRedis, TEST_KEYS } from './helpers/raw-redis.js';
import { startTestRedis, TEST_REDIS_MODE, type TestRedis } from './helpers/redis-server.js';
import { postJson, testServer } from './helpers/server.js';

const Product = ProductEntity.extend({ fields: { title: nullable(Type.String()) } });

const ProductStats = defineFeatureView({
  name: 'product_stats',
  entity: Product,
  features: {
    ctr_7d: Feature.float({ default: 0.01 }),
    purchases_15d: Feature.integer({ default: 0 }),
    embedding: Feature.vector(4),
  },
});
const ProductSales = defineFeatureView({
  name: 'product_sales',
  entity: Product,
  features: {
    revenue_30d: Feature.float({ default: 0 }),
    tier: Feature.string({ default: 'standard' }),
  },
});
const UserProfile = defineFeatureView({
  name: 'user_profile',
  entity: UserEntity,
  features: { embedding: Feature.vector(4), segment: Feature.string({ default: 'unknown' }) },
});

const Affinity = defineRealtimeFeatures({
  name: 'affinity',
  entity: Product,
  with: UserEntity,
  requires: ['user_profile:embedding', 'product_stats:embedding'],
  features: { cosine: Feature.float({ default: 0 }) },
  compute: (product, user) => ({
    cosine: embeddingSimilarity(user, 'user_profile:embedding', product, 'product_stats:embedding'),
  }),
});

const MODEL_FEATURES = [
  'product_stats:ctr_7d',
  'product_stats:purchases_15d',
  'product_stats:embedding',
  'product_sales:revenue_30d',
  'product_sales:tier',
  'affinity:cosine',
];

/** What the model read, per request and product. */
const reads = new Map<string, Record<string, Record<string, unknown>>>();
const asJson = (value: FeatureValue | null) => (value instanceof Float32Array ? [...value] : value);

/** The model's formula; the test computes the same from the uploaded data. */
function formula(f: {
  ctr: number;
  purchases: number;
  revenue: number;
  tier: string;
  cosine: number;
}): number {
  return (
    10 * f.ctr + 0.01 * f.purchases + 0.001 * f.revenue + (f.tier === 'premium' ? 0.5 : 0) + 2 * f.cosine
  );
}

const AffinityModel = defineModel({
  name: 'AffinityModel',
  entity: Product,
  features: MODEL_FEATURES,
  score(products, request) {
    const read: Record<string, Record<string, unknown>> = {};
    const scores = products.map((product) => {
      const values = Object.fromEntries(MODEL_FEATURES.map((name) => [name, getFeature(product, name)]));
      read[String(product.product_id)] = Object.fromEntries(
        Object.entries(values).map(([name, value]) => [name, asJson(value)]),
      );
      return formula({
        ctr: values['product_stats:ctr_7d'] as number,
        purchases: values['product_stats:purchases_15d'] as number,
        revenue: values['product_sales:revenue_30d'] as number,
        tier: values['product_sales:tier'] as string,
        cosine: values['affinity:cosine'] as number,
      });
    });
    reads.set(request.request_id as string, read);
    return scores;
  },
});

const app = defineApp({
  name: 'ranking-features',
  featureViews: [ProductStats, ProductSales, UserProfile],
  pipelines: [
    defineRankingPipeline({
      name: 'AffinityRanking',
      candidate: Product,
      entities: { user: UserEntity },
      realtimeFeatures: [Affinity],
      model: AffinityModel,
    }),
  ],
});

// The data, uploaded through the HTTP API. p5 has no row in either view, p6 none in product_sales.
const STATS: Record<string, { ctr_7d: number; purchases_15d: number; embedding: number[] }> = {
  p1: { ctr_7d: 0.05, purchases_15d: 10, embedding: [0.9, 0.1, 0, 0] },
  p2: { ctr_7d: 0.2, purchases_15d: 2, embedding: [0, 1, 0, 0] },
  p3: { ctr_7d: 0.1, purchases_15d: 30, embedding: [0.5, 0.5, 0.5, 0.5] },
  p4: { ctr_7d: 0.02, purchases_15d: 0, embedding: [-1, 0.2, 0, 0] },
  p6: { ctr_7d: 0.15, purchases_15d: 1, embedding: [0.3, 0.3, 0.9, 0.1] },
};
const SALES: Record<string, { revenue_30d: number; tier: string }> = {
  p1: { revenue_30d: 100, tier: 'standard' },
  p2: { revenue_30d: 50, tier: 'premium' },
  p3: { revenue_30d: 900, tier: 'standard' },
  p4: { revenue_30d: 20, tier: 'premium' },
};
const PROFILES: Record<string, number[]> = {
  u1: [1, 0, 0, 0],
  u2: [0.1, 1, 0.2, 0],
};
const PRODUCTS = ['p1', 'p2', 'p3', 'p4', 'p5', 'p6'];

/** Cosine of the vectors as stored (32-bit floats), written out here rather than imported. */
function storedCosine(a: number[] | undefined, b: number[] | undefined): number | null {
  if (!a || !b) return null;
  const fa = a.map(Math.fround);
  const fb = b.map(Math.fround);
  let ab = 0;
  let aa = 0;
  let bb = 0;
  for (let i = 0; i < fa.length; i++) {
    ab += (fa[i] as number) * (fb[i] as number);
    aa += (fa[i] as number) ** 2;
    bb += (fb[i] as number) ** 2;
  }
  return ab / Math.sqrt(aa * bb);
}

/** The score of `product` for `user` from the uploaded data and the declared defaults. */
function expectedScore(product: string, user: string): number {
  return formula({
    ctr: STATS[product]?.ctr_7d ?? 0.01,
    purchases: STATS[product]?.purchases_15d ?? 0,
    revenue: SALES[product]?.revenue_30d ?? 0,
    tier: SALES[product]?.tier ?? 'standard',
    cosine: storedCosine(PROFILES[user], STATS[product]?.embedding) ?? 0,
  });
}

/** Ids by descending value; ties keep the request order, as the pipeline's stable sort does. */
const byDescending = (ids: string[], value: (id: string) => number) =>
  ids
    .map((id, i) => ({ id, i, v: value(id) }))
    .sort((a, b) => b.v - a.v || a.i - b.i)
    .map((x) => x.id);

let redis: TestRedis;
let server: FastifyInstance;
let raw: RawRedis;

async function uploadFeatures(feature_view: string, rows: Array<Record<string, unknown>>) {
  const res = await postJson(server, '/api/v1/features/upload', { feature_view, rows });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.written, rows.length);
}

before(async () => {
  redis = await startTestRedis();
  // Events off: the sink's MEMORY USAGE of its stream would count as a keyspace hit here.
  server = await testServer(redis, { app, env: { EVENTS_SINK: 'off' } });
  raw = await RawRedis.connect(redis);
  await uploadEntities(
    server,
    'product',
    PRODUCTS.map((product_id) => ({ product_id, title: `Product ${product_id}` })),
  );
  await uploadFeatures(
    'product_stats',
    Object.entries(STATS).map(([entity_id, row]) => ({ entity_id, ...row })),
  );
  await uploadFeatures(
    'product_sales',
    Object.entries(SALES).map(([entity_id, row]) => ({ entity_id, ...row })),
  );
  await uploadFeatures(
    'user_profile',
    Object.entries(PROFILES).map(([entity_id, embedding]) => ({ entity_id, embedding, segment: 'fans' })),
  );
});

after(async () => {
  await server?.close();
  await raw?.close();
  await redis?.stop();
});

let requests = 0;
async function rank(user: string | undefined, products = PRODUCTS) {
  const request_id = `rf-${++requests}`;
  const res = await postJson(server, '/api/v1/ranking', {
    request_id,
    ...(user === undefined ? {} : { user: { user_id: user } }),
    candidates: products.map((product_id) => ({ product_id })),
  });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const read = reads.get(request_id);
  assert.ok(read, 'the model ran');
  return {
    ranked: res.body.ranked_candidates as Array<{ candidate_id: string; ranked_score: number }>,
    read,
  };
}

function assertRanking(
  ranked: Array<{ candidate_id: string; ranked_score: number }>,
  user: string,
  products = PRODUCTS,
): void {
  const expected = byDescending(products, (p) => expectedScore(p, user));
  assert.deepEqual(
    ranked.map((c) => c.candidate_id),
    expected,
  );
  for (const c of ranked) {
    const score = expectedScore(c.candidate_id, user);
    assert.ok(
      Math.abs(c.ranked_score - score) < 1e-9,
      `${user} × ${c.candidate_id}: ${c.ranked_score} ≠ ${score}`,
    );
  }
}

describe('a model on two stored views and an embedding similarity', () => {
  test('the data makes every part of the score matter (else the order would prove little)', () => {
    const order = byDescending(PRODUCTS, (p) => expectedScore(p, 'u1'));
    assert.notDeepEqual(
      order,
      byDescending(PRODUCTS, (p) => STATS[p]?.ctr_7d ?? 0.01),
      'not by ctr alone',
    );
    assert.notDeepEqual(
      order,
      byDescending(PRODUCTS, (p) => storedCosine(PROFILES.u1, STATS[p]?.embedding) ?? 0),
      'not by similarity alone',
    );
    assert.notDeepEqual(
      order,
      byDescending(PRODUCTS, (p) => expectedScore(p, 'nobody')),
      'not without the similarity',
    );
    assert.notDeepEqual(
      order,
      byDescending(PRODUCTS, (p) => expectedScore(p, 'u2')),
      'users differ',
    );
  });

  test('user u1: the order and scores computed from the uploaded rows', async () => {
    const { ranked } = await rank('u1');
    assertRanking(ranked, 'u1');
  });

  test('user u2 ranks the same candidates differently, by its own embedding', async () => {
    const { ranked } = await rank('u2');
    assertRanking(ranked, 'u2');
  });

  test('the order does not depend on the order of the candidates', async () => {
    const shuffled = ['p6', 'p4', 'p2', 'p5', 'p3', 'p1'];
    const { ranked } = await rank('u1', shuffled);
    assertRanking(ranked, 'u1', shuffled);
  });

  test('the model reads the stored values, the similarity computed from 32-bit embeddings', async () => {
    const { read } = await rank('u1');
    assert.deepEqual(read.p3, {
      'product_stats:ctr_7d': 0.1,
      'product_stats:purchases_15d': 30,
      'product_stats:embedding': [0.5, 0.5, 0.5, 0.5],
      'product_sales:revenue_30d': 900,
      'product_sales:tier': 'standard',
      'affinity:cosine': 0.5,
    });
    assert.deepEqual(read.p1?.['product_stats:embedding'], [0.9, 0.1, 0, 0].map(Math.fround));
    const cosine = read.p1?.['affinity:cosine'] as number;
    assert.ok(Math.abs(cosine - (storedCosine(PROFILES.u1, STATS.p1?.embedding) as number)) < 1e-12);
    assert.ok(cosine > 0.99 && cosine < 1, `p1 is close to u1: ${cosine}`);
  });

  test('a product with no stored rows reads both views’ defaults; one with a row in one view, that view only', async () => {
    const { read } = await rank('u1');
    assert.deepEqual(read.p5, {
      'product_stats:ctr_7d': 0.01,
      'product_stats:purchases_15d': 0,
      'product_stats:embedding': null,
      'product_sales:revenue_30d': 0,
      'product_sales:tier': 'standard',
      'affinity:cosine': 0,
    });
    assert.deepEqual(read.p6, {
      'product_stats:ctr_7d': 0.15,
      'product_stats:purchases_15d': 1,
      'product_stats:embedding': [0.3, 0.3, 0.9, 0.1].map(Math.fround),
      'product_sales:revenue_30d': 0,
      'product_sales:tier': 'standard',
      'affinity:cosine': storedCosine(PROFILES.u1, STATS.p6?.embedding),
    });
  });

  test('a user without a profile row, or no user at all: the similarity is its default', async () => {
    const unknown = await rank('u-unknown');
    assertRanking(unknown.ranked, 'u-unknown');
    for (const product of PRODUCTS) assert.equal(unknown.read[product]?.['affinity:cosine'], 0, product);
    const anonymous = await rank(undefined);
    assertRanking(anonymous.ranked, 'u-unknown');
  });

  test('one MGET for the entities and one for every feature row of the three views, nothing else read', async () => {
    const stats = new RedisStats(raw);
    await stats.reset();
    const { ranked } = await rank('u1');
    assertRanking(ranked, 'u1');
    // On a cluster, each of the two is one MGET per hash slot (all sent at once).
    const entityKeys = [
      ...PRODUCTS.map((id) => TEST_KEYS.entity('product', id)),
      TEST_KEYS.entity('user', 'u1'),
    ];
    const rowKeys = [
      ...['product_stats', 'product_sales'].flatMap((view) =>
        PRODUCTS.map((id) => TEST_KEYS.featureRow(view, [id], 'product')),
      ),
      TEST_KEYS.featureRow('user_profile', ['u1'], 'user'),
    ];
    const perRead = (keys: string[]) => (TEST_REDIS_MODE === 'single' ? 1 : groupKeys(keys, hashSlot).length);
    assert.equal(
      await stats.calls('mget'),
      perRead(entityKeys) + perRead(rowKeys),
      'one MGET for the entities, one for the features',
    );
    for (const command of ['get', 'hmget', 'hget', 'exists', 'scan'])
      assert.equal(await stats.calls(command), 0, `no ${command}`);
    // Entities: 6 products found, the user not in the index. Feature rows: 5 product_stats rows
    // (not p5), 4 product_sales rows (not p5, p6) and u1's profile.
    assert.deepEqual(await stats.keyspace(), { hits: 6 + 5 + 4 + 1, misses: 1 + 1 + 2 });
  });
});
