/**
 * Promotion by interleaving: an interleaving whose challenger file is absent is off (the same
 * answer as without it, nothing assigned); `rankd promotion decide` (the CLI, child processes)
 * promotes a challenger that wins and withdraws one that loses or reaches its time limit, on a
 * real Redis and real events (pages ranked and clicks posted over HTTP); one decision per
 * promotion, made once: two deciders at once, and a rerun after they are gone, find the same one
 * and leave the files as it says. The start is refused while a promotion of the experiment runs.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { type PromotionState, PromotionStore } from '../src/app/promotion.js';
import {
  defineApp,
  defineInterleaving,
  defineModel,
  defineRankingPipeline,
  defineRealtimeFeatures,
  Feature,
  gbdtModel,
  ProductEntity,
  Type,
} from '../src/index.js';
import { RedisConnection } from '../src/redis/connection.js';
import { RedisKeys } from '../src/redis/keys.js';
import type { RankdEvent } from '../src/server.js';
import { CLI, ROOT } from './helpers/cli-service.js';
import { uploadEntities } from './helpers/ranking-app.js';
import { startTestRedis, type TestRedis } from './helpers/redis-server.js';
import { postJson, testServer } from './helpers/server.js';

const PROJECT = 'promotion';
const project = mkdtempSync(join(tmpdir(), 'rankd-promotion-'));
mkdirSync(join(project, 'models'));
mkdirSync(join(project, 'pipelines'));
writeFileSync(join(project, 'package.json'), '{"name":"promotion-test","type":"module"}\n');
// `rankd promotion` finds the project by its app module; it never loads it.
writeFileSync(join(project, 'pipelines/main.ts'), 'export {};\n');
const CHALLENGER = 'models/challenger.json';
const SERVING = 'models/serving.json';
const candidateA = readFileSync(
  new URL('./fixtures/gbdt/xgboost/rank-pairwise.model.json', import.meta.url),
  'utf8',
);
// Another model: the same trees, another file (so another hash).
const candidateB = `${candidateA.trimEnd()}\n\n`;
const sha256 = (text: string | Buffer) => createHash('sha256').update(text).digest('hex');

const Product = ProductEntity.extend({ fields: { price: Type.Number() } });
const INPUTS = ['x:a', 'x:b', 'x:c', 'x:d', 'x:e', 'x:f'];
const X = defineRealtimeFeatures({
  name: 'x',
  entity: Product,
  features: Object.fromEntries(INPUTS.map((name) => [name.slice(2), Feature.float()])),
  compute: (p) =>
    Object.fromEntries(INPUTS.map((name, i) => [name.slice(2), (((p.price ?? 0) * (i + 3)) % 7) - 3])),
});
const Cheap = defineModel({
  name: 'Cheap',
  version: 'c1',
  entity: Product,
  score: (products) => products.map((p) => -(p.price ?? 0)),
});
const Challenger = gbdtModel({
  name: 'Challenger',
  entity: Product,
  file: join(project, CHALLENGER),
  features: INPUTS,
  whenMissing: Cheap,
  watch: false,
});
const Trial = defineInterleaving({ id: 'trial', share: 1, challenger: Challenger });
const pipeline = (name: string, path: string, interleaving?: typeof Trial) =>
  defineRankingPipeline({
    name,
    path,
    candidate: Product,
    realtimeFeatures: [X],
    model: Cheap,
    ...(interleaving === undefined ? {} : { interleaving }),
  });
const app = defineApp({
  name: 'promotion',
  pipelines: [pipeline('Interleaved', '/ranking', Trial), pipeline('Plain', '/plain')],
});

const PRODUCTS = Array.from({ length: 10 }, (_, i) => ({ product_id: `p${i}`, price: i + 0.5 }));

let redis: TestRedis;
let server: FastifyInstance;
let connection: RedisConnection;
let store: PromotionStore;

before(async () => {
  redis = await startTestRedis();
  server = await testServer(redis, { app, env: { PROJECT_NAME: PROJECT } });
  await uploadEntities(server, 'product', PRODUCTS);
  connection = new RedisConnection({ url: redis.url, connectTimeoutMs: 1000, commandTimeoutMs: 2000 });
  connection.connect();
  assert.ok(await connection.waitUntilReady(5000));
  store = new PromotionStore(connection, new RedisKeys(PROJECT, '1'));
});

after(async () => {
  await connection?.close();
  await server?.close();
  await redis?.stop();
  rmSync(project, { recursive: true, force: true });
});

type Team = 'control' | 'challenger';

async function rank(path: string, id: string) {
  const { status, body } = await postJson(server, `/api/v1${path}`, {
    request_id: id,
    candidates: PRODUCTS.map(({ product_id }) => ({ product_id })),
    user_page_size: 4,
    include_events: true,
  });
  assert.equal(status, 200, JSON.stringify(body));
  return body as { ranked_candidates: unknown[]; events: RankdEvent[] };
}

/** Serves `count` pages and clicks, on each, the first item `clicked` placed; returns how many were interleaved. */
async function servePagesClicking(prefix: string, count: number, clicked: Team): Promise<number> {
  let interleaved = 0;
  const feedback: Array<Record<string, string>> = [];
  for (let r = 0; r < count; r++) {
    const id = `${prefix}-${r}`;
    const body = await rank('/ranking', id);
    const event = body.events.find((e) => e.event_type === 'INTERLEAVING');
    if (event === undefined) continue;
    interleaved += 1;
    const page = event.event_data.page as Array<[string, Team]>;
    const item = page.find(([, team]) => team === clicked);
    if (item !== undefined) feedback.push({ request_id: id, entity_id: item[0], feedback_type: 'click' });
  }
  const { status } = await postJson(server, '/api/v1/events/feedback', { events: feedback });
  assert.equal(status, 200);
  await server.rankd.events.flush();
  return interleaved;
}

