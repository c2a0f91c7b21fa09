import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import {
  boost,
  dedupe,
  defineApp,
  defineBusinessLogic,
  defineModel,
  defineRankingPipeline,
  diversity,
  filter,
  pin,
  type RankdRequest,
  Type,
} from '../src/index.js';
import { TemplateProduct, uploadEntities } from './helpers/ranking-app.js';
import { startTestRedis, type TestRedis } from './helpers/redis-server.js';
import { postJson, testServer } from './helpers/server.js';

// The ready-made steps in real ranking pipelines, over HTTP: candidates are sent by id and
// hydrated from the index, the model scores them by price, the steps run in order.

const PriceModel = defineModel({
  name: 'PriceModel',
  entity: TemplateProduct,
  score: (products) => products.map((p) => p.price ?? 0),
});

/** Pins sent with the request: `{"pins": {"q12": 0}}`. */
const pinsField = { pins: Type.Optional(Type.Record(Type.String(), Type.Integer({ minimum: 0 }))) };
const requestPins = (request: RankdRequest) => (request.pins ?? {}) as Record<string, number>;

const Merchandising = defineRankingPipeline({
  name: 'Merchandising',
  path: '/merch',
  candidate: TemplateProduct,
  fields: pinsField,
  model: PriceModel,
  businessLogic: [
    filter({ name: 'in_stock', entity: TemplateProduct, keep: (p) => (p.number_in_stock ?? 0) > 0 }),
    boost({ name: 'initech_boost', by: 'brand', values: { initech: 5 } }),
    boost({ name: 'category_boost', by: 'categories', values: { sale: 1.5, garden: 1.2 }, mode: 'multiply' }),
    pin({ positions: requestPins }),
  ],
});

const Unique = defineRankingPipeline({
  name: 'Unique',
  path: '/unique',
  candidate: TemplateProduct,
  model: PriceModel,
  businessLogic: [dedupe({ by: 'title' }), diversity({ by: 'brand', maxPerValue: 1 })],
});

const TwoPerBrand = defineRankingPipeline({
  name: 'TwoPerBrand',
  path: '/two-per-brand',
  candidate: TemplateProduct,
  model: PriceModel,
  businessLogic: [diversity({ name: 'brand_diversity', by: 'brand', maxPerValue: 2 })],
});

const PinUp = defineRankingPipeline({
  name: 'PinUp',
  path: '/pin-up',
  candidate: TemplateProduct,
  fields: pinsField,
  model: PriceModel,
  businessLogic: [pin({ positions: requestPins })],
});

const PinAnywhere = defineRankingPipeline({
  name: 'PinAnywhere',
  path: '/pin-anywhere',
  candidate: TemplateProduct,
  fields: pinsField,
  model: PriceModel,
  businessLogic: [pin({ positions: requestPins, allowDownRanking: true })],
});

/** A step that hands back frozen copies, some with scores that are not finite numbers. */
const Unruly = defineRankingPipeline({
  name: 'Unruly',
  path: '/unruly',
  candidate: TemplateProduct,
  model: PriceModel,
  businessLogic: [
    defineBusinessLogic({
      name: 'unruly',
      entity: TemplateProduct,
      apply: (candidates) =>
        candidates.map((c) => {
          const score = { q01: Number.NaN, q02: Number.POSITIVE_INFINITY, q03: -1 }[c.id] ?? c.score;
          return Object.freeze({ ...c, score });
        }),
    }),
  ],
});

const app = defineApp({
  name: 'business-logic-test',
  entities: [TemplateProduct],
  pipelines: [Merchandising, Unique, TwoPerBrand, PinUp, PinAnywhere, Unruly],
});

