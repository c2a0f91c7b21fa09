/**
 * Experiments: deterministic assignment (same unit, same variant, in any process), shares kept
 * within statistical bounds, a variant switching the model and a business-logic weight, the
 * EXPERIMENTATION events and their presence in the training export, and external providers.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { eventRedisOf } from '../src/events/create-sink.js';
import { streamEvents } from '../src/events/export/event-sources.js';
import { exportTrainingData } from '../src/events/export/export-training-data.js';
import { bucketOf } from '../src/experiments/define-experiment.js';
import {
  defineApp,
  defineBusinessLogic,
  defineExperiment,
  defineModel,
  defineRankingPipeline,
  type ExperimentProvider,
  experimentModel,
  getExperimentVariant,
  UserEntity,
} from '../src/index.js';
import type { RankdEvent } from '../src/server.js';
import { PRODUCTS } from './helpers/events-app.js';
import { TemplateProduct, uploadEntities } from './helpers/ranking-app.js';
import { startTestRedis, type TestRedis } from './helpers/redis-server.js';
import { postJson, testConfig, testServer } from './helpers/server.js';

const RankerTest = defineExperiment({
  id: 'ranker',
  unit: 'user',
  variants: [
    { name: 'control', share: 0.5, params: {} },
    { name: 'treatment', share: 0.5, params: {} },
  ],
});

const BoostTest = defineExperiment({
  id: 'boost',
  unit: 'request',
  variants: [
    { name: 'none', share: 0.5, params: { boost: 0 } },
    { name: 'strong', share: 0.5, params: { boost: 1000 } },
  ],
});

const PriceModel = defineModel({
  name: 'PriceModel',
  version: 'p1',
  entity: TemplateProduct,
  score: (products) => products.map((p) => p.price as number),
});
const StockModel = defineModel({
  name: 'StockModel',
  version: 's1',
  entity: TemplateProduct,
  score: (products) => products.map((p) => p.number_in_stock as number),
});

/** Lifts p01 by the variant's `boost`. */
const BoostP01 = defineBusinessLogic({
  name: 'BoostP01',
  entity: TemplateProduct,
  apply(candidates) {
    const { boost } = getExperimentVariant(BoostTest).params;
    return candidates.map((c) => (c.id === 'p01' ? { ...c, score: c.score + boost } : c));
  },
});

const ExperimentPipeline = defineRankingPipeline({
  name: 'ExperimentPipeline',
  path: '/ranking',
  candidate: TemplateProduct,
  entities: { user: UserEntity },
  model: experimentModel({ experiment: RankerTest, models: { control: PriceModel, treatment: StockModel } }),
  businessLogic: [BoostP01],
  experiments: [BoostTest],
});

const variantOf = (experiment: { id: string; salt: string }, unit: string, names: [string, string]) =>
  bucketOf(experiment.id, experiment.salt, unit) < 0.5 ? names[0] : names[1];
/** The first user ids (u0, u1, ...) that land in each ranker variant. */
function userIn(variant: 'control' | 'treatment'): string {
  for (let i = 0; ; i++)
    if (variantOf(RankerTest, `u${i}`, ['control', 'treatment']) === variant) return `u${i}`;
}

let redis: TestRedis;
let server: FastifyInstance;
const PROJECT = 'experiments';

before(async () => {
  redis = await startTestRedis();
  server = await testServer(redis, {
    app: defineApp({ name: 'experiments', pipelines: [ExperimentPipeline] }),
    env: { PROJECT_NAME: PROJECT, EVENTS_FLUSH_INTERVAL_MS: '60000' },
  });
  await uploadEntities(server, 'product', PRODUCTS);
});

after(async () => {
  await server?.close();
  await redis?.stop();
});

const IDS = ['p01', 'p02', 'p03', 'p04'];
const rank = (request_id: string, user?: string, target = server) =>
  postJson(target, '/api/v1/ranking', {
    request_id,
    candidates: IDS.map((product_id) => ({ product_id })),
    user_page_size: 4,
    include_events: true,
    ...(user === undefined ? {} : { user: { user_id: user } }),
  });

