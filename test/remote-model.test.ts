import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { defineApp, linearModel, type RemoteModelOptions, remoteModel } from '../src/index.js';
import { freePort } from './helpers/free-port.js';
import { Item, type ItemInput, itemPipeline, rank } from './helpers/model-app.js';
import { sleep } from './helpers/ranking-app.js';
import { startTestRedis, type TestRedis } from './helpers/redis-server.js';
import { testServer } from './helpers/server.js';

/** What the scoring server saw on one path. */
interface PathLog {
  batches: Array<{ inputs: Array<Array<number | null>>; features: string[] }>;
  inFlight: number;
  maxInFlight: number;
}

const logs = new Map<string, PathLog>();
const logOf = (path: string): PathLog => {
  let log = logs.get(path);
  if (log === undefined) {
    log = { batches: [], inFlight: 0, maxInFlight: 0 };
    logs.set(path, log);
  }
  return log;
};

/** Healthy answers score = 10 × first input + second input (missing as 0). */
const healthyScore = (row: Array<number | null>) => 10 * (row[0] ?? 0) + (row[1] ?? 0);

/** The test's scoring service: one behaviour per path. */
async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
  const path = request.url ?? '/';
  const log = logOf(path);
  log.inFlight++;
  log.maxInFlight = Math.max(log.maxInFlight, log.inFlight);
  try {
    let text = '';
    for await (const chunk of request) text += chunk;
    const body = JSON.parse(text) as PathLog['batches'][number];
    log.batches.push(body);
    const json = (value: unknown) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify(value));
    };
    switch (path) {
      case '/healthy':
        // Long enough that the batches of one request overlap, so the concurrency limit matters.
        await sleep(30);
        return json({ scores: body.inputs.map(healthyScore) });
      case '/slow':
        await sleep(400);
        return json({ scores: body.inputs.map(() => 1) });
      case '/failing':
        response.writeHead(500).end('boom');
        return;
      case '/short':
        return json({ scores: body.inputs.slice(1).map(() => 1) });
      case '/garbage':
        response.writeHead(200, { 'content-type': 'application/json' }).end('{"scores": [1,');
        return;
      case '/strings':
        return json({ scores: body.inputs.map(() => 'high') });
      default:
        response.writeHead(404).end();
    }
  } finally {
    log.inFlight--;
  }
}

const dir = mkdtempSync(join(tmpdir(), 'rankd-remote-'));
const fallbackFile = join(dir, 'fallback.json');
writeFileSync(fallbackFile, JSON.stringify({ weights: { 'x:a': 1 }, bias: 1000 }));

let scoringPort = 0;
let downPort = 0;
let scoring: Server;
let redis: TestRedis;
let server: FastifyInstance;

const FEATURES = ['x:a', 'x:b'];
const remote = (name: string, path: string, options: Partial<RemoteModelOptions> = {}) =>
  remoteModel({
    name,
    // Models are declared in before(), once the ports are known.
    url: `http://127.0.0.1:${path === '/down' ? downPort : scoringPort}${path}`,
    features: FEATURES,
    fallback: 0.5,
    // Generous: only the slow model's short timeout is under test; a busy machine must not turn
    // another model's answer into a timeout.
    timeoutMs: 10_000,
    ...options,
  });

/** 20 items: batches of 3 make 6 full ones and a last one of 2. */
const ITEMS: ItemInput[] = Array.from({ length: 20 }, (_, i) => ({
  item_id: `r${i}`,
  a: i,
  ...(i % 4 === 0 ? {} : { b: i / 10 }),
}));

let models: Record<string, ReturnType<typeof remote>>;
let app: ReturnType<typeof defineApp>;

before(async () => {
  [scoringPort, downPort] = await Promise.all([freePort(), freePort()]);
  scoring = createServer((request, response) => {
    handle(request, response).catch(() => response.destroy());
  });
  await new Promise<void>((resolve) => scoring.listen(scoringPort, '127.0.0.1', resolve));
  const LocalFallback = linearModel({ name: 'local', file: fallbackFile, watch: false });
  models = {
    healthy: remote('healthy', '/healthy', { batchSize: 3, concurrency: 2 }),
    slow: remote('slow', '/slow', { batchSize: 5, retries: 1, timeoutMs: 100 }),
    failing: remote('failing', '/failing', { batchSize: 10, retries: 2, fallback: LocalFallback }),
    short: remote('short', '/short', { batchSize: 20 }),
    garbage: remote('garbage', '/garbage', { batchSize: 20 }),
    strings: remote('strings', '/strings', { batchSize: 20 }),
    down: remote('down', '/down', { batchSize: 4, retries: 0, warnEvery: 2 }),
  };
  app = defineApp({
    name: 'remote-test',
    entities: [Item],
    pipelines: Object.entries(models).map(([path, model]) => itemPipeline(path, model)),
  });
  redis = await startTestRedis();
  server = await testServer(redis, { app });
});