/** q01..q12, priced 12..1 (so the model ranks them in id order). */
const PRODUCTS = [
  ['acme', ['kitchen', 'sale'], 5, 'Mug'],
  ['acme', ['kitchen'], 0, 'Kettle'],
  ['acme', ['garden'], 3, 'Rake'],
  ['globex', ['kitchen'], 2, 'Pan'],
  ['globex', ['sale'], 1, 'Lamp'],
  ['initech', ['garden'], 4, 'Hose'],
  ['acme', ['garden', 'sale'], 6, 'Spade'],
  ['globex', ['kitchen'], 0, 'Pot'],
  ['initech', ['kitchen'], 7, 'Whisk'],
  ['umbrella', ['garden'], 8, 'Shears'],
  ['acme', ['kitchen'], 9, 'Mug'],
  [null, [], 3, 'Candle'],
].map(([brand, categories, number_in_stock, title], i) => ({
  product_id: `q${String(i + 1).padStart(2, '0')}`,
  price: 12 - i,
  brand,
  categories,
  number_in_stock,
  title,
}));
const ALL_IDS = PRODUCTS.map((p) => p.product_id);
const priceOf = new Map(PRODUCTS.map((p) => [p.product_id, p.price]));
const brandOf = new Map(PRODUCTS.map((p) => [p.product_id, p.brand]));

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

interface Ranked {
  candidate_id: string;
  ranked_score: number;
}
interface RankdEventJson {
  event_type: string;
  event_data: Record<string, unknown>;
}

/** Ranks candidates given by id (in reverse id order, so the request order is not the answer). */
async function rank(path: string, body: Record<string, unknown> = {}, candidateIds = ALL_IDS) {
  const res = await postJson(server, `/api/v1${path}`, {
    request_id: 'bl-1',
    candidates: [...candidateIds].reverse().map((product_id) => ({ product_id })),
    ...body,
  });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body as { ranked_candidates: Ranked[]; events?: RankdEventJson[] };
}

const pairs = (ranked: Ranked[]) => ranked.map((r) => [r.candidate_id, r.ranked_score]);
const businessLogicEvents = (events: RankdEventJson[] = []) =>
  events.filter((e) => e.event_type === 'BUSINESS_LOGIC').map((e) => e.event_data);

/**
 * Every candidate whose final score differs from its price has exactly one BUSINESS_LOGIC event
 * for the change (for pipelines with one score-changing step), and no other has any.
 */
function assertEventsMatchScores(events: RankdEventJson[] = [], step: string, order: number) {
  const finalScores = events
    .filter((e) => e.event_type === 'CANDIDATE')
    .map((e) => [e.event_data.entity_identifier as string, e.event_data.candidate_score as number] as const);
  const expected = finalScores
    .filter(([id, score]) => priceOf.get(id) !== score)
    .map(([id, score]) => ({
      entity_identifier: id,
      entity_identifier_type: 'product',
      business_logic_pipeline_order: order,
      business_logic_name: step,
      old_score: String(priceOf.get(id)),
      new_score: String(score),
    }));
  assert.deepEqual(businessLogicEvents(events), expected);
}

describe('a step of the app', () => {
  test('frozen candidates with NaN or Infinity scores from a step rank with 0, above negative scores', async () => {
    const body = await rank('/unruly', { user_page_size: 12 }, ['q01', 'q02', 'q03', 'q12']);
    assert.deepEqual(pairs(body.ranked_candidates), [
      ['q12', 1],
      // Equal scores keep the order the step returned them in (q01 was ahead of q02 by price).
      ['q01', 0],
      ['q02', 0],
      ['q03', -1],
    ]);
  });
});