describe('assignment', () => {
  test('the bucket is the first 52 bits of SHA-1("id:salt:unit"), so anyone can recompute it', () => {
    for (const unit of ['u1', 'u2', 'request-42']) {
      const hex = createHash('sha1').update(`ranker::${unit}`).digest('hex');
      assert.equal(bucketOf('ranker', '', unit), Number.parseInt(hex.slice(0, 13), 16) / 2 ** 52);
    }
    assert.notEqual(bucketOf('ranker', 'v2', 'u1'), bucketOf('ranker', '', 'u1'), 'a salt re-randomises');
  });

  test('the same unit gets the same variant across calls and across processes', async () => {
    const units = Array.from({ length: 200 }, (_, i) => `user-${i}`);
    const here = units.map((u) => RankerTest.variantAt(bucketOf('ranker', '', u)).name);
    assert.deepEqual(
      units.map((u) => RankerTest.variantAt(bucketOf('ranker', '', u)).name),
      here,
    );
    const script =
      "import { bucketOf, defineExperiment } from './src/experiments/define-experiment.ts';" +
      "const e = defineExperiment({ id: 'ranker', variants: [{ name: 'control', share: 0.5 }, { name: 'treatment', share: 0.5 }] });" +
      `console.log(JSON.stringify(${JSON.stringify(units)}.map((u) => e.variantAt(bucketOf('ranker', '', u)).name)));`;
    const child = await new Promise<string>((resolve, reject) =>
      execFile(
        process.execPath,
        ['--import', 'tsx', '--input-type=module', '-e', script],
        { cwd: new URL('..', import.meta.url).pathname },
        (error, stdout) => (error ? reject(error) : resolve(stdout)),
      ),
    );
    assert.deepEqual(JSON.parse(child), here);
  });

  test('shares are respected within 3 sigma of a binomial over 10,000 units', () => {
    const split = defineExperiment({
      id: 'split',
      unit: 'user',
      variants: [
        { name: 'a', share: 0.2 },
        { name: 'b', share: 0.3 },
        { name: 'c', share: 0.5 },
      ],
    });
    const n = 10_000;
    const counts = new Map<string, number>();
    for (let i = 0; i < n; i++) {
      const name = split.variantAt(bucketOf('split', '', `u${i}`)).name;
      counts.set(name, (counts.get(name) ?? 0) + 1);
    }
    for (const { name, share } of split.variants) {
      const sigma = Math.sqrt(n * share * (1 - share));
      const count = counts.get(name) ?? 0;
      assert.ok(
        Math.abs(count - n * share) <= 3 * sigma,
        `${name}: ${count} of ${n}, expected ${n * share} ± ${3 * sigma}`,
      );
    }
  });

  test('declarations are checked when the app loads: shares sum to 1, names unique, one id per experiment', () => {
    const variants = (...shares: number[]) => shares.map((share, i) => ({ name: `v${i}`, share }));
    assert.throws(() => defineExperiment({ id: 'x', variants: variants(0.5, 0.4) }), /sum to 0.9, not 1/);
    assert.throws(() => defineExperiment({ id: 'x', variants: variants(1.5, -0.5) }), /share 1.5/);
    assert.throws(() => defineExperiment({ id: 'x', variants: [] }), /no variants/);
    assert.throws(
      () =>
        defineExperiment({
          id: 'x',
          variants: [
            { name: 'a', share: 0.5 },
            { name: 'a', share: 0.5 },
          ],
        }),
      /listed twice/,
    );
    assert.doesNotThrow(() => defineExperiment({ id: 'x', variants: variants(0.1, 0.2, 0.7) }));
    assert.throws(
      () => experimentModel({ experiment: RankerTest, models: { control: PriceModel } }),
      /no model for variant treatment/,
    );
    const twin = defineExperiment({ id: 'ranker', variants: variants(1) });
    assert.throws(
      () => defineApp({ pipelines: [ExperimentPipeline], experiments: [twin] }),
      /two different experiments have the id ranker/,
    );
  });
});

