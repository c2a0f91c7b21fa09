/**
 * Explanations over HTTP (`"explain": true`, docs/guides/explain-a-ranking.md): model inputs with their sources and
 * contributions for a linear model (exact), a GBDT model (TreeSHAP, bias + Σ = margin), a chain
 * (per stage) and a remote model (inputs only); business-logic traces for boost, pin, filter,
 * dedupe and diversity; overrides (forced variant, skipped step, model swap) and their 422s; a
 * single-entity pipeline refusing `explain`; `explain` off answering the very bytes it did before.
 */
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { Value } from 'typebox/value';
import {
  boost,
  chainModels,
  dedupe,
  defineApp,
  defineBusinessLogic,
  defineEntity,
  defineExperiment,
  defineFeatureView,
  defineModel,
  defineRankingPipeline,
  defineRealtimeFeatures,
  defineSingleEntityPipeline,
  diversity,
  experimentModel,
  Feature,
  featureColumns,
  filter,
  gbdtModel,
  linearModel,
  pin,
  remoteModel,
  Type,
} from '../src/index.js';
import { CandidateExplanationSchema } from '../src/pipeline/explain-schema.js';
import { PIPELINE_STAGES } from '../src/request/stage-timing.js';
import { nullable } from './helpers/ranking-app.js';
import { startTestRedis, type TestRedis } from './helpers/redis-server.js';
import { postJson, testServer } from './helpers/server.js';

const TOLERANCE = 1e-5;
const dir = mkdtempSync(join(tmpdir(), 'rankd-explain-api-'));
const FIXTURES = new URL('./fixtures/', import.meta.url);
const fixture = (path: string) => new URL(path, FIXTURES).pathname;
const CASES = JSON.parse(readFileSync(fixture('treeshap/depth3-logistic.cases.json'), 'utf8')) as {
  inputs: Array<Array<number | null>>;
  contribs: number[][];
  margin: number[];
};

const Thing = defineEntity({
  name: 'thing',
  fields: {
    a: nullable(Type.Number()),
    b: nullable(Type.Number()),
    brand: nullable(Type.String()),
    title: nullable(Type.String()),
    stock: nullable(Type.Integer()),
    v: Type.Array(Type.Union([Type.Number(), Type.Null()]), { default: [] }),
  },
});

/** `x:a`, `x:b` (no defaults: null is missing) and `x:f0`..`x:f4` from `v`. */
const X = defineRealtimeFeatures({
  name: 'x',
  entity: Thing,
  features: {
    a: Feature.float(),
    b: Feature.float(),
    ...Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`f${i}`, Feature.float()])),
  },
  compute: (thing) => ({
    a: thing.a,
    b: thing.b,
    ...Object.fromEntries((thing.v ?? []).map((value, i) => [`f${i}`, value])),
  }),
});
const F = Array.from({ length: 5 }, (_, i) => `x:f${i}`);

/** Stored: `pop` has a default (0.5), `rank` none. */
const Stats = defineFeatureView({
  name: 'stats',
  entity: Thing,
  features: { pop: Feature.float({ default: 0.5 }), rank: Feature.float() },
});

const weightsFile = (name: string, weights: Record<string, number>, bias: number) => {
  const path = join(dir, `${name}.json`);
  writeFileSync(path, JSON.stringify({ weights, bias }));
  return path;
};
const LINEAR_WEIGHTS = { 'x:a': 2, 'x:b': -1, 'stats:pop': 3, 'stats:rank': 0.25 };
const Linear = linearModel({
  name: 'linear',
  file: weightsFile('linear', LINEAR_WEIGHTS, 0.5),
  watch: false,
});
const Trees = gbdtModel({
  name: 'trees',
  file: fixture('treeshap/depth3-logistic.model.json'),
  features: F,
  watch: false,
});
const Chain = chainModels({
  name: 'chain',
  models: [
    linearModel({ name: 'stage_one', file: weightsFile('one', { 'x:a': 1 }, 1), watch: false }),
    linearModel({
      name: 'stage_two',
      file: weightsFile('two', { 'stage_one:score': 2, 'x:b': 1 }, 0),
      watch: false,
    }),
  ],
});

