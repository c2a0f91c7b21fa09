/**
 * The event stream and a Redis with a `maxmemory` (`noeviction`): the stream keeps to its byte
 * budget and its age cap, so the index stays writable; a Redis filled by something else answers
 * index writes with RANKD_REDIS_OUT_OF_MEMORY (not "unavailable"), `/readyz` says so, and events
 * are dropped, counted by reason and warned about once; a stream that filled Redis itself is
 * trimmed with XTRIM (which Redis allows when out of memory) and written again.
 *
 * The template app is served from `dist/` (its `import 'rankd'` resolves there: one copy of rankd),
 * with the spec's request shape (24 candidates, a page of 8): about 11 KB of stream per request.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { type MaxmemoryRedis, startMaxmemoryRedis } from './helpers/maxmemory-redis.js';
import { parsePrometheus, sampleValue } from './helpers/prometheus.js';

type Dist = {
  loadApp: typeof import('../src/cli/load-app.js').loadApp;
  buildServer: typeof import('../src/http/build-server.js').buildServer;
  loadConfig: typeof import('../src/config/index.js').loadConfig;
};

/** Redis's memory limit: the stream of 2500 requests unbounded (~28 MB) does not fit. */
const MAXMEMORY = 24 * 1024 * 1024;
/** The stream's byte budget in these tests. */
const BUDGET = 1024 * 1024;
const PRODUCTS = readFileSync(new URL('../template/data/products.jsonl', import.meta.url), 'utf8')
  .trim()
  .split('\n')
  .map((line) => JSON.parse(line) as Record<string, unknown>);

let dist: Dist;
let redis: MaxmemoryRedis;
let redisUrl: string;
let client: MaxmemoryRedis['client'];
const servers: FastifyInstance[] = [];

before(async () => {
  const [{ loadApp }, { buildServer }, { loadConfig }] = await Promise.all([
    import('../dist/cli/load-app.js'),
    import('../dist/http/build-server.js'),
    import('../dist/config/index.js'),
  ]);
  // The same functions as the sources they were compiled from; only their private fields differ.
  dist = { loadApp, buildServer, loadConfig } as unknown as Dist;
  redis = await startMaxmemoryRedis(MAXMEMORY);
  redisUrl = redis.url;
  client = redis.client;
});

after(async () => {
  for (const server of servers) await server.close();
  await redis?.stop();
});

/** Log lines of a server, parsed. */
type LogLine = { level: number; msg: string };

/** The template app on project `project` on an emptied Redis, its products uploaded; the flusher writes only on `flush()`. */
async function serve(project: string, env: Record<string, string> = {}) {
  // Each case on an empty Redis: one that fails must not leave the next a full one.
  await client.flushAll();
  const lines: LogLine[] = [];
  const app = await dist.loadApp(new URL('../template/pipelines/main.ts', import.meta.url).pathname);
  const server = await dist.buildServer({
    config: dist.loadConfig({
      REDIS_URL: redisUrl,
      LOG_LEVEL: 'info',
      PROJECT_NAME: project,
      EVENTS_STREAM_MAX_BYTES: String(BUDGET),
      ...env,
    }),
    eventBuffering: { flushIntervalMs: 60_000 },
    app,
    logStream: { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) },
  });
  servers.push(server);
  assert.ok(await server.rankd.redis.waitUntilReady(5000), 'connected');
  assert.equal((await upload(server)).statusCode, 200);
  return { server, key: `${project}:events`, lines };
}

function upload(server: FastifyInstance) {
  return server.inject({
    method: 'POST',
    url: '/api/v1/entities/upload',
    payload: { entity_type: 'product', entities: PRODUCTS },
  });
}

let requests = 0;
/** `count` ranking requests of the spec's shape, each answered 200; events flushed every 100. */
async function rank(server: FastifyInstance, count: number): Promise<void> {
  for (let r = 0; r < count; r++) {
    const n = requests++;
    const ids = new Set(Array.from({ length: 24 }, (_, i) => `p${((n * 7 + i * 13) % 60) + 1}`));
    const res = await server.inject({
      method: 'POST',
      url: '/api/v1/ranking',
      payload: {
        request_id: `req-${n}`,
        query: { query: 'candle' },
        candidates: [...ids].map((product_id) => ({ product_id })),
        user_page_size: 8,
      },
    });
    assert.equal(res.statusCode, 200, res.body);
    if (r % 100 === 99) await server.rankd.events.flush();
  }
  await server.rankd.events.flush();
}

/** Bytes of `key` as Redis counts them, every node of the stream measured. */
async function memoryOf(key: string): Promise<number> {
  return Number((await client.sendCommand(['MEMORY', 'USAGE', key, 'SAMPLES', '0'])) ?? 0);
}

async function droppedFor(server: FastifyInstance, reason: string): Promise<number> {
  const res = await server.inject({ method: 'GET', url: '/metrics' });
  return sampleValue(parsePrometheus(res.body).samples, 'rankd_events_dropped_total', { reason });
}

/**
 * Fills Redis with other keys until it refuses a write for memory, then lowers its `maxmemory` a
 * MB below what it uses: Redis is then plainly past its limit and refuses every write, as when
 * other data grew, instead of hovering at it (client buffers it frees let small writes in).
 */
async function fillRedis(prefix: string): Promise<string[]> {
  const keys: string[] = [];
  const value = 'x'.repeat(256 * 1024);
  for (;;) {
    const key = `${prefix}:${keys.length}`;
    try {
      await client.set(key, value);
    } catch (error) {
      assert.match(String(error), /OOM command not allowed/);
      break;
    }
    keys.push(key);
  }
  const used = Number(/^used_memory:(\d+)/m.exec(await client.info('memory'))?.[1]);
  await client.configSet('maxmemory', String(used - 1024 * 1024));
  return keys;
}

