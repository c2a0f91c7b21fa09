import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import {
  defineApp,
  defineBusinessLogic,
  defineEntity,
  defineModel,
  defineRankingPipeline,
  defineSingleEntityPipeline,
  type EntityOf,
  type ScoredCandidate,
  type Scores,
  Type,
} from '../src/index.js';
import { nullable, TemplateProduct, uploadEntities } from './helpers/ranking-app.js';
import { startTestRedis, type TestRedis } from './helpers/redis-server.js';
import { postJson, testServer } from './helpers/server.js';

type Product = EntityOf<typeof TemplateProduct>;

// The model and business-logic steps delegate to these, so each test decides how they score.
const byPrice = (products: readonly Product[]): Scores => products.map((p) => p.price as number);
let scoreWith: (products: readonly Product[]) => Scores = byPrice;
type Step = (candidates: Array<ScoredCandidate>) => Array<ScoredCandidate>;
const identity: Step = (candidates) => candidates;
let boostStep: Step = identity;
let demoteStep: Step = identity;
/** What each business-logic step received: ids and scores, in the order given. */
let received: Array<{ step: string; ids: string[]; scores: number[] }> = [];

const record = (step: string, candidates: ScoredCandidate[]) =>
  received.push({ step, ids: candidates.map((c) => c.id), scores: candidates.map((c) => c.score) });

const PriceModel = defineModel({
  name: 'PriceModel',
  version: '1.2',
  entity: TemplateProduct,
  score: (products) => scoreWith(products),
});

const Boost = defineBusinessLogic({
  name: 'Boost',
  entity: TemplateProduct,
  apply(candidates) {
    record('Boost', candidates);
    return boostStep(candidates);
  },
});

const Demote = defineBusinessLogic({
  name: 'Demote',
  entity: TemplateProduct,
  apply(candidates) {
    record('Demote', candidates);
    return demoteStep(candidates);
  },
});

const MyRankingPipeline = defineRankingPipeline({
  name: 'MyRankingPipeline',
  path: '/ranking',
  candidate: TemplateProduct,
  model: PriceModel,
  businessLogic: [Boost, Demote],
});

// A second ranking pipeline, declared with a path without a leading slash.
const PopularPipeline = defineRankingPipeline({
  name: 'PopularPipeline',
  path: 'popular',
  candidate: TemplateProduct,
  model: defineModel({
    name: 'StockModel',
    entity: TemplateProduct,
    score: (products) => products.map((p) => p.number_in_stock as number),
  }),
});

const Order = defineEntity({
  name: 'order',
  fields: { amount: nullable(Type.Number()), country: nullable(Type.String()) },
});

const FraudPipeline = defineSingleEntityPipeline({
  name: 'FraudPipeline',
  path: '/fraud',
  entity: Order,
  model: defineModel({
    name: 'FraudModel',
    entity: Order,
    // No amount: NaN, which the pipeline turns into 0.
    score: (orders) =>
      orders.map((o) =>
        typeof o.amount === 'number' ? o.amount / 100 + (o.country === 'US' ? 0 : 0.5) : Number.NaN,
      ),
  }),
});

const app = defineApp({
  name: 'ranking-test',
  entities: [TemplateProduct, Order],
  pipelines: [MyRankingPipeline, PopularPipeline, FraudPipeline],
});

/** 24 products with distinct prices and stocks, in an order unrelated to their ids. */
const PRODUCTS = Array.from({ length: 24 }, (_, i) => ({
  product_id: `p${String(i).padStart(2, '0')}`,
  title: `Product ${i}`,
  price: ((i * 11) % 24) + 0.5,
  number_in_stock: (i * 5) % 24,
}));
const priceOf = new Map(PRODUCTS.map((p) => [p.product_id, p.price]));

/** Ids sorted by a value, highest first (computed here, independently of rankd). */
function highestFirst(ids: readonly string[], value: (id: string) => number): string[] {
  const copy = [...ids];
  for (let i = 1; i < copy.length; i++) {
    for (let j = i; j > 0 && value(copy[j] as string) > value(copy[j - 1] as string); j--) {
      [copy[j - 1], copy[j]] = [copy[j] as string, copy[j - 1] as string];
    }
  }
  return copy;
}

let redis: TestRedis;
let server: FastifyInstance;

before(async () => {
  redis = await startTestRedis();
  server = await testServer(redis, { app });
  await uploadEntities(server, 'product', PRODUCTS);
});