describe('in a pipeline', () => {
  const scores = (body: { ranked_candidates: Array<{ candidate_id: string; ranked_score: number }> }) =>
    Object.fromEntries(body.ranked_candidates.map((r) => [r.candidate_id, r.ranked_score]));
  const assignments = (events: RankdEvent[]) =>
    events.filter((e) => e.event_type === 'EXPERIMENTATION').map((e) => e.event_data);
  /** A request id whose boost variant is `none`, so scores are the model's alone. */
  const unboosted = (prefix: string) => {
    for (let i = 0; ; i++)
      if (variantOf(BoostTest, `${prefix}-${i}`, ['none', 'strong']) === 'none') return `${prefix}-${i}`;
  };

  test('the user’s variant picks the model: control scores by price, treatment by stock; MODEL events name it', async () => {
    for (const [variant, model, version, score] of [
      ['control', 'PriceModel', 'p1', (i: number) => i + 0.5],
      ['treatment', 'StockModel', 's1', (i: number) => (i % 2 === 0 ? 3 : 0)],
    ] as const) {
      const user = userIn(variant);
      const res = await rank(unboosted(variant), user);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(
        scores(res.body),
        Object.fromEntries(IDS.map((id) => [id, score(Number(id.slice(1)))])),
      );
      const models = res.body.events.filter((e: RankdEvent) => e.event_type === 'MODEL');
      assert.ok(
        models.every(
          (e: RankdEvent) => e.event_data.model_name === model && e.event_data.model_version === version,
        ),
      );
      const [ranker] = assignments(res.body.events).filter((a) => a.experiment_id === 'ranker');
      assert.deepEqual(
        { ...ranker, timestamp: undefined, metadata: undefined },
        {
          experiment_id: 'ranker',
          entity_id: user,
          result: variant,
          timestamp: undefined,
          metadata: undefined,
          has_error: false,
        },
      );
      assert.deepEqual(ranker?.metadata, {
        unit: 'user',
        unit_type: 'user',
        provider: 'built-in',
        bucket: bucketOf('ranker', '', user),
      });
    }
  });

  test('the same user keeps the model across requests; a request without a user is assigned by its request_id', async () => {
    const user = userIn('treatment');
    for (let i = 0; i < 5; i++) {
      const res = await rank(`again-${i}`, user);
      assert.equal(
        assignments(res.body.events).find((a) => a.experiment_id === 'ranker')?.result,
        'treatment',
      );
    }
    const anonymous = await rank('anonymous-1');
    const ranker = assignments(anonymous.body.events).find((a) => a.experiment_id === 'ranker');
    assert.equal(ranker?.entity_id, 'anonymous-1');
    assert.equal((ranker?.metadata as { unit_type?: string } | undefined)?.unit_type, 'request');
    assert.equal(ranker?.result, variantOf(RankerTest, 'anonymous-1', ['control', 'treatment']));
  });

  test('a variant’s params reach business logic: the strong boost lifts p01 to the top', async () => {
    const user = userIn('control');
    for (let i = 0; i < 10; i++) {
      const id = `boost-${i}`;
      const res = await rank(id, user);
      const strong = variantOf(BoostTest, id, ['none', 'strong']) === 'strong';
      assert.equal(res.body.ranked_candidates[0].candidate_id, strong ? 'p01' : 'p04');
      assert.equal(scores(res.body).p01, 1.5 + (strong ? 1000 : 0));
      assert.equal(
        assignments(res.body.events).find((a) => a.experiment_id === 'boost')?.result,
        strong ? 'strong' : 'none',
      );
    }
  });

  test('EXPERIMENTATION events reach the stream and the training export carries each row’s variants', async () => {
    const user = userIn('treatment');
    const requestId = unboosted('exported');
    await rank(requestId, user);
    await server.rankd.events.flush();
    const redisConnection = eventRedisOf(testConfig(redis));
    try {
      assert.ok(await redisConnection.waitUntilReady(2000));
      const out = new PassThrough();
      const chunks: Buffer[] = [];
      out.on('data', (c: Buffer) => chunks.push(c));
      await exportTrainingData({
        source: streamEvents(redisConnection, `${PROJECT}:events`, 0, Date.now()),
        format: 'jsonl',
        out,
        sinceMs: 0,
        untilMs: Date.now(),
        windowMs: 3_600_000,
      });
      const rows = Buffer.concat(chunks)
        .toString()
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line))
        .filter((row) => row.request_id === requestId);
      assert.equal(rows.length, 4);
      for (const row of rows) {
        assert.deepEqual(row.experiments, { ranker: 'treatment', boost: 'none' });
        assert.equal(row.model_name, 'StockModel');
        assert.equal(row.model_version, 's1');
      }
    } finally {
      await redisConnection.close();
    }
  });
});

describe('an external provider', () => {
  async function serverWith(provider: ExperimentProvider) {
    const started = await testServer(redis, {
      app: defineApp({ name: 'provided', pipelines: [ExperimentPipeline], experimentProvider: provider }),
      env: { PROJECT_NAME: 'provided', EVENTS_SINK: 'off' },
    });
    await uploadEntities(started, 'product', PRODUCTS);
    return started;
  }

  test('replaces the hash: its answer is the variant; a failure or an unknown name falls back to the first variant, flagged', async () => {
    const seen: unknown[] = [];
    const provided = await serverWith({
      name: 'flags',
      async assign(experimentId, unitId, attributes) {
        seen.push({ experimentId, unitId, attributes });
        if (unitId === 'broken') throw new Error('flag service timeout');
        if (unitId === 'odd') return 'purple';
        return experimentId === 'ranker' ? 'treatment' : 'strong';
      },
    });
    try {
      const ok = await rank('p-1', 'u-7', provided);
      assert.equal(ok.status, 200);
      const ranker = assignments(ok.body.events).find((a) => a.experiment_id === 'ranker');
      assert.equal(ranker?.result, 'treatment');
      assert.deepEqual(ranker?.metadata, { unit: 'user', unit_type: 'user', provider: 'flags' });
      assert.equal(ok.body.ranked_candidates[0].candidate_id, 'p01', 'the provider’s strong boost applied');
      assert.deepEqual(
        seen.find((call) => (call as { experimentId: string }).experimentId === 'ranker'),
        {
          experimentId: 'ranker',
          unitId: 'u-7',
          attributes: {
            unit_type: 'user',
            request_id: 'p-1',
            pipeline: 'ExperimentPipeline',
            user: { user_id: 'u-7' },
          },
        },
      );
      for (const [user, error] of [
        ['broken', 'flag service timeout'],
        ['odd', 'the provider answered "purple", not a variant'],
      ] as const) {
        const res = await rank(`p-${user}`, user, provided);
        assert.equal(res.status, 200);
        const fallback = assignments(res.body.events).find((a) => a.experiment_id === 'ranker');
        assert.equal(fallback?.result, 'control');
        assert.equal(fallback?.has_error, true);
        assert.equal((fallback?.metadata as { error?: string } | undefined)?.error, error);
      }
    } finally {
      await provided.close();
    }
  });

  function assignments(events: RankdEvent[]) {
    return events.filter((e) => e.event_type === 'EXPERIMENTATION').map((e) => e.event_data);
  }
});