describe('filter, boosts and a pin from the request, in order', () => {
  test('each step sees the previous one’s result; BUSINESS_LOGIC events give old and new scores', async () => {
    const body = await rank('/merch', { include_events: true, pins: { q12: 0 } });
    // 0 in_stock drops q02 and q08 (none in stock). 1 initech_boost: q06 7 → 12, q09 4 → 9.
    // 2 category_boost, ×1.5 for sale, ×1.2 for garden, the larger when both: q01 (sale) 18,
    // q06 (garden) 14.4, q03 (garden) 12, q05 (sale) 12, q07 (garden and sale) 6 × 1.5 = 9,
    // q10 (garden) 3.6. 3 pin: q12 to the top, one above the first score (18 + 1).
    // Ties keep the order they came in: q03 before q05, q04 before q09 before q07.
    assert.deepEqual(pairs(body.ranked_candidates), [
      ['q12', 19],
      ['q01', 18],
      ['q06', 12 * 1.2],
      ['q03', 10 * 1.2],
      ['q05', 8 * 1.5],
      ['q04', 9],
      ['q09', 9],
      ['q07', 6 * 1.5],
      ['q10', 3 * 1.2],
      ['q11', 2],
    ]);
    const change = (id: string, order: number, name: string, from: number, to: number) => ({
      entity_identifier: id,
      entity_identifier_type: 'product',
      business_logic_pipeline_order: order,
      business_logic_name: name,
      old_score: String(from),
      new_score: String(to),
    });
    // The filter changes no score; only changed scores are logged, in the order of each step's result.
    assert.deepEqual(businessLogicEvents(body.events), [
      change('q06', 1, 'initech_boost', 7, 12),
      change('q09', 1, 'initech_boost', 4, 9),
      change('q01', 2, 'category_boost', 12, 18),
      change('q06', 2, 'category_boost', 12, 12 * 1.2),
      change('q03', 2, 'category_boost', 10, 12),
      change('q05', 2, 'category_boost', 8, 12),
      change('q07', 2, 'category_boost', 6, 9),
      change('q10', 2, 'category_boost', 3, 3 * 1.2),
      change('q12', 3, 'pin', 1, 19),
    ]);
    // The dropped candidates are gone from the whole ranking, not only from the page.
    const candidates = (body.events ?? []).filter((e) => e.event_type === 'CANDIDATE');
    assert.equal(candidates.length, 10);
  });

  test('two pins on one position: the first listed gets it, the other the next one; no pins, no pin events', async () => {
    const body = await rank('/merch', { pins: { q09: 1, q05: 1 }, user_page_size: 4 });
    assert.deepEqual(
      body.ranked_candidates.map((r) => r.candidate_id),
      ['q01', 'q09', 'q05', 'q06'],
    );
    const [first, second, third, fourth] = body.ranked_candidates.map((r) => r.ranked_score);
    assert.ok(
      (first ?? 0) > (second ?? 0) && (second ?? 0) > (third ?? 0) && (third ?? 0) > (fourth ?? 0),
      'the pinned scores lie strictly between their neighbours’',
    );
    assert.deepEqual([first, fourth], [18, 12 * 1.2]);

    const unpinned = await rank('/merch', { include_events: true });
    assert.deepEqual(
      businessLogicEvents(unpinned.events).filter((e) => e.business_logic_name === 'pin'),
      [],
    );
    assert.deepEqual(unpinned.ranked_candidates[0], { candidate_id: 'q01', ranked_score: 18 });
  });

  test('a page shortened by the filter: the last page holds what is left', async () => {
    // 12 candidates, 2 filtered out: user page 2 of size 4 starts at 8 and holds the last 2.
    const body = await rank('/merch', { user_page_size: 4, user_page: 2 });
    assert.deepEqual(
      body.ranked_candidates.map((r) => r.candidate_id),
      ['q11', 'q12'],
    );
    // A page past what is left, but within the 12 sent: empty, not an error.
    assert.deepEqual((await rank('/merch', { user_page_size: 5, user_page: 2 })).ranked_candidates, []);
  });
});

