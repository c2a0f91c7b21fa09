/**
 * Shadow runs: a pipeline's shadow model scores after the answer is sent, from the request's
 * inputs; the answer is the served model's alone; a SHADOW event (both rankings, the items that
 * moved most, explained) reaches the stream with the request's other events; a failing shadow is
 * recorded, not felt; and `rankd evaluate --shadow` (the CLI) reports the overlap and the
 * requests that differ most. Rank-biased overlap against values worked by hand.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { eventRedisOf } from '../src/events/create-sink.js';
import { streamEvents } from '../src/events/export/event-sources.js';
import { rankBiasedOverlap } from '../src/experiments/shadow-report.js';
import { RedisKeys } from '../src/redis/keys.js';
import type { RankdEvent } from '../src/server.js';
import app from './fixtures/interleaving/app.js';
import { CLI, ROOT } from './helpers/cli-service.js';
import { sleep, uploadEntities } from './helpers/ranking-app.js';
import { startTestRedis, type TestRedis } from './helpers/redis-server.js';
import { postJson, testConfig, testServer } from './helpers/server.js';

const PRODUCTS = Array.from({ length: 12 }, (_, i) => ({
  product_id: `p${String(i).padStart(2, '0')}`,
  price: i + 0.5,
}));
const IDS = PRODUCTS.map((p) => p.product_id);
const PROJECT = 'shadow';

let redis: TestRedis;
let server: FastifyInstance;

before(async () => {
  redis = await startTestRedis();
  server = await testServer(redis, { app, env: { PROJECT_NAME: PROJECT } });
  await uploadEntities(server, 'product', PRODUCTS);
});

after(async () => {
  await server?.close();
  await redis?.stop();
});

const rank = (path: string, request_id: string, extra: Record<string, unknown> = {}) =>
  postJson(server, `/api/v1${path}`, {
    request_id,
    candidates: IDS.map((product_id) => ({ product_id })),
    user_page_size: 4,
    ...extra,
  });

/** The events of the stream for `requestId`, once `type` is among them (the shadow runs after the answer). */
async function streamed(requestId: string, type: string): Promise<RankdEvent[]> {
  const events = eventRedisOf(testConfig(redis, { PROJECT_NAME: PROJECT }));
  try {
    assert.ok(await events.waitUntilReady(5000));
    const key = new RedisKeys(PROJECT, 'v1').events();
    for (let attempt = 0; attempt < 200; attempt++) {
      await server.rankd.events.flush();
      const found: RankdEvent[] = [];
      for await (const { event } of streamEvents(events, key, 0, Date.now() + 1000))
        if (event.request_id === requestId) found.push(event);
      if (found.some((e) => e.event_type === type)) return found;
      await sleep(25);
    }
    assert.fail(`no ${type} event for ${requestId} in the stream`);
  } finally {
    await events.close();
  }
}