/** `rankd promotion <args>` in a child process: its exit code and output. */
function promotionCli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) =>
    execFile(
      process.execPath,
      [...CLI, 'promotion', ...args, '--app', join(project, 'pipelines/main.ts')],
      { cwd: ROOT, env: { ...process.env, REDIS_URL: redis.url, PROJECT_NAME: PROJECT } },
      (error, stdout, stderr) =>
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    ),
  );
}

/** Installs `text` as the challenger (as `rankd train --via interleave` does) and records the promotion. */
async function startTrial(
  text: string,
  times: { startedMs: number; deadlineMs: number },
): Promise<PromotionState> {
  const outcome = await store.start({
    experiment: 'trial',
    pipeline: 'Interleaved',
    ...times,
    windowMs: 3_600_000,
    feedbackTypes: ['click'],
    challengerFile: CHALLENGER,
    servingFile: SERVING,
    candidateSha256: sha256(text),
  });
  assert.ok('started' in outcome, 'no other promotion of the experiment runs');
  writeFileSync(join(project, CHALLENGER), text);
  assert.equal((await Challenger.reload()).status, 'reloaded');
  return outcome.started;
}

const decisionFields = async () =>
  Object.keys(await connection.getAllFields(new RedisKeys(PROJECT, '1').promotions())).filter((f) =>
    f.startsWith('decision:'),
  );

