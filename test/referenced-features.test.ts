/**
 * Stored features of entities that hydration finds by reference (product → brand): their rows are
 * read after hydration, in one more MGET holding only the rows not read yet, and a request whose
 * entities reference nothing new reads its rows with the one MGET that goes out with hydration.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import {
  defineApp,
  defineEntity,
  defineFeatureView,
  defineModel,
  defineRankingPipeline,
  Feature,
  getFeature,
  ProductEntity,
  Type,
} from '../src/index.js';
import { nullable, RedisMonitor, uploadEntities } from './helpers/ranking-app.js';
import { startTestRedis, type TestRedis } from './helpers/redis-server.js';
import { postJson, testServer } from './helpers/server.js';

const Brand = defineEntity({ name: 'brand', fields: { name: nullable(Type.String()) } });
const Product = ProductEntity.extend({
  fields: { brand_id: nullable(Type.String()) },
  references: { brand_id: { entity: Brand, as: 'brand' } },
});
const ProductStats = defineFeatureView({
  name: 'product_stats',
  entity: Product,
  features: { ctr: Feature.float({ default: -1 }) },
});
const BrandStats = defineFeatureView({
  name: 'brand_stats',
  entity: Brand,
  features: { rating: Feature.float({ default: -1 }) },
});

/** What the model read, by request_id: per product, its ctr and its brand's rating. */
const reads = new Map<string, Record<string, [ctr: unknown, brandRating: unknown]>>();

const ProbeModel = defineModel({
  name: 'ProbeModel',
  entity: Product,
  features: ['product_stats:ctr', 'brand_stats:rating'],
  score(products, request) {
    const seen: Record<string, [unknown, unknown]> = {};
    for (const product of products) {
      const brand = product.brand as object | undefined;
      seen[String(product.product_id)] = [
        getFeature(product, 'product_stats:ctr'),
        brand === undefined ? 'no brand' : getFeature(brand, 'brand_stats:rating'),
      ];
    }
    reads.set(request.request_id as string, seen);
    return products.map(() => 1);
  },
});

const app = defineApp({
  name: 'referenced-features-test',
  entities: [Product, Brand],
  featureViews: [ProductStats, BrandStats],
  pipelines: [
    defineRankingPipeline({
      name: 'MyRankingPipeline',
      candidate: Product,
      entities: { featured_brand: Brand },
      model: ProbeModel,
    }),
  ],
});

let redis: TestRedis;
let server: FastifyInstance;
let monitor: RedisMonitor;

before(async () => {
  redis = await startTestRedis();
  server = await testServer(redis, { app });
  monitor = await RedisMonitor.start(redis);
  await uploadEntities(server, 'brand', [
    { brand_id: 'b1', name: 'Acme' },
    { brand_id: 'b2', name: 'Zed' },
  ]);
  await uploadEntities(server, 'product', [
    { product_id: 'p1', brand_id: 'b1' },
    { product_id: 'p2', brand_id: 'b2' },
    { product_id: 'p3' },
  ]);
  const now = Date.now();
  await server.rankd.features.write(ProductStats, [
    { ids: ['p1'], values: { ctr: 0.1 }, eventTimestampMs: now },
    { ids: ['p2'], values: { ctr: 0.2 }, eventTimestampMs: now },
    { ids: ['p3'], values: { ctr: 0.3 }, eventTimestampMs: now },
  ]);
  await server.rankd.features.write(BrandStats, [
    { ids: ['b1'], values: { rating: 4.5 }, eventTimestampMs: now },
    { ids: ['b2'], values: { rating: 3.5 }, eventTimestampMs: now },
  ]);
});

after(async () => {
  await monitor?.stop();
  await server?.close();
  await redis?.stop();
});

beforeEach(() => monitor.clear());

let requests = 0;
/** Ranks and returns what the model read, and the feature-row MGETs Redis saw (their keys' view:id). */
async function rank(body: Record<string, unknown>) {
  const request_id = `r${++requests}`;
  const res = await postJson(server, '/api/v1/ranking', { request_id, user_page_size: 10, ...body });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const read = reads.get(request_id);
  assert.ok(read, 'the model ran');
  const rowReads = (await monitor.mgets())
    .filter((keys) => keys.some((key) => key.startsWith('default:features:')))
    .map((keys) => keys.map((key) => key.split(':').slice(2).join(':')).sort());
  return { read, rowReads };
}

describe('stored features of referenced entities', () => {
  test("a referenced brand's rows are read after hydration, only the rows not read with the first MGET", async () => {
    const { read, rowReads } = await rank({
      candidates: [{ product_id: 'p1' }, { product_id: 'p2' }],
      featured_brand: { brand_id: 'b1' },
    });
    assert.deepEqual(read, { p1: [0.1, 4.5], p2: [0.2, 3.5] });
    // b1 is the request's own (featured_brand): read with the products. b2 only by reference.
    assert.deepEqual(rowReads, [
      ['brand_stats:b1', 'product_stats:p1', 'product_stats:p2'],
      ['brand_stats:b2'],
    ]);
  });

  test('products whose brands the request already holds need no second read', async () => {
    const { read, rowReads } = await rank({
      candidates: [{ product_id: 'p1' }, { product_id: 'p3' }],
      featured_brand: { brand_id: 'b1' },
    });
    assert.deepEqual(read, { p1: [0.1, 4.5], p3: [0.3, 'no brand'] });
    assert.deepEqual(rowReads, [['brand_stats:b1', 'product_stats:p1', 'product_stats:p3']]);
  });

  test('a stored reference whose id has an unpaired surrogate reads neither the entity nor its rows', async () => {
    // In UTF-8 "\ud800B" is "\ufffdB": that brand and its rows exist, and must not be taken.
    await uploadEntities(server, 'brand', [{ brand_id: '\ufffdB', name: 'Impostor' }]);
    await uploadEntities(server, 'product', [{ product_id: 'p4', brand_id: '\ud800B' }]);
    const now = Date.now();
    await server.rankd.features.write(BrandStats, [
      { ids: ['\ufffdB'], values: { rating: 9.9 }, eventTimestampMs: now },
    ]);
    await server.rankd.features.write(ProductStats, [
      { ids: ['p4'], values: { ctr: 0.4 }, eventTimestampMs: now },
    ]);
    monitor.clear();
    const { read, rowReads } = await rank({ candidates: [{ product_id: 'p4' }, { product_id: 'p2' }] });
    // p4's brand is not found: the rating's default, not the impostor's 9.9.
    assert.deepEqual(read, { p4: [0.4, -1], p2: [0.2, 3.5] });
    assert.deepEqual(rowReads, [['product_stats:p2', 'product_stats:p4'], ['brand_stats:b2']]);
  });

  test('a request without references reads its rows with one MGET', async () => {
    const { read, rowReads } = await rank({ candidates: [{ product_id: 'p3' }] });
    assert.deepEqual(read, { p3: [0.3, 'no brand'] });
    assert.deepEqual(rowReads, [['product_stats:p3']]);
  });
});