describe('the event stream in a Redis with a maxmemory', () => {
  test('keeps to its byte budget over 2500 rankings (~28 MB of events), and the index stays writable', async () => {
    const { server, key } = await serve('bytes');
    await rank(server, 2500);
    const stats = server.rankd.events.stats();
    assert.equal(stats.dropped, 0, JSON.stringify(stats));
    const bytes = await memoryOf(key);
    // `MAXLEN ~` trims whole nodes and the bytes per entry are measured now and then: some slack.
    assert.ok(bytes <= BUDGET * 1.2, `the stream takes ${bytes} bytes, budget ${BUDGET}`);
    assert.ok(bytes >= BUDGET * 0.5, `the stream takes ${bytes} bytes: the cap trims far below the budget`);
    assert.equal((await upload(server)).statusCode, 200);
    const ready = await server.inject({ method: 'GET', url: '/readyz' });
    assert.equal(ready.statusCode, 200, ready.body);
  });

  test('beside the index, entries older than a day are trimmed', async () => {
    const { server, key } = await serve('age');
    const dayAgo = Date.now() - 86_400_000;
    const add = (id: string, name: string) =>
      client.sendCommand(['XADD', key, id, 'request_id', name, 'events', '[]']);
    for (let i = 0; i < 5; i++) await add(`${dayAgo - 60_000 + i}-0`, `old-${i}`);
    await rank(server, 3);
    const old = await client.xRange(key, '-', String(dayAgo));
    assert.deepEqual(old, [], 'entries older than a day are gone');
    assert.equal(await client.xLen(key), 3);
  });

  describe('Redis filled by other data', () => {
    let server: FastifyInstance;
    let lines: LogLine[];
    let filler: string[];

    before(async () => {
      ({ server, lines } = await serve('full'));
      filler = await fillRedis('filler');
    });

    test('an upload answers 503 RANKD_REDIS_OUT_OF_MEMORY saying what to do, not RANKD_REDIS_UNAVAILABLE', async () => {
      const res = await upload(server);
      assert.equal(res.statusCode, 503);
      const body = JSON.parse(res.body) as { error_code: string; detail: string };
      assert.equal(body.error_code, 'RANKD_REDIS_OUT_OF_MEMORY');
      assert.match(body.detail, /out of memory/);
      assert.match(body.detail, /maxmemory/);
      assert.match(body.detail, /EVENTS_REDIS_URL/);
      assert.match(body.detail, /EVENTS_STREAM_MAX_BYTES/);
    });

    test('/readyz answers 503 with the OOM code', async () => {
      const res = await server.inject({ method: 'GET', url: '/readyz' });
      assert.equal(res.statusCode, 503, res.body);
      assert.equal((JSON.parse(res.body) as { error_code: string }).error_code, 'RANKD_REDIS_OUT_OF_MEMORY');
    });

    test('rankings still answer 200; their events are dropped, counted (redis_oom, then over_budget), and warned about once', async () => {
      await rank(server, 300);
      const stats = server.rankd.events.stats();
      assert.equal(stats.written, 0);
      assert.ok(stats.dropped > 300 * 30, JSON.stringify(stats));
      assert.ok(stats.failedBatches > 1, 'several batches failed');
      // The first refused batch shows Redis has no room: later ones are not even sent.
      const oom = await droppedFor(server, 'redis_oom');
      const overBudget = await droppedFor(server, 'over_budget');
      assert.ok(oom > 0 && overBudget > oom, `redis_oom ${oom}, over_budget ${overBudget}`);
      assert.equal(oom + overBudget, stats.dropped);
      assert.equal(await droppedFor(server, 'write_failed'), 0);
      const warnings = lines.filter((line) => /event Redis is out of memory/.test(line.msg));
      assert.equal(warnings.length, 1, JSON.stringify(warnings));
      assert.equal(warnings[0]?.level, 40);
    });

    test('once room is made: ready again, uploads and events written again', async () => {
      await client.del(filler);
      await client.configSet('maxmemory', String(MAXMEMORY));
      assert.equal((await server.inject({ method: 'GET', url: '/readyz' })).statusCode, 200);
      assert.equal((await upload(server)).statusCode, 200);
      const before = server.rankd.events.stats();
      await rank(server, 5);
      assert.ok(server.rankd.events.stats().written > before.written);
      assert.ok(lines.some((line) => /written again/.test(line.msg)));
    });
  });

  test('a stream that filled Redis itself is trimmed with XTRIM and written to, back within its budget', async () => {
    const { server, key } = await serve('own');
    const big = 'e'.repeat(64 * 1024);
    for (;;) {
      try {
        await client.sendCommand(['XADD', key, '*', 'request_id', 'big', 'events', big]);
      } catch (error) {
        assert.match(String(error), /OOM command not allowed/);
        break;
      }
    }
    assert.ok((await memoryOf(key)) > MAXMEMORY / 2, 'the stream holds most of Redis');
    await rank(server, 200);
    const stats = server.rankd.events.stats();
    assert.equal(stats.dropped, 0, JSON.stringify(stats));
    const bytes = await memoryOf(key);
    assert.ok(bytes <= BUDGET * 1.2, `the stream takes ${bytes} bytes, budget ${BUDGET}`);
    assert.equal((await upload(server)).statusCode, 200);
  });
});