describe('the predecessor’s pinning cases over HTTP (scores 6..1: q07..q12 stand for p1..p6)', () => {
  const P = { p1: 'q07', p2: 'q08', p3: 'q09', p4: 'q10', p5: 'q11', p6: 'q12' };
  const SIX = Object.values(P);

  test('{p6:11, p5:10, p3:0, p2:0, p4:2}, down-ranking allowed → p3, p2, p4, p1, p5, p6', async () => {
    const pins = { [P.p6]: 11, [P.p5]: 10, [P.p3]: 0, [P.p2]: 0, [P.p4]: 2 };
    const body = await rank('/pin-anywhere', { pins, include_events: true }, SIX);
    // The predecessor expected p2, p3, p1, p4, p5, p6: see test/business-logic.test.ts for why
    // rankd differs (listing order for a shared position; p4 really at position 2).
    assert.deepEqual(pairs(body.ranked_candidates), [
      [P.p3, 9],
      [P.p2, 8],
      [P.p4, 7],
      [P.p1, 6],
      [P.p5, 2],
      [P.p6, 1],
    ]);
    assertEventsMatchScores(body.events, 'pin', 0);
    assert.equal(businessLogicEvents(body.events).length, 3);
  });

  test('{p6:11, p5:12, p3:0, p2:22, p4:2}, no down-ranking → p3, p1, p4, p2, p5, p6', async () => {
    const pins = { [P.p6]: 11, [P.p5]: 12, [P.p3]: 0, [P.p2]: 22, [P.p4]: 2 };
    const body = await rank('/pin-up', { pins, include_events: true }, SIX);
    // The predecessor expected p3, p1, p2, p4, p5, p6 (p4 left at 3).
    assert.deepEqual(pairs(body.ranked_candidates), [
      [P.p3, 7],
      [P.p1, 6],
      [P.p4, 5.5],
      [P.p2, 5],
      [P.p5, 2],
      [P.p6, 1],
    ]);
    assertEventsMatchScores(body.events, 'pin', 0);
  });

  test('the same request on the other pipeline: down-ranking makes the difference', async () => {
    const pins = { [P.p1]: 5 };
    const up = await rank('/pin-up', { pins }, SIX);
    assert.deepEqual(
      up.ranked_candidates.map((r) => r.candidate_id),
      SIX,
    );
    const anywhere = await rank('/pin-anywhere', { pins }, SIX);
    assert.deepEqual(
      anywhere.ranked_candidates.map((r) => r.candidate_id),
      [...SIX.slice(1), P.p1],
    );
    assert.equal(anywhere.ranked_candidates.at(-1)?.ranked_score, 0);
  });

  test('pins of ids that are not candidates change nothing; a negative position is a 422', async () => {
    const body = await rank('/pin-up', { pins: { ghost: 0 }, include_events: true }, SIX);
    assert.deepEqual(
      body.ranked_candidates.map((r) => r.candidate_id),
      SIX,
    );
    assert.deepEqual(businessLogicEvents(body.events), []);
    const res = await postJson(server, '/api/v1/pin-up', {
      request_id: 'bad',
      candidates: [{ product_id: 'q07' }],
      pins: { q07: -1 },
    });
    assert.equal(res.status, 422);
  });
});

describe('dedupe and diversity', () => {
  test('dedupe by title, then one per brand per page of 3, on every user page', async () => {
    const pages: string[][] = [];
    let events: RankdEventJson[] | undefined;
    for (const user_page of [0, 1, 2, 3]) {
      const body = await rank('/unique', { user_page_size: 3, user_page, include_events: user_page === 0 });
      pages.push(body.ranked_candidates.map((r) => r.candidate_id));
      events ??= body.events;
    }
    // q11 has q01's title and a lower price: dropped. Then greedy per page of 3.
    assert.deepEqual(pages, [
      ['q01', 'q04', 'q06'],
      ['q02', 'q05', 'q09'],
      ['q03', 'q08', 'q10'],
      ['q07', 'q12'],
    ]);
    for (const page of pages) {
      const brands = page.map((id) => brandOf.get(id)).filter((b) => b !== null);
      assert.equal(new Set(brands).size, brands.length, `one per brand in ${page}`);
    }
    // Scores never increase down the ranking, and each changed one has its event (order 1: diversity).
    const candidateScores = (events ?? [])
      .filter((e) => e.event_type === 'CANDIDATE')
      .map((e) => e.event_data.candidate_score as number);
    assert.equal(candidateScores.length, 11);
    for (let i = 1; i < candidateScores.length; i++)
      assert.ok((candidateScores[i - 1] ?? 0) >= (candidateScores[i] ?? 0));
    assertEventsMatchScores(events, 'diversity', 1);
    assert.ok(businessLogicEvents(events).length > 0);
  });

  test('two per brand, pages of 4: the third acme waits for page 2 and is the only score changed', async () => {
    const body = await rank('/two-per-brand', { user_page_size: 4, user_page: 1, include_events: true });
    assert.deepEqual(pairs(body.ranked_candidates), [
      ['q03', 7.5],
      ['q06', 7],
      ['q07', 6],
      ['q08', 5],
    ]);
    assert.deepEqual(businessLogicEvents(body.events), [
      {
        entity_identifier: 'q03',
        entity_identifier_type: 'product',
        business_logic_pipeline_order: 0,
        business_logic_name: 'brand_diversity',
        old_score: '10',
        new_score: '7.5',
      },
    ]);
    const first = await rank('/two-per-brand', { user_page_size: 4 });
    assert.deepEqual(
      first.ranked_candidates.map((r) => r.candidate_id),
      ['q01', 'q02', 'q04', 'q05'],
    );
  });
});