after(async () => {
  await server?.close();
  scoring?.closeAllConnections();
  await new Promise((resolve) => scoring?.close(resolve));
  await redis?.stop();
  rmSync(dir, { recursive: true, force: true });
});

beforeEach(() => logs.clear());

/** Ranks ITEMS with the model at `path`; the request itself must always succeed. */
async function rankAll(path: string) {
  const ranked = await rank(server, path, ITEMS);
  assert.equal(ranked.status, 200, JSON.stringify(ranked.body));
  assert.equal(ranked.scores.size, ITEMS.length);
  return ranked.scores;
}

describe('remote model', () => {
  test("a healthy endpoint's scores are used; batches respect batchSize and concurrency", async () => {
    const scores = await rankAll('healthy');
    for (const item of ITEMS)
      assert.equal(scores.get(item.item_id), healthyScore([item.a ?? 0, item.b ?? null]));
    const log = logOf('/healthy');
    assert.deepEqual(
      log.batches.map((b) => b.inputs.length).sort(),
      [2, 3, 3, 3, 3, 3, 3],
      'ceil(20 / 3) batches of at most 3',
    );
    assert.ok(log.maxInFlight <= 2, `at most 2 requests in flight, saw ${log.maxInFlight}`);
    assert.ok(log.maxInFlight === 2, 'batches of one request do run concurrently');
    const first = log.batches.find((b) => b.inputs.some((row) => row[0] === 0));
    assert.deepEqual(first?.features, FEATURES);
    assert.deepEqual(first?.inputs[0], [0, null], 'a missing feature is sent as null');
    assert.equal(models.healthy?.stats.failures, 0);
    assert.equal(models.healthy?.stats.fallbacks, 0);
  });

  test('slow (past the timeout): retried, then the constant fallback', async () => {
    const before = { ...models.slow?.stats };
    const scores = await rankAll('slow');
    for (const item of ITEMS) assert.equal(scores.get(item.item_id), 0.5);
    const stats = models.slow?.stats;
    assert.equal((stats?.requests ?? 0) - (before.requests ?? 0), 8, '4 batches × 2 attempts');
    assert.equal((stats?.failures ?? 0) - (before.failures ?? 0), 8);
    assert.equal((stats?.fallbacks ?? 0) - (before.fallbacks ?? 0), 4);
    assert.equal((stats?.fallbackEntities ?? 0) - (before.fallbackEntities ?? 0), 20);
    assert.match(stats?.lastError ?? '', /no answer within 100 ms/);
  });

  test('failing (HTTP 500): every retry, then the fallback model scores', async () => {
    const scores = await rankAll('failing');
    for (const item of ITEMS) assert.equal(scores.get(item.item_id), 1000 + (item.a ?? 0));
    assert.equal(logOf('/failing').batches.length, 6, '2 batches × 3 attempts');
    assert.equal(models.failing?.stats.fallbacks, 2);
    assert.equal(models.failing?.stats.lastError, 'HTTP 500');
  });

  test('wrong shapes: too few scores, a cut body, scores that are not numbers', async () => {
    for (const [path, reason] of [
      ['short', /19 scores for 20 inputs/],
      ['garbage', /not JSON/],
      ['strings', /not a number: "high"/],
    ] as const) {
      const scores = await rankAll(path);
      for (const item of ITEMS) assert.equal(scores.get(item.item_id), 0.5, path);
      assert.equal(models[path]?.stats.fallbacks, 1, path);
      assert.match(models[path]?.stats.lastError ?? '', reason);
    }
  });

  test('down (nothing listens): the fallback, counted, with a warning every warnEvery failed batches', async () => {
    const warnings: string[] = [];
    // Initialized again with a logger the test reads (the server's is silent).
    await models.down?.initialize?.({ log: { info: () => undefined, warn: (m) => warnings.push(m) } });
    const scores = await rankAll('down');
    for (const item of ITEMS) assert.equal(scores.get(item.item_id), 0.5);
    assert.equal(models.down?.stats.fallbacks, 5);
    assert.equal(models.down?.stats.failures, 5);
    assert.match(models.down?.stats.lastError ?? '', /ECONNREFUSED/);
    assert.equal(warnings.length, 3, `the 1st, 3rd and 5th failed batches: ${warnings.join('\n')}`);
    assert.match(
      warnings[0] ?? '',
      /remote model down: a batch of 4 failed 1 time\(s\) .*scored by the fallback/,
    );
  });

  test('configuration mistakes are refused when the model is declared', () => {
    assert.throws(
      () => remoteModel({ name: 'r', url: 'not a url', features: [], fallback: 0 }),
      /is not a URL/,
    );
    assert.throws(
      () => remoteModel({ name: 'r', url: 'http://x', features: [], fallback: 0, batchSize: 0 }),
      /batchSize must be a whole number ≥ 1/,
    );
    assert.throws(
      () => remoteModel({ name: 'r', url: 'http://x', features: [], fallback: Number.NaN }),
      /constant fallback must be a finite number/,
    );
  });
});