/** Trees whose file does not exist yet: a hand-written linear model scores until it does. */
const Hand = linearModel({ name: 'hand', file: weightsFile('hand', { 'x:a': 1 }, 0), watch: false });
const TRAINED_FILE = join(dir, 'not-yet', 'trained.json');
const Trained = gbdtModel({
  name: 'trained',
  file: TRAINED_FILE,
  features: F,
  whenMissing: Hand,
  watch: false,
});
/** The same fallback as a chain's first stage. */
const FallbackChain = chainModels({
  name: 'fallback_chain',
  models: [
    gbdtModel({
      name: 'trained_stage',
      file: join(dir, 'not-yet', 'stage.json'),
      features: F,
      whenMissing: linearModel({
        name: 'hand_stage',
        file: weightsFile('hand_stage', { 'x:b': 1 }, 0),
        watch: false,
      }),
      watch: false,
    }),
    linearModel({ name: 'after', file: weightsFile('after', { 'trained_stage:score': 1 }, 0), watch: false }),
  ],
});

let remotePort = 0;
const remoteServer: Server = createServer(async (request, response) => {
  let text = '';
  for await (const chunk of request) text += chunk;
  const { inputs } = JSON.parse(text) as { inputs: Array<Array<number | null>> };
  response.writeHead(200, { 'content-type': 'application/json' });
  response.end(
    JSON.stringify({ scores: inputs.map((row) => row.reduce<number>((s, v) => s + (v ?? 0), 0)) }),
  );
});

const ByA = defineModel({
  name: 'by_a',
  entity: Thing,
  features: ['x:a'],
  score: (things) => Array.from(featureColumns(things, ['x:a'])[0], (a) => a || 0),
});
const ByB = defineModel({
  name: 'by_b',
  entity: Thing,
  features: ['x:b'],
  score: (things) => Array.from(featureColumns(things, ['x:b'])[0], (b) => b || 0),
});
const Ranker = defineExperiment({
  id: 'ranker',
  unit: 'request',
  variants: [
    { name: 'control', share: 1 },
    { name: 'treatment', share: 0 },
  ],
});

const item = (name: string, model: Parameters<typeof defineRankingPipeline>[0]['model']) =>
  defineRankingPipeline({ name, path: `/${name}`, candidate: Thing, realtimeFeatures: [X], model });

let app: ReturnType<typeof defineApp>;
let redis: TestRedis;
let server: FastifyInstance;

before(async () => {
  await new Promise<void>((resolve) => remoteServer.listen(0, '127.0.0.1', resolve));
  remotePort = (remoteServer.address() as AddressInfo).port;
  const Remote = remoteModel({
    name: 'remote',
    url: `http://127.0.0.1:${remotePort}/score`,
    features: ['x:a', 'x:b'],
    fallback: 0,
    timeoutMs: 10_000,
  });
  app = defineApp({
    name: 'explain-api',
    entities: [Thing],
    featureViews: [Stats],
    pipelines: [
      item('linear', Linear),
      item('trees', Trees),
      item('chain', Chain),
      item('remote', Remote),
      item('fallback', Trained),
      item('fallback_chain', FallbackChain),
      defineRankingPipeline({
        name: 'logic',
        path: '/logic',
        candidate: Thing,
        realtimeFeatures: [X],
        model: experimentModel({ experiment: Ranker, models: { control: ByA, treatment: ByB } }),
        businessLogic: [
          filter({ name: 'in_stock', keep: (t) => t.stock !== 0, reason: 'out of stock' }),
          dedupe({ name: 'one_per_title', by: 'title' }),
          boost({ name: 'brand_boost', by: 'brand', values: { acme: 1.5 }, mode: 'multiply' }),
          pin({ name: 'promoted', positions: { t9: 0 } }),
          diversity({ name: 'two_per_brand', by: 'brand', maxPerValue: 2 }),
        ],
      }),
      defineRankingPipeline({
        name: 'custom',
        path: '/custom',
        candidate: Thing,
        realtimeFeatures: [X],
        model: ByA,
        businessLogic: [
          defineBusinessLogic({
            name: 'halve_globex',
            entity: Thing,
            apply: (things) =>
              things.map((t) => (t.entity.brand === 'globex' ? { ...t, score: t.score / 2 } : t)),
          }),
          defineBusinessLogic({
            name: 'no_umbrella',
            entity: Thing,
            apply: (things) => things.filter((t) => t.entity.brand !== 'umbrella'),
          }),
        ],
      }),
      defineSingleEntityPipeline({
        name: 'one',
        path: '/one',
        entity: Thing,
        realtimeFeatures: [X],
        model: ByA,
      }),
    ],
  });
  redis = await startTestRedis();
  server = await testServer(redis, { app });
  const rows = await postJson(server, '/api/v1/features/upload', {
    feature_view: 'stats',
    rows: [
      { entity_id: 'l1', pop: 0.9, rank: 2 },
      { entity_id: 'l2', rank: 4 },
    ],
  });
  assert.equal(rows.status, 200, JSON.stringify(rows.body));
});