describe('promotion by interleaving', () => {
  test('while the challenger file is absent the interleaving is off: the same page, nothing assigned', async () => {
    assert.equal(Challenger.usingFallback, true);
    const off = await rank('/ranking', 'off-1');
    const plain = await rank('/plain', 'off-1');
    assert.deepEqual(off.ranked_candidates, plain.ranked_candidates);
    const types = (body: { events: RankdEvent[] }) => body.events.map((e) => e.event_type).sort();
    assert.deepEqual(types(off), types(plain));
    assert.ok(!types(off).includes('EXPERIMENTATION') && !types(off).includes('INTERLEAVING'));

    writeFileSync(join(project, CHALLENGER), candidateA);
    assert.equal((await Challenger.reload()).status, 'reloaded');
    assert.equal(Challenger.usingFallback, false);
    const on = await rank('/ranking', 'on-1');
    assert.ok(
      on.events.some((e) => e.event_type === 'INTERLEAVING'),
      'the file is there: interleaved',
    );

    rmSync(join(project, CHALLENGER));
    const removed = await Challenger.reload();
    assert.equal(removed.status, 'reloaded');
    assert.equal(removed.version, 'Cheap@c1');
    assert.equal(Challenger.usingFallback, true);
    const again = await rank('/ranking', 'off-2');
    assert.ok(
      !again.events.some((e) => e.event_type === 'INTERLEAVING' || e.event_type === 'EXPERIMENTATION'),
    );
  });

  test('a challenger that wins is promoted once: two deciders at once, then a rerun, agree', async () => {
    writeFileSync(join(project, SERVING), '{"the serving model": 1}\n');
    const state = await startTrial(candidateA, { startedMs: Date.now(), deadlineMs: Date.now() + 3_600_000 });
    const refused = await store.start({ ...state, startedMs: Date.now() });
    assert.ok(
      'running' in refused && refused.running.state.id === state.id,
      'one promotion of an experiment at a time',
    );

    const pages = await servePagesClicking('win', 60, 'challenger');
    assert.equal(pages, 60);
    const [first, second] = await Promise.all([promotionCli('decide'), promotionCli('decide')]);
    for (const run of [first, second]) {
      assert.equal(run.code, 0, run.stdout + run.stderr);
      assert.match(run.stdout, /promotion of trial: promoted \(the challenger won\)/);
    }
    const decidedHere = [first, second].filter((run) => !run.stdout.includes('(decided before)'));
    assert.equal(decidedHere.length, 1, `${first.stdout}\n${second.stdout}`);
    assert.deepEqual(await decisionFields(), [`decision:${state.id}`]);
    assert.equal(readFileSync(join(project, SERVING), 'utf8'), candidateA);
    assert.equal(existsSync(join(project, CHALLENGER)), false);
    const decision = (await store.byId(state.id))?.decision;
    assert.equal(decision?.outcome, 'promoted');
    assert.equal(decision?.reason, 'challenger_wins');
    assert.ok((decision?.wins ?? 0) > 0 && decision?.losses === 0, JSON.stringify(decision));

    // After a restart: the same decision, read, and nothing changed.
    const servedAt = statSync(join(project, SERVING)).mtimeMs;
    await servePagesClicking('after-win', 20, 'control');
    const rerun = await promotionCli('decide');
    assert.equal(rerun.code, 0, rerun.stderr);
    assert.match(rerun.stdout, /promoted \(the challenger won\).*\(decided before\)/);
    assert.match(rerun.stdout, /already installed as models\/serving\.json/);
    assert.equal(statSync(join(project, SERVING)).mtimeMs, servedAt);
    assert.deepEqual(await store.byId(state.id).then((p) => p?.decision), decision);
  });

  test('a challenger that loses is withdrawn: its file removed, the serving one untouched', async () => {
    assert.equal((await Challenger.reload()).version, 'Cheap@c1', 'the promoted challenger file is gone');
    const state = await startTrial(candidateB, { startedMs: Date.now(), deadlineMs: Date.now() + 3_600_000 });
    await servePagesClicking('lose', 60, 'control');
    const run = await promotionCli('decide');
    assert.equal(run.code, 3, run.stdout + run.stderr);
    assert.match(run.stdout, /promotion of trial: withdrawn \(the challenger lost\)/);
    assert.equal(existsSync(join(project, CHALLENGER)), false);
    assert.equal(readFileSync(join(project, SERVING), 'utf8'), candidateA);
    assert.equal((await store.byId(state.id))?.decision?.reason, 'challenger_loses');
  });

  test('undecided before the time limit: nothing recorded, nothing moved; at the limit: withdrawn', async () => {
    await Challenger.reload();
    const state = await startTrial(candidateB, { startedMs: Date.now(), deadlineMs: Date.now() + 3_600_000 });
    // As many wins as losses: the test cannot decide.
    await servePagesClicking('even-a', 10, 'challenger');
    await servePagesClicking('even-b', 10, 'control');
    const waiting = await promotionCli('decide');
    assert.equal(waiting.code, 4, waiting.stdout + waiting.stderr);
    assert.match(waiting.stdout, /running since .*undecided/);
    assert.equal((await store.byId(state.id))?.decision, undefined);
    assert.equal(readFileSync(join(project, CHALLENGER), 'utf8'), candidateB);
    const status = await promotionCli('status');
    assert.equal(status.code, 0, status.stderr);
    assert.match(status.stdout, /20 interleaved pages, challenger wins \/ losses \/ ties 10 \/ 10 \/ 0/);

    // The same promotion with its deadline passed (its state written as the start would have).
    const key = new RedisKeys(PROJECT, '1').promotions();
    const expired = { ...state, deadlineMs: Date.now() - 1 };
    await connection.evalOnKey(key, "return redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])", [
      `state:${state.id}`,
      JSON.stringify(expired),
    ]);
    const late = await promotionCli('decide');
    assert.equal(late.code, 3, late.stdout + late.stderr);
    assert.match(late.stdout, /withdrawn \(undecided at the time limit\)/);
    assert.equal(existsSync(join(project, CHALLENGER)), false);
    assert.equal((await store.byId(state.id))?.decision?.reason, 'time_limit');
  });

  test('concurrent decisions of one promotion: the first recorded holds for every caller', async () => {
    const state = await startTrial(candidateA, { startedMs: Date.now(), deadlineMs: Date.now() + 1000 });
    const figures = { impressions: 1, wins: 1, losses: 0, ties: 0, likelihoodRatio: 1, alwaysValidPValue: 1 };
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        store.decide(state.id, {
          ...figures,
          decidedMs: 1000 + i,
          outcome: i % 2 === 0 ? 'promoted' : 'withdrawn',
          reason: i % 2 === 0 ? 'challenger_wins' : 'challenger_loses',
        }),
      ),
    );
    assert.equal(results.filter((r) => r.mine).length, 1);
    const held = results.find((r) => r.mine)?.decision;
    for (const r of results) assert.deepEqual(r.decision, held);
  });
});
