/**
 * An index that holds no entity of a type the app declares (a Redis restarted without its data)
 * is noticed: a warning at the first check and again while it stays so, `/readyz` naming the type
 * (still ready: a deployment may load its catalogue through these very servers), the
 * `rankd_index_empty` gauge, and every ranked candidate counted in `x-rankd-not-in-index`. Once
 * entities are there again, all of it says so. Runs on a Redis Cluster too (the check scans every master).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildServer } from '../src/http/build-server.js';
import { defineModel } from '../src/index.js';
import { starterApp, TemplateProduct } from './helpers/ranking-app.js';
import { startTestRedis, type TestRedis } from './helpers/redis-server.js';
import { postJson, testConfig } from './helpers/server.js';

const Constant = defineModel({
  name: 'Constant',
  entity: TemplateProduct,
  features: [],
  score: (products) => products.map(() => 0),
});

let redis: TestRedis;
let server: FastifyInstance;
const lines: Array<{ level: number; msg: string }> = [];

before(async () => {
  redis = await startTestRedis();
  server = await buildServer({
    // Checked every 50 ms here, so that the test sees a second check soon after a change.
    config: testConfig(redis, { LOG_LEVEL: 'info' }),
    emptyIndexCheckIntervalMs: 50,
    app: starterApp('empty-index', { model: Constant }),
    logStream: { write: (line: string) => void lines.push(JSON.parse(line)) },
  });
  assert.ok(await server.rankd.redis.waitUntilReady(5000));
});

after(async () => {
  await server?.close();
  await redis?.stop();
});

async function readyz(): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await server.inject({ method: 'GET', url: '/readyz' });
  return { status: res.statusCode, body: res.json() };
}

/** Polls `/readyz` until `done` says its answer is the awaited one (the checks run in the background). */
async function readyzUntil(done: (body: Record<string, unknown>) => boolean) {
  for (let i = 0; i < 600; i++) {
    const answer = await readyz();
    if (done(answer.body)) return answer;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.fail(`/readyz never said so: ${JSON.stringify(await readyz())}`);
}

async function emptyGauge(): Promise<string | undefined> {
  const text = (await server.inject({ method: 'GET', url: '/metrics' })).body;
  return /^rankd_index_empty\{entity_type="product"\} (\d)$/m.exec(text)?.[1];
}

test('an empty index: /readyz names the type (still 200), a warning, the gauge at 1, every candidate counted', async () => {
  const empty = await readyzUntil((body) => Array.isArray(body.empty_entity_types));
  assert.equal(empty.status, 200);
  assert.deepEqual(empty.body, { status: 'ready', empty_entity_types: ['product'] });
  const warned = lines.filter((line) => line.msg.startsWith('the index holds no product entity'));
  // Once, however many checks ran since: the warning is repeated every ten minutes at most.
  assert.equal(warned.length, 1, JSON.stringify(lines));
  assert.equal(warned[0]?.level, 40);
  assert.match(warned[0]?.msg ?? '', /Load the catalogue .*rankd index load/);
  assert.equal(await emptyGauge(), '1');

  const ranked = await server.inject({
    method: 'POST',
    url: '/api/v1/ranking',
    payload: { request_id: 'empty-1', candidates: [{ product_id: 'p1' }, { product_id: 'p2' }] },
  });
  assert.equal(ranked.statusCode, 200, ranked.body);
  assert.equal(ranked.headers['x-rankd-not-in-index'], 'candidates=2');
});

test('entities loaded: /readyz says ready alone, the log says so once, the gauge is 0', async () => {
  const upload = await postJson(server, '/api/v1/entities/upload', {
    entity_type: 'product',
    entities: [{ product_id: 'p1', title: 'Candle' }],
  });
  assert.equal(upload.status, 200, JSON.stringify(upload.body));
  const filled = await readyzUntil((body) => body.empty_entity_types === undefined);
  assert.deepEqual(filled.body, { status: 'ready' });
  assert.equal(lines.filter((line) => line.msg === 'the index holds product entities again').length, 1);
  assert.equal(await emptyGauge(), '0');
});