after(async () => {
  await server?.close();
  await redis?.stop();
  await new Promise<void>((resolve) => remoteServer.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

// biome-ignore lint/suspicious/noExplicitAny: response bodies are arbitrary JSON, asserted field by field
type Body = any;
const rank = async (path: string, payload: Record<string, unknown>): Promise<Body> => {
  const res = await postJson(server, `/api/v1/${path}`, { request_id: `r-${path}`, ...payload });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body;
};
const byId = (body: Body) =>
  new Map<string, Body>(body.ranked_candidates.map((c: Body) => [c.candidate_id, c]));
const sum = (values: Record<string, number>) => Object.values(values).reduce((s, v) => s + v, 0);

describe('model explanations over HTTP', () => {
  test('linear: bias + Σ contributions is the score exactly; each input with its source', async () => {
    const candidates = [
      { thing_id: 'l1', a: 1.5, b: 2 }, // stored pop and rank
      { thing_id: 'l2', a: -3, b: null }, // stored rank, pop defaulted; b missing
      { thing_id: 'l3', a: null, b: 0.25 }, // no row: pop default, rank missing
    ];
    const body = await rank('linear', { candidates, explain: true });
    const got = byId(body);
    const expectedInputs = {
      l1: {
        'x:a': [1.5, 'realtime'],
        'x:b': [2, 'realtime'],
        'stats:pop': [0.9, 'stored'],
        'stats:rank': [2, 'stored'],
      },
      l2: {
        'x:a': [-3, 'realtime'],
        'x:b': [null, 'missing'],
        'stats:pop': [0.5, 'default'],
        'stats:rank': [4, 'stored'],
      },
      l3: {
        'x:a': [null, 'missing'],
        'x:b': [0.25, 'realtime'],
        'stats:pop': [0.5, 'default'],
        'stats:rank': [null, 'missing'],
      },
    } as const;
    for (const [id, inputs] of Object.entries(expectedInputs)) {
      const c = got.get(id);
      const model = c.explanation.model;
      assert.equal(model.name, 'linear');
      assert.equal(model.available, true);
      assert.equal(model.bias, 0.5);
      let margin = model.bias;
      for (const [feature, weight] of Object.entries(LINEAR_WEIGHTS)) {
        const [value, source] = inputs[feature as keyof typeof inputs];
        assert.deepEqual(model.inputs[feature], { value, source }, `${id} ${feature}`);
        assert.equal(model.contributions[feature], value === null ? 0 : weight * value, `${id} ${feature}`);
        margin += model.contributions[feature];
      }
      assert.equal(margin, c.ranked_score, `${id}: bias + Σ in feature order is the score`);
      assert.equal(model.score, c.ranked_score);
      assert.equal(model.margin, c.ranked_score);
      assert.deepEqual(c.explanation.business_logic, []);
    }
    assert.deepEqual(body.explanation.variants, {});
    assert.equal(body.explanation.overrides_applied, null);
    assert.deepEqual(body.explanation.dropped, []);
    assert.deepEqual(Object.keys(body.explanation.stage_ms), [...PIPELINE_STAGES, 'explain']);
    for (const stage of [...PIPELINE_STAGES, 'explain'])
      assert.equal(typeof body.explanation.stage_ms[stage], 'number', stage);
  });

  test('GBDT: contributions match XGBoost pred_contribs and bias + Σ is the margin, to 1e-5', async () => {
    const rows = CASES.inputs.slice(0, 20);
    const candidates = rows.map((v, i) => ({ thing_id: `g${i}`, v }));
    const body = await rank('trees', { candidates, explain: true, user_page_size: 20 });
    const got = byId(body);
    rows.forEach((row, i) => {
      const model = got.get(`g${i}`).explanation.model;
      const expected = CASES.contribs[i] as number[];
      assert.equal(model.available, true);
      assert.ok(Math.abs(model.bias - (expected[5] as number)) <= TOLERANCE, `g${i} bias`);
      F.forEach((feature, j) => {
        assert.ok(
          Math.abs(model.contributions[feature] - (expected[j] as number)) <= TOLERANCE,
          `g${i} ${feature}`,
        );
        assert.deepEqual(model.inputs[feature], {
          value: row[j] ?? null,
          source: row[j] === null ? 'missing' : 'realtime',
        });
      });
      assert.ok(Math.abs(model.bias + sum(model.contributions) - model.margin) <= TOLERANCE, `g${i} adds up`);
      assert.ok(Math.abs(model.margin - (CASES.margin[i] as number)) <= TOLERANCE, `g${i} margin`);
      assert.ok(Math.abs(model.score - 1 / (1 + Math.exp(-model.margin))) < 1e-6, `g${i} sigmoid`);
      assert.equal(model.score, got.get(`g${i}`).ranked_score);
    });
  });

  test('chain: each stage explained under its name; stage two reads stage one’s score as a real-time input', async () => {
    const candidates = [
      { thing_id: 'c1', a: 2, b: 1 },
      { thing_id: 'c2', a: -1, b: null },
    ];
    const body = await rank('chain', { candidates, explain: true });
    for (const [id, c] of byId(body)) {
      const { model } = c.explanation;
      assert.equal(model.name, 'chain');
      assert.deepEqual(
        model.stages.map((s: Body) => s.name),
        ['stage_one', 'stage_two'],
      );
      const [one, two] = model.stages;
      assert.equal(one.bias + sum(one.contributions), one.score, `${id} stage one adds up`);
      assert.equal(two.bias + sum(two.contributions), two.score, `${id} stage two adds up`);
      assert.deepEqual(two.inputs['stage_one:score'], { value: one.score, source: 'realtime' });
      assert.equal(two.contributions['stage_one:score'], 2 * one.score);
      assert.equal(model.score, two.score);
      assert.equal(c.ranked_score, two.score);
    }
  });

  test('a file model whose file does not exist yet: its whenMissing scores, and the explanation says so', async () => {
    const candidates = [
      { thing_id: 'w1', a: 2, b: 1, v: [0.1, 0.2, 0.3, 0.4, 0.5] },
      { thing_id: 'w2', a: -1, b: 3, v: [0.5, 0.4, 0.3, 0.2, 0.1] },
    ];
    const body = await rank('fallback', { candidates, explain: true });
    for (const [id, c] of byId(body)) {
      const { model } = c.explanation;
      assert.equal(model.name, 'trained');
      assert.deepEqual(model.fallback, { model: 'hand', reason: 'trained.json does not exist yet' }, id);
      // The figures are the fallback's: its one weight, on x:a.
      assert.deepEqual(Object.keys(model.contributions), ['x:a']);
      assert.equal(model.score, c.ranked_score);
    }
    const chained = await rank('fallback_chain', { candidates, explain: true });
    for (const [id, c] of byId(chained)) {
      const [first, second] = c.explanation.model.stages;
      assert.deepEqual(first.fallback, { model: 'hand_stage', reason: 'stage.json does not exist yet' }, id);
      assert.equal(second.fallback, undefined, id);
    }
    // Once the file is there, the trees score and nothing is said.
    copyFileSync(fixture('treeshap/depth3-logistic.model.json'), TRAINED_FILE);
    assert.equal((await Trained.reload()).status, 'reloaded');
    const trained = await rank('fallback', { candidates, explain: true });
    for (const [id, c] of byId(trained)) {
      assert.equal(c.explanation.model.fallback, undefined, id);
      assert.deepEqual(Object.keys(c.explanation.model.contributions).sort(), [...F].sort(), id);
    }
  });

  test('remote: inputs and score, contributions marked not available', async () => {
    const candidates = [
      { thing_id: 'm1', a: 2, b: 1 },
      { thing_id: 'm2', a: null, b: 4 },
    ];
    const body = await rank('remote', { candidates, explain: true });
    const m2 = byId(body).get('m2').explanation.model;
    assert.equal(m2.available, false);
    assert.equal(m2.contributions, null);
    assert.equal(m2.bias, null);
    assert.equal(m2.margin, null);
    assert.equal(typeof m2.reason, 'string');
    assert.deepEqual(m2.inputs, {
      'x:a': { value: null, source: 'missing' },
      'x:b': { value: 4, source: 'realtime' },
    });
    assert.equal(m2.score, 4);
  });
});

/** t1..t10 scored by `a` (10..1), so the model ranks them in id order. */
const LOGIC_CANDIDATES = [
  { brand: 'acme', title: 'Mug', stock: 3 },
  { brand: 'acme', title: 'Kettle', stock: 0 }, // t2: filtered out
  { brand: 'acme', title: 'Rake', stock: 1 },
  { brand: 'globex', title: 'Mug', stock: 5 }, // t4: a duplicate of t1's title
  { brand: 'acme', title: 'Pan', stock: 1 },
  { brand: 'globex', title: 'Lamp', stock: 2 },
  { brand: 'initech', title: 'Hose', stock: 2 },
  { brand: 'globex', title: 'Pot', stock: 2 },
  { brand: 'initech', title: 'Whisk', stock: 2 }, // t9: pinned first
  { brand: 'umbrella', title: 'Shears', stock: 2 },
].map((fields, i) => ({ thing_id: `t${i + 1}`, a: 10 - i, b: i, ...fields }));
const logic = (extra: Record<string, unknown> = {}) =>
  rank('logic', { candidates: LOGIC_CANDIDATES, user_page_size: 10, explain: true, ...extra });
const entryOf = (c: Body, step: string) => c.explanation.business_logic.find((e: Body) => e.step === step);

describe('business-logic traces', () => {
  test('filter and dedupe: dropped candidates listed with the reason', async () => {
    const body = await logic();
    assert.deepEqual(body.explanation.dropped, [
      { id: 't2', step: 'in_stock', reason: 'out of stock' },
      { id: 't4', step: 'one_per_title', reason: 'duplicate of t1 (title = Mug)' },
    ]);
    const ids = body.ranked_candidates.map((c: Body) => c.candidate_id);
    assert.ok(!ids.includes('t2') && !ids.includes('t4'));
  });

  test('boost: ×1.5 with its key, score and position before and after', async () => {
    const body = await logic();
    const t3 = byId(body).get('t3');
    const entry = entryOf(t3, 'brand_boost');
    assert.equal(entry.action, 'boost');
    assert.equal(entry.description, 'boost ×1.5 (brand = acme)');
    assert.equal(entry.score_before, 8);
    assert.equal(entry.score_after, 12);
    // Before the boost: t1, t3, t5, t6, ... (t2, t4 dropped): t3 second; after, t1 (15) then t3 (12).
    assert.equal(entry.position_before, 2);
    assert.equal(entry.position_after, 2);
    const t6 = entryOf(byId(body).get('t6'), 'brand_boost');
    assert.equal(t6.action, 'none');
    assert.equal(t6.score_before, t6.score_after);
    assert.equal(t6.position_before, 4);
    assert.equal(t6.position_after, 4);
    assert.equal(byId(body).get('t1').explanation.model_position, 1);
    assert.equal(byId(body).get('t9').explanation.model_position, 9);
  });

  test('pin and diversity: what each did, in words and positions', async () => {
    const body = await logic();
    const t9 = entryOf(byId(body).get('t9'), 'promoted');
    assert.equal(t9.action, 'pin');
    assert.equal(t9.description, 'pinned to position 1');
    assert.equal(t9.position_before, 7);
    assert.equal(t9.position_after, 1);
    // After the pin: t9, t1, t3, t5 (acme ×3) ...: diversity moves t5 down past the page's other brands.
    const t5 = entryOf(byId(body).get('t5'), 'two_per_brand');
    assert.equal(t5.action, 'diversity');
    assert.match(t5.description, /^moved down \d+: at most 2 per brand on a page \(brand = acme\)$/);
    assert.ok(t5.position_after > t5.position_before);
    // Every page candidate has an entry per step, in step order, each starting where the last ended.
    for (const c of body.ranked_candidates) {
      const entries = c.explanation.business_logic;
      assert.deepEqual(
        entries.map((e: Body) => e.step),
        ['in_stock', 'one_per_title', 'brand_boost', 'promoted', 'two_per_brand'],
      );
      for (let i = 1; i < entries.length; i++)
        assert.equal(entries[i].score_before, entries[i - 1].score_after);
      assert.equal(entries.at(-1).score_after, c.ranked_score);
      assert.equal(entries.at(-1).position_after, body.ranked_candidates.indexOf(c) + 1);
    }
  });
  test('custom steps without describe: scores and positions before and after, dropped by name', async () => {
    const body = await rank('custom', { candidates: LOGIC_CANDIDATES, explain: true });
    const t4 = entryOf(byId(body).get('t4'), 'halve_globex');
    assert.deepEqual(t4, {
      step: 'halve_globex',
      action: 'custom',
      description: 'score 7 → 3.5',
      score_before: 7,
      score_after: 3.5,
      position_before: 4,
      // 10, 9, 8, 6, 4, then t4's 3.5.
      position_after: 6,
    });
    assert.equal(entryOf(byId(body).get('t5'), 'halve_globex').description, 'moved up by other candidates');
    assert.deepEqual(body.explanation.dropped, [
      { id: 't10', step: 'no_umbrella', reason: 'removed by no_umbrella' },
    ]);
  });
});

describe('overrides', () => {
  test('a forced variant is assigned and scores', async () => {
    const body = await logic({ overrides: { variants: { ranker: 'treatment' } } });
    assert.deepEqual(body.explanation.variants, { ranker: 'treatment' });
    assert.deepEqual(body.explanation.overrides_applied, { variants: { ranker: 'treatment' } });
    assert.equal(byId(body).get('t10').explanation.model.name, 'by_b');
    const plain = await logic();
    assert.deepEqual(plain.explanation.variants, { ranker: 'control' });
    assert.equal(byId(plain).get('t1').explanation.model.name, 'by_a');
  });

  test('a skipped step does nothing and is not in the trace', async () => {
    const body = await logic({ overrides: { skip_business_logic: ['brand_boost', 'in_stock'] } });
    const t3 = byId(body).get('t3');
    assert.equal(entryOf(t3, 'brand_boost'), undefined);
    assert.equal(t3.explanation.model.score, 8);
    assert.ok(byId(body).has('t2'), 'the filter did not run');
    assert.deepEqual(
      body.explanation.dropped.map((d: Body) => d.id),
      ['t4'],
    );
  });

  test('a model swap scores with the named model, explain or not', async () => {
    const body = await logic({ overrides: { model: 'by_b' } });
    assert.equal(byId(body).get('t10').explanation.model.name, 'by_b');
    assert.equal(byId(body).get('t10').explanation.model.score, 9);
    const quiet = await rank('logic', {
      candidates: LOGIC_CANDIDATES,
      overrides: { model: 'by_b', skip_business_logic: ['two_per_brand', 'promoted', 'brand_boost'] },
    });
    assert.equal(quiet.ranked_candidates[0].candidate_id, 't10');
    assert.equal(quiet.explanation, undefined);
  });

  test('unknown names: 422 naming the allowed values, nothing ranked', async () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ variants: { nope: 'control' } }, /"nope" is not an experiment of this pipeline \(allowed: ranker\)/],
      [{ variants: { ranker: 'bold' } }, /"bold" is not a variant of ranker \(allowed: control, treatment\)/],
      [
        { skip_business_logic: ['boost'] },
        /allowed: in_stock, one_per_title, brand_boost, promoted, two_per_brand/,
      ],
      [
        { model: 'gbdt' },
        /"gbdt" is not a model of this pipeline \(allowed: experiment:ranker, by_a, by_b\)/,
      ],
      [
        { variants: { ranker: 'control' } },
        /"ranker" is not an experiment of this pipeline \(there are none\)/,
      ],
    ];
    for (const [i, [overrides, message]] of cases.entries()) {
      const path = i === 4 ? 'linear' : 'logic';
      const res = await postJson(server, `/api/v1/${path}`, {
        request_id: 'bad',
        candidates: [{ thing_id: 't1' }],
        overrides,
      });
      assert.equal(res.status, 422, JSON.stringify(res.body));
      assert.equal(res.body.error_code, 'RANKD_VALIDATION');
      assert.match(res.body.detail[0].msg, message);
      assert.equal(res.body.detail[0].loc[1], 'overrides');
    }
    const unknownField = await postJson(server, '/api/v1/logic', {
      request_id: 'bad',
      candidates: [{ thing_id: 't1' }],
      overrides: { modle: 'by_b' },
    });
    assert.equal(unknownField.status, 422);
  });

  test('every unknown name at once: variants, steps and model in one 422', async () => {
    const res = await postJson(server, '/api/v1/logic', {
      request_id: 'bad',
      candidates: [{ thing_id: 't1' }],
      overrides: {
        variants: { nope: 'control', ranker: 'bold' },
        skip_business_logic: ['promoted', 'boost', 'pin'],
        model: 'gbdt',
      },
    });
    assert.equal(res.status, 422, JSON.stringify(res.body));
    const named = (res.body.detail as Array<{ loc: Array<string | number>; msg: string }>).map(
      ({ loc, msg }) => `${loc.slice(2).join('.')}: ${msg.split(' (')[0]}`,
    );
    assert.deepEqual(named, [
      'skip_business_logic.1: "boost" is not a business-logic step of this pipeline',
      'skip_business_logic.2: "pin" is not a business-logic step of this pipeline',
      'model: "gbdt" is not a model of this pipeline',
      'variants.nope: "nope" is not an experiment of this pipeline',
      'variants.ranker: "bold" is not a variant of ranker',
    ]);
  });
});