after(async () => {
  await server?.close();
  await redis?.stop();
});

beforeEach(() => {
  scoreWith = byPrice;
  boostStep = identity;
  demoteStep = identity;
  received = [];
});

const rank = (body: Record<string, unknown>, path = '/api/v1/ranking') =>
  postJson(server, path, { request_id: 'r1', query: { query: 'candle' }, ...body });

// Candidates in request order: the ids reversed, so neither id order nor index order is the answer.
const REQUEST_IDS = PRODUCTS.map((p) => p.product_id).reverse();
const ONLY_IDS = REQUEST_IDS.map((product_id) => ({ product_id }));

describe('the spec 4.4.3 example', () => {
  test('24 candidates with only product_id, page size 8 → the 8 highest scores, descending, from hydrated data', async () => {
    const res = await rank({
      candidates: ONLY_IDS,
      user_page_size: 8,
      user_page: 0,
      candidate_page_size: 24,
      candidate_page: 0,
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(Object.keys(res.body), ['ranked_candidates']);
    const ranked = res.body.ranked_candidates as Array<{ candidate_id: string; ranked_score: number }>;
    assert.equal(ranked.length, 8);
    const expected = highestFirst(REQUEST_IDS, (id) => priceOf.get(id) as number).slice(0, 8);
    assert.deepEqual(
      ranked,
      expected.map((id) => ({ candidate_id: id, ranked_score: priceOf.get(id) })),
    );
    // The scores came from the index: the candidates carried no price.
    assert.deepEqual(
      ranked.map((r) => r.ranked_score),
      [23.5, 22.5, 21.5, 20.5, 19.5, 18.5, 17.5, 16.5],
    );
    for (let i = 1; i < ranked.length; i++)
      assert.ok((ranked[i - 1]?.ranked_score ?? 0) >= (ranked[i]?.ranked_score ?? 0));
    for (const r of ranked) assert.ok(REQUEST_IDS.includes(r.candidate_id));
  });

  test('user pages 0, 1 and 2 of the same candidates together hold every candidate once, in order', async () => {
    const pages = [];
    for (const user_page of [0, 1, 2]) {
      const res = await rank({ candidates: ONLY_IDS, user_page_size: 8, user_page, candidate_page_size: 24 });
      assert.equal(res.status, 200);
      pages.push(...res.body.ranked_candidates.map((r: { candidate_id: string }) => r.candidate_id));
    }
    assert.deepEqual(
      pages,
      highestFirst(REQUEST_IDS, (id) => priceOf.get(id) as number),
    );
  });
});

describe('scores', () => {
  test('a candidate missing from the index is ranked with what it sent', async () => {
    const res = await rank({
      candidates: [
        { product_id: 'p00' },
        { product_id: 'ghost', price: 1000 },
        { product_id: 'p01' },
        { product_id: 'ghost_without_price' },
      ],
      user_page_size: 4,
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body.ranked_candidates, [
      { candidate_id: 'ghost', ranked_score: 1000 },
      { candidate_id: 'p01', ranked_score: 11.5 },
      { candidate_id: 'p00', ranked_score: 0.5 },
      { candidate_id: 'ghost_without_price', ranked_score: 0 },
    ]);
  });

  test('no score, null, NaN or Infinity from the model ranks the candidate with 0 (above negative scores)', async () => {
    const special: Record<string, number | null | undefined> = {
      minus_one: -1,
      is_null: null,
      five: 5,
      is_nan: Number.NaN,
      is_undefined: undefined,
      is_infinite: Number.POSITIVE_INFINITY,
      minus_two: -2,
    };
    const ids = [...Object.keys(special), 'beyond_the_array'];
    // The model answers one score fewer than there are candidates: the last has no score at all.
    scoreWith = (products) => products.slice(0, -1).map((p) => special[p.product_id as string]);
    const res = await rank({ candidates: ids.map((product_id) => ({ product_id })), user_page_size: 10 });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body.ranked_candidates, [
      { candidate_id: 'five', ranked_score: 5 },
      { candidate_id: 'is_null', ranked_score: 0 },
      { candidate_id: 'is_nan', ranked_score: 0 },
      { candidate_id: 'is_undefined', ranked_score: 0 },
      { candidate_id: 'is_infinite', ranked_score: 0 },
      { candidate_id: 'beyond_the_array', ranked_score: 0 },
      { candidate_id: 'minus_one', ranked_score: -1 },
      { candidate_id: 'minus_two', ranked_score: -2 },
    ]);
  });

  test('equal scores keep the request order (stable sort)', async () => {
    const scoreOf: Record<string, number> = {
      a: 1,
      b: 3,
      c: 1,
      d: 2,
      e: 3,
      f: 1,
      g: 2,
      h: 3,
      i: 1,
      j: 2,
      k: 3,
      l: 1,
    };
    const ids = Object.keys(scoreOf);
    scoreWith = (products) => products.map((p) => scoreOf[p.product_id as string]);
    const res = await rank({ candidates: ids.map((product_id) => ({ product_id })), user_page_size: 12 });
    assert.equal(res.status, 200);
    // Expected: for each score, highest first, the ids with that score in request order.
    const expected = [3, 2, 1].flatMap((s) => ids.filter((id) => scoreOf[id] === s));
    assert.deepEqual(
      res.body.ranked_candidates.map((r: { candidate_id: string }) => r.candidate_id),
      expected,
    );
    assert.deepEqual(expected, ['b', 'e', 'h', 'k', 'd', 'g', 'j', 'a', 'c', 'f', 'i', 'l']);
  });

  test('business logic: each step gets the candidates sorted descending; the list is re-sorted after each step', async () => {
    const ids = ['p03', 'p00', 'p10', 'p07', 'p12', 'p05'];
    const byPriceDesc = highestFirst(ids, (id) => priceOf.get(id) as number);
    const top = byPriceDesc[0] as string;
    // Boost lifts the cheapest to the top; Demote sinks the most expensive below everything.
    boostStep = (cands) => cands.map((c) => (c.id === 'p00' ? { ...c, score: c.score + 100 } : c));
    demoteStep = (cands) => cands.map((c) => (c.id === top ? { ...c, score: c.score - 50 } : c));
    const res = await rank({
      candidates: ids.map((product_id) => ({ product_id })),
      user_page_size: 6,
      include_events: true,
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));

    assert.deepEqual(
      received.map((r) => r.step),
      ['Boost', 'Demote'],
    );
    assert.deepEqual(received[0]?.ids, byPriceDesc, 'the first step gets them sorted, not in request order');
    assert.deepEqual(
      received[0]?.scores,
      byPriceDesc.map((id) => priceOf.get(id)),
    );
    assert.deepEqual(received[1]?.ids, ['p00', ...byPriceDesc.filter((id) => id !== 'p00')]);
    assert.equal(received[1]?.scores[0], 100.5);

    const final = ['p00', ...byPriceDesc.filter((id) => id !== 'p00' && id !== top), top];
    assert.deepEqual(
      res.body.ranked_candidates.map((r: { candidate_id: string }) => r.candidate_id),
      final,
    );
    assert.equal(res.body.ranked_candidates[5].ranked_score, (priceOf.get(top) as number) - 50);

    const changes = res.body.events.filter((e: { event_type: string }) => e.event_type === 'BUSINESS_LOGIC');
    assert.deepEqual(
      changes.map((e: { event_data: unknown }) => e.event_data),
      [
        {
          entity_identifier: 'p00',
          entity_identifier_type: 'product',
          business_logic_pipeline_order: 0,
          business_logic_name: 'Boost',
          old_score: '0.5',
          new_score: '100.5',
        },
        {
          entity_identifier: top,
          entity_identifier_type: 'product',
          business_logic_pipeline_order: 1,
          business_logic_name: 'Demote',
          old_score: String(priceOf.get(top)),
          new_score: String((priceOf.get(top) as number) - 50),
        },
      ],
    );
  });

  test('a business-logic step may drop candidates', async () => {
    demoteStep = (cands) => cands.filter((c) => c.id !== 'p05');
    const res = await rank({ candidates: ['p05', 'p06', 'p07'].map((product_id) => ({ product_id })) });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(
      res.body.ranked_candidates.map((r: { candidate_id: string }) => r.candidate_id),
      highestFirst(['p06', 'p07'], (id) => priceOf.get(id) as number),
    );
  });
});

describe('events', () => {
  const ids = ['p04', 'p09', 'p15', 'p20', 'p02'];
  const sorted = highestFirst(ids, (id) => priceOf.get(id) as number);

  test('include_events: true returns MODEL, CANDIDATE and IMPRESSION events with their fields', async () => {
    const res = await rank({
      request_id: 'ev-1',
      candidates: ids.map((product_id) => ({ product_id })),
      user_page_size: 2,
      user_page: 1,
      include_events: true,
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const events = res.body.events as Array<
      Record<string, unknown> & { event_data: Record<string, unknown> }
    >;
    assert.ok(Array.isArray(events));
    for (const event of events) {
      assert.deepEqual(Object.keys(event).sort(), [
        'api_source',
        'event_data',
        'event_timestamp',
        'event_type',
        'request_id',
        'run_id',
      ]);
      assert.equal(event.request_id, 'ev-1');
      assert.equal(event.api_source, '/api/v1/ranking');
      assert.ok(!Number.isNaN(Date.parse(event.event_timestamp as string)), 'event_timestamp is a date');
    }
    const ofType = (type: string) => events.filter((e) => e.event_type === type).map((e) => e.event_data);
    assert.deepEqual(
      ofType('MODEL'),
      ids.map((id) => ({
        model_name: 'PriceModel',
        model_version: '1.2',
        model_output: String(priceOf.get(id)),
        entity_identifier: id,
        entity_identifier_type: 'product',
      })),
    );
    assert.deepEqual(ofType('BUSINESS_LOGIC'), [], 'no score changed');
    assert.deepEqual(
      ofType('CANDIDATE'),
      sorted.map((id, order) => ({
        entity_identifier: id,
        entity_identifier_type: 'product',
        candidate_score: priceOf.get(id),
        candidate_order: order,
      })),
    );
    // Page 1 of size 2: the 3rd and 4th; impression_order counts within the page.
    assert.deepEqual(
      ofType('IMPRESSION'),
      sorted.slice(2, 4).map((id, order) => ({
        entity_identifier: id,
        entity_identifier_type: 'product',
        impression_score: priceOf.get(id),
        impression_order: order,
      })),
    );
    assert.deepEqual(
      res.body.ranked_candidates.map((r: { candidate_id: string }) => r.candidate_id),
      sorted.slice(2, 4),
    );
    // MODEL first, IMPRESSION last, as the predecessor logged them.
    const types = events.map((e) => e.event_type);
    assert.equal(types.lastIndexOf('MODEL') < types.indexOf('CANDIDATE'), true);
    assert.equal(types.lastIndexOf('CANDIDATE') < types.indexOf('IMPRESSION'), true);
    assert.equal(types.length, 5 + 5 + 2);
  });

  test('no events key when include_events is false or absent', async () => {
    for (const flag of [{ include_events: false }, {}]) {
      const res = await rank({ candidates: ids.map((product_id) => ({ product_id })), ...flag });
      assert.equal(res.status, 200);
      assert.deepEqual(Object.keys(res.body), ['ranked_candidates']);
      assert.equal(res.body.ranked_candidates.length, 5);
    }
  });
});

describe('several pipelines', () => {
  test('a second ranking pipeline is served at its own path with its own model', async () => {
    const res = await rank(
      { request_id: 'pop-1', candidates: ONLY_IDS, user_page_size: 5, include_events: true },
      '/api/v1/popular',
    );
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const stockOf = new Map(PRODUCTS.map((p) => [p.product_id, p.number_in_stock]));
    const expected = highestFirst(REQUEST_IDS, (id) => stockOf.get(id) as number).slice(0, 5);
    assert.deepEqual(
      res.body.ranked_candidates,
      expected.map((id) => ({ candidate_id: id, ranked_score: stockOf.get(id) })),
    );
    for (const event of res.body.events) assert.equal(event.api_source, '/api/v1/popular');
    assert.equal(res.body.events[0].event_data.model_name, 'StockModel');
    // The first pipeline still answers with prices.
    const first = await rank({ candidates: ONLY_IDS, user_page_size: 1 });
    assert.deepEqual(first.body.ranked_candidates, [{ candidate_id: 'p13', ranked_score: 23.5 }]);
  });

  test('a single-entity pipeline scores an order hydrated from the index and answers {data: number}', async () => {
    await uploadEntities(server, 'order', [
      { order_id: 'o1', amount: 250, country: 'FR' },
      { order_id: 'o3', country: 'FR' },
    ]);
    const fraud = (order: Record<string, unknown>) =>
      postJson(server, '/api/v1/fraud', { request_id: 'f1', order });
    const stored = await fraud({ order_id: 'o1' });
    assert.equal(stored.status, 200, JSON.stringify(stored.body));
    assert.deepEqual(stored.body, { data: 3 });
    // Sent values win, 0 included; a missing order is scored with what was sent.
    assert.deepEqual((await fraud({ order_id: 'o1', amount: 0 })).body, { data: 0.5 });
    assert.deepEqual((await fraud({ order_id: 'o2', amount: 100, country: 'US' })).body, { data: 1 });
    // No amount anywhere: the model's NaN becomes 0.
    assert.deepEqual((await fraud({ order_id: 'o3' })).body, { data: 0 });
    // The order is required.
    const missing = await postJson(server, '/api/v1/fraud', { request_id: 'f2' });
    assert.equal(missing.status, 422);
    assert.deepEqual(missing.body.detail[0].loc, ['body', 'order']);
  });
});

describe('documentation', () => {
  // biome-ignore lint/suspicious/noExplicitAny: an OpenAPI document, walked field by field
  let doc: any;
  before(async () => {
    const res = await server.inject({ method: 'GET', url: '/openapi.json' });
    assert.equal(res.statusCode, 200);
    doc = res.json();
  });

  // biome-ignore lint/suspicious/noExplicitAny: JSON schema nodes
  const resolve = (schema: any): any => {
    if (schema?.$ref === undefined) return schema;
    const path = String(schema.$ref).replace(/^#\//, '').split('/');
    return resolve(path.reduce((node, key) => node?.[key], doc));
  };

  test('each pipeline has its operationId: name + path with non-word characters as _ + _post', () => {
    assert.equal(doc.paths['/api/v1/ranking']?.post?.operationId, 'MyRankingPipeline_api_v1_ranking_post');
    assert.equal(doc.paths['/api/v1/popular']?.post?.operationId, 'PopularPipeline_api_v1_popular_post');
    assert.equal(doc.paths['/api/v1/fraud']?.post?.operationId, 'FraudPipeline_api_v1_fraud_post');
  });

  test('the ranking request schema is documented, its candidates with the Product fields', () => {
    const body = resolve(doc.paths['/api/v1/ranking'].post.requestBody.content['application/json'].schema);
    for (const field of [
      'request_id',
      'query',
      'candidates',
      'user_page_size',
      'user_page',
      'candidate_page_size',
      'candidate_page',
      'include_events',
    ]) {
      assert.ok(body.properties[field], `${field} is documented`);
    }
    assert.ok(body.required.includes('request_id'));
    assert.ok(body.required.includes('candidates'));
    const candidate = resolve(resolve(body.properties.candidates).items);
    assert.deepEqual(Object.keys(candidate.properties).sort(), [
      'brand',
      'categories',
      'category',
      'description',
      'number_in_stock',
      'price',
      'product_id',
      'search_score',
      'title',
    ]);
    assert.deepEqual(candidate.required, ['product_id']);
    const response = resolve(
      doc.paths['/api/v1/ranking'].post.responses['200'].content['application/json'].schema,
    );
    const item = resolve(resolve(response.properties.ranked_candidates).items);
    // `explanation` only with `"explain": true` (test/explain-api.test.ts).
    assert.deepEqual(Object.keys(item.properties).sort(), ['candidate_id', 'explanation', 'ranked_score']);
    assert.deepEqual(item.required, ['candidate_id', 'ranked_score']);
  });

  test('the /redoc page loads /openapi.json', async () => {
    const page = await server.inject({ method: 'GET', url: '/redoc' });
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /spec-url="\/openapi\.json"/);
  });
});

describe('the query entity', () => {
  test('an empty query text is a valid request (a browse page), not a 422', async () => {
    const res = await rank({
      request_id: 'q0',
      query: { query: '' },
      candidates: ONLY_IDS.slice(0, 3),
      user_page_size: 3,
    });
    assert.equal(res.status, 200);
    assert.equal(res.body.ranked_candidates.length, 3);
  });

  test('a query of the wrong type is a 422 that names both accepted types', async () => {
    const res = await rank({ request_id: 'q1', query: { query: true }, candidates: ONLY_IDS.slice(0, 3) });
    assert.equal(res.status, 422);
    assert.deepEqual(res.body.detail[0].loc, ['body', 'query', 'query']);
    assert.equal(res.body.detail[0].msg, 'query.query: expected a string or a number, got true');
  });
});