describe('a shadow run', () => {
  test("the answer is the served model's; the SHADOW event, in the request's stream entry, holds both rankings and the movers explained", async () => {
    const { status, body } = await rank('/shadowed', 'shadow-1', { include_events: true });
    assert.equal(status, 200, JSON.stringify(body));
    assert.deepEqual(
      body.ranked_candidates.map((c: { candidate_id: string }) => c.candidate_id),
      IDS.slice(0, 4),
      'cheapest first: the served model alone',
    );
    assert.ok(
      body.events.every((e: RankdEvent) => e.event_type !== 'SHADOW'),
      'the answer was sent before the shadow ran',
    );
    const events = await streamed('shadow-1', 'SHADOW');
    assert.ok(
      events.some((e) => e.event_type === 'IMPRESSION'),
      'with the request, in one entry',
    );
    const shadow = events.find((e) => e.event_type === 'SHADOW')?.event_data as Record<string, unknown>;
    assert.deepEqual(shadow.served_model, { name: 'Cheap', version: 'c1' });
    assert.deepEqual(shadow.shadow_model, { name: 'Dear', version: 'd1' });
    assert.equal(shadow.candidates, 12);
    assert.equal(shadow.k, 4);
    assert.deepEqual(
      (shadow.served as Array<[string, number]>).map(([id]) => id),
      IDS,
      'all 12: fewer than 20',
    );
    assert.deepEqual(
      (shadow.shadow as Array<[string, number]>).map(([id]) => id),
      [...IDS].reverse(),
    );
    assert.deepEqual((shadow.shadow as Array<[string, number]>)[0], ['p11', 11.5]);
    const movers = shadow.movers as Array<Record<string, unknown>>;
    // The ends swap places: p00 and p11 move 11 places, p01 and p10 nine.
    assert.deepEqual(
      movers.map((m) => [m.entity_identifier, m.served_position, m.shadow_position]),
      [
        ['p00', 0, 11],
        ['p11', 11, 0],
        ['p01', 1, 10],
      ],
    );
    assert.deepEqual(movers[0]?.served, {
      score: -0.5,
      contributions: null,
      reason: 'the model does not explain its scores',
    });
    assert.deepEqual(movers[0]?.shadow, { score: 0.5, contributions: { 'product:price': 0.5 } });
  });

  test('a failing shadow model is recorded in its SHADOW event; the answer does not feel it', async () => {
    const { status, body } = await rank('/broken-shadow', 'broken-1');
    assert.equal(status, 200, JSON.stringify(body));
    const events = await streamed('broken-1', 'SHADOW');
    const shadow = events.find((e) => e.event_type === 'SHADOW')?.event_data;
    assert.equal(shadow?.error, 'the broken model fails');
  });

  test('a pipeline without a shadow records none', async () => {
    await rank('/plain', 'plain-1');
    const events = await streamed('plain-1', 'IMPRESSION');
    assert.ok(!events.some((e) => e.event_type === 'SHADOW'));
  });

  test('rankd evaluate --shadow reports the overlap, the change rates and the requests that differ most', async () => {
    // A second request whose two rankings hold the same first items: only the first two candidates.
    await postJson(server, '/api/v1/shadowed', {
      request_id: 'shadow-2',
      candidates: [{ product_id: 'p00' }, { product_id: 'p01' }],
      user_page_size: 4,
    });
    await streamed('shadow-2', 'SHADOW');
    const run = (...args: string[]) =>
      new Promise<string>((resolve, reject) =>
        execFile(
          process.execPath,
          [...CLI, 'evaluate', '--shadow', ...args],
          { cwd: ROOT, env: { ...process.env, REDIS_URL: redis.url, PROJECT_NAME: PROJECT } },
          (error, stdout, stderr) =>
            error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout),
        ),
      );
    const report = JSON.parse(await run('--json', '--top', '1'));
    assert.equal(report.requests, 2);
    assert.equal(report.failed, 1, 'the broken model');
    // shadow-1: top 4 all replaced; shadow-2: p00/p01 swapped, none replaced.
    assert.equal(report.orderChangeRate, 1);
    assert.equal(report.topKChangeRate, 0.5);
    assert.equal(report.meanReplacedShare, 0.5);
    assert.equal(report.biggest.length, 1);
    assert.equal(report.biggest[0].requestId, 'shadow-1');
    assert.equal(report.biggest[0].rbo, rankBiasedOverlap(IDS, [...IDS].reverse()));
    const text = await run('--top', '1');
    assert.match(text, /2 requests compared, 1 failed/);
    assert.match(text, /served Cheap \(c1\) vs shadow Dear \(d1\): 2 requests/);
    assert.match(text, /shadow-1 .*overlap 0\.\d+, 4 of the top 4 replaced/);
    assert.match(
      text,
      /p00: served #1 → shadow #12; served -0\.5 \(the model does not explain its scores\); shadow 0\.5 \(product:price \+0\.5\)/,
    );
  });
});

test('rank-biased overlap: 1 for the same order, 0 for nothing in common, the top weighing most', () => {
  assert.equal(rankBiasedOverlap(['a', 'b', 'c'], ['a', 'b', 'c']), 1);
  assert.equal(rankBiasedOverlap(['a', 'b'], ['c', 'd']), 0);
  // Depth 2, p = 0.9, a and b swapped: X1 = 0, X2 = 2. RBO_ext = 1·0.81 + (0.1/0.9)·(0·0.9 + 1·0.81) = 0.9.
  assert.ok(Math.abs(rankBiasedOverlap(['a', 'b'], ['b', 'a']) - 0.9) < 1e-15);
  // Depth 3, the last two swapped: X = 1, 1, 3. 0.729 + (0.1/0.9)·(0.9 + 0.405 + 0.729) = 0.955.
  assert.ok(Math.abs(rankBiasedOverlap(['a', 'b', 'c'], ['a', 'c', 'b']) - 0.955) < 1e-12);
  assert.ok(
    rankBiasedOverlap(['a', 'b', 'c'], ['b', 'a', 'c']) < rankBiasedOverlap(['a', 'b', 'c'], ['a', 'c', 'b']),
  );
});