describe('explain off, and pipelines that cannot explain', () => {
  test('explain false or absent: the very bytes of a plain answer, no explanation anywhere', async () => {
    const send = async (extra: Record<string, unknown>) =>
      server.inject({
        method: 'POST',
        url: '/api/v1/logic',
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify({ request_id: 'same', candidates: LOGIC_CANDIDATES, ...extra }),
      });
    const absent = await send({});
    const off = await send({ explain: false });
    assert.equal(absent.statusCode, 200);
    assert.equal(off.body, absent.body);
    assert.ok(!absent.body.includes('explanation'));
    const parsed = JSON.parse(absent.body) as Body;
    const plain = {
      ranked_candidates: parsed.ranked_candidates.map((c: Body) => ({
        candidate_id: c.candidate_id,
        ranked_score: c.ranked_score,
      })),
    };
    assert.equal(absent.body, JSON.stringify(plain));
    // The same ranking as with explanations.
    const explained = await logic();
    assert.deepEqual(
      explained.ranked_candidates.map((c: Body) => [c.candidate_id, c.ranked_score]),
      plain.ranked_candidates.map((c: Body) => [c.candidate_id, c.ranked_score]),
    );
  });

  test('a single-entity pipeline refuses explain: true with a 422 that says why', async () => {
    const refused = await postJson(server, '/api/v1/one', {
      request_id: 'x',
      thing: { thing_id: 't1', a: 2 },
      explain: true,
    });
    assert.equal(refused.status, 422);
    assert.deepEqual(refused.body.detail[0].loc, ['body', 'explain']);
    assert.match(refused.body.detail[0].msg, /single-entity pipeline, which cannot explain/);
    const plain = await postJson(server, '/api/v1/one', {
      request_id: 'x',
      thing: { thing_id: 't1', a: 2 },
      explain: false,
    });
    assert.deepEqual(plain, { status: 200, body: { data: 2 } });
  });

  test('a prototype key among the overrides is refused like any such body, never a 500', async () => {
    const res = await server.inject({
      method: 'POST',
      url: '/api/v1/logic',
      headers: { 'content-type': 'application/json' },
      payload:
        '{"request_id":"p","candidates":[{"thing_id":"t1"}],"overrides":{"variants":{"__proto__":"x"}}}',
    });
    assert.ok(res.statusCode >= 400 && res.statusCode < 500, `${res.statusCode} ${res.body}`);
  });
});

describe('fast paths', () => {
  test('on and off: the same explained answers and the same refusals', async () => {
    const plainServer = await testServer(redis, { app, env: { FAST_PATHS: 'false' } });
    try {
      const timeless = (body: Body) => ({ ...body, explanation: { ...body.explanation, stage_ms: {} } });
      const payloads: unknown[] = [
        { request_id: 'f', candidates: LOGIC_CANDIDATES, explain: true },
        { request_id: 'f', candidates: LOGIC_CANDIDATES, explain: true, overrides: { model: 'by_b' } },
        '{"request_id":"f","candidates":[{"thing_id":"t1"}],"explain":true,"overrides":{"variants":{"__proto__":"x"}}}',
        { request_id: 'f', candidates: [{ thing_id: 't1' }], overrides: { variants: { ranker: 'bold' } } },
      ];
      for (const payload of payloads) {
        const [fast, plain] = await Promise.all(
          [server, plainServer].map((s) => postJson(s, '/api/v1/logic', payload)),
        );
        assert.equal(fast?.status, plain?.status, JSON.stringify(payload));
        if (fast?.status === 200) assert.deepEqual(timeless(fast.body), timeless(plain?.body));
        else assert.deepEqual(fast?.body, plain?.body);
      }
    } finally {
      await plainServer.close();
    }
  });
});

describe('the OpenAPI document', () => {
  test('documents explain, overrides and the explanations, with an example that fits its schema', async () => {
    const doc = (await server.inject({ method: 'GET', url: '/openapi.json' })).json();
    const schemas = doc.components.schemas;
    const request = schemas.logicRequest;
    assert.equal(request.properties.explain.type, 'boolean');
    assert.ok(request.properties.overrides, 'overrides in the request');
    assert.deepEqual(Object.keys(schemas.RankingOverrides.properties), [
      'variants',
      'skip_business_logic',
      'model',
    ]);
    for (const name of [
      'CandidateExplanation',
      'RequestExplanation',
      'ModelExplanation',
      'BusinessLogicStepExplanation',
    ])
      assert.ok(schemas[name], name);
    const { example } = schemas.CandidateExplanation;
    assert.ok(example, 'an example explanation');
    assert.ok(Value.Check(CandidateExplanationSchema, example), 'the example fits the schema');
    // A real explanation fits it too.
    const body = await logic();
    for (const c of body.ranked_candidates) assert.ok(Value.Check(CandidateExplanationSchema, c.explanation));
  });
});
