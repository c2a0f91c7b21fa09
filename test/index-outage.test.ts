/**
 * Redis outages: a stopped Redis makes every Redis-backed request answer 503 (never a hang, a 500 or
 * a crash), `/readyz` says 503 while `/healthcheck` stays up, and the server recovers by itself when
 * Redis comes back; also when Redis was not there at all when the server started.
 *
 * No timing assertions: requests are simply awaited. A request that hung would hang its test until
 * the per-test timeout fails it (the test config sets REDIS_COMMAND_TIMEOUT_MS=1000).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../src/config/index.js';
import { buildServer } from '../src/http/build-server.js';
import { freePort } from './helpers/free-port.js';
import { startTestRedis, type TestRedis } from './helpers/redis-server.js';
import { postJson, testServer } from './helpers/server.js';

const TEST_TIMEOUT_MS = 60_000;
/** How long recovery may take: the client's reconnect delay is capped at 2 s, so this is generous. */
const RECOVERY_DEADLINE_MS = 15_000;

const UPLOAD = '/api/v1/entities/upload';
const GET = '/api/v1/entities/get';
const DELETE_PATHS = ['/api/entity/v1/entities/delete', '/api/v1/entities/delete'];

/** One request to each Redis-backed route, with a body that is valid (so only Redis can fail it). */
function indexCalls(id: string): Array<[path: string, body: unknown]> {
  return [
    [UPLOAD, { entity_type: 'product', entities: [{ product_id: id, brand: 'acme' }] }],
    [GET, { entity_type: 'product', entity_ids: [id] }],
    ...DELETE_PATHS.map((path): [string, unknown] => [path, { entity_type: 'product', entity_ids: [id] }]),
  ];
}

/**
 * Asserts a 503 in the error shape that says how to start Redis. By default it does not name the
 * address (`/readyz` is public): not its host:port, nor its host or port alone. With
 * `exposed` (EXPOSE_REDIS_ADDRESS=true) it names it.
 */
function assertRedisUnavailable(
  res: { status: number; body: { detail?: unknown; error_code?: unknown } },
  address: string,
  what: string,
  exposed = false,
): void {
  assert.equal(res.status, 503, `${what}: ${JSON.stringify(res.body)}`);
  assert.equal(res.body.error_code, 'RANKD_REDIS_UNAVAILABLE', what);
  assert.equal(typeof res.body.detail, 'string', what);
  const detail = res.body.detail as string;
  if (exposed) assert.ok(detail.includes(address), `${what}: detail should name ${address}: ${detail}`);
  else {
    const [host, port] = address.split(':') as [string, string];
    for (const part of [address, host, port])
      assert.ok(!detail.includes(part), `${what}: detail should not name ${part}: ${detail}`);
    assert.ok(detail.includes('server log'), `${what}: detail should say the log names it: ${detail}`);
  }
  assert.ok(detail.includes('rankd redis'), `${what}: detail should say \`rankd redis\`: ${detail}`);
  assert.ok(detail.includes('REDIS_URL'), `${what}: detail should say REDIS_URL: ${detail}`);
}

async function getPath(server: FastifyInstance, url: string) {
  const res = await server.inject({ method: 'GET', url });
  return { status: res.statusCode, body: res.json() };
}

/** Polls `/readyz` until it answers 200, for at most RECOVERY_DEADLINE_MS. */
async function waitUntilReady(server: FastifyInstance): Promise<void> {
  const deadline = Date.now() + RECOVERY_DEADLINE_MS;
  let last: { status: number; body: unknown } | undefined;
  while (Date.now() < deadline) {
    last = await getPath(server, '/readyz');
    if (last.status === 200) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.fail(`/readyz still not 200 after ${RECOVERY_DEADLINE_MS} ms: ${JSON.stringify(last)}`);
}

/** Upload, get and delete round trip: proves the server works against Redis again. */
async function assertIndexWorks(server: FastifyInstance, id: string): Promise<void> {
  const entity = { product_id: id, brand: 'back' };
  const up = await postJson(server, UPLOAD, { entity_type: 'product', entities: [entity] });
  assert.equal(up.status, 200, JSON.stringify(up.body));
  assert.deepEqual(up.body.entity_ids, [id]);
  const got = await postJson(server, GET, { entity_type: 'product', entity_ids: [id] });
  assert.equal(got.status, 200, JSON.stringify(got.body));
  assert.deepEqual(got.body.entities, { [id]: entity });
  const del = await postJson(server, DELETE_PATHS[0] as string, { entity_type: 'product', entity_ids: [id] });
  assert.equal(del.status, 200, JSON.stringify(del.body));
  assert.deepEqual(del.body.deleted_ids, [id]);
}

describe('Redis stopped while the server runs', () => {
  let redis: TestRedis;
  let server: FastifyInstance;

  before(async () => {
    redis = await startTestRedis();
    server = await testServer(redis);
  });

  after(async () => {
    await server?.close();
    await redis?.stop();
  });

  test('before the outage the index works and /readyz is 200', { timeout: TEST_TIMEOUT_MS }, async () => {
    await assertIndexWorks(server, 'before');
    const ready = await getPath(server, '/readyz');
    assert.equal(ready.status, 200);
    // Public, so no address unless EXPOSE_REDIS_ADDRESS says so (below).
    assert.deepEqual(ready.body, { status: 'ready' });
  });

  test('after Redis is killed: upload, get and both delete paths answer 503 naming `rankd redis`, not the address', {
    timeout: TEST_TIMEOUT_MS,
  }, async () => {
    await redis.kill();
    const address = `127.0.0.1:${redis.port}`;
    // Twice over: the first call may find the socket not yet known dead, the second one a client
    // already reconnecting; both must be a 503.
    for (const round of [1, 2]) {
      for (const [path, body] of indexCalls(`down-${round}`)) {
        assertRedisUnavailable(await postJson(server, path, body), address, `${path} (round ${round})`);
      }
    }
  });

  test('during the outage /readyz is 503 with the reason, /healthcheck still 200', {
    timeout: TEST_TIMEOUT_MS,
  }, async () => {
    assertRedisUnavailable(await getPath(server, '/readyz'), `127.0.0.1:${redis.port}`, '/readyz');
    const health = await getPath(server, '/healthcheck');
    assert.equal(health.status, 200);
    assert.deepEqual(health.body, { status: 'OK' });
  });

  test('invalid requests are still answered as such (4xx, not 503) during the outage', {
    timeout: TEST_TIMEOUT_MS,
  }, async () => {
    const res = await postJson(server, UPLOAD, { entity_type: 'nope', entities: [] });
    assert.equal(res.status, 422);
    assert.equal(res.body.error_code, 'RANKD_VALIDATION');
  });

  test('when Redis comes back the server recovers by itself: /readyz 200, then upload and get work', {
    timeout: TEST_TIMEOUT_MS,
  }, async () => {
    await redis.restart();
    await waitUntilReady(server);
    await assertIndexWorks(server, 'after');
  });
});

describe('closing while Redis is down', () => {
  test('server.close() finishes, whether or not the client has seen Redis die', {
    timeout: 60_000,
  }, async () => {
    // A client whose Redis died a moment ago may still count as ready, and a graceful close would
    // wait for a reply that never comes; once nothing else kept the process alive, such a close
    // never finished at all. Several rounds: which moment the kill lands in varies.
    for (let round = 0; round < 5; round++) {
      const redis = await startTestRedis();
      const server = await testServer(redis, { env: { EVENTS_SINK: 'redis' } });
      try {
        await postJson(server, '/api/v1/entities/get', { entity_type: 'product', entity_ids: ['p1'] });
        await redis.kill();
        if (round % 2 === 1)
          await postJson(server, '/api/v1/entities/get', { entity_type: 'product', entity_ids: ['p1'] });
        let guard: NodeJS.Timeout | undefined;
        const hung = new Promise<'hung'>((resolve) => {
          guard = setTimeout(() => resolve('hung'), 20_000);
          // Unreferenced, as nothing else would keep a stopping process alive: a close waiting
          // only on unreferenced timers ends the test file here, pending (a failure).
          guard.unref();
        });
        const outcome = await Promise.race([server.close().then(() => 'closed' as const), hung]);
        clearTimeout(guard);
        assert.equal(outcome, 'closed', `round ${round}: server.close() did not finish`);
      } finally {
        await redis.stop();
      }
    }
  });
});

describe('Redis not running when the server starts', () => {
  let port: number;
  let server: FastifyInstance | undefined;
  let redis: TestRedis | undefined;

  before(async () => {
    port = await freePort();
  });

  after(async () => {
    await server?.close();
    await redis?.stop();
  });

  test('buildServer resolves although nothing listens on the Redis port', {
    timeout: TEST_TIMEOUT_MS,
  }, async () => {
    // As testConfig (short timeouts, no logs), on a port where nothing listens yet.
    server = await buildServer({
      config: loadConfig({
        REDIS_URL: `redis://127.0.0.1:${port}`,
        LOG_LEVEL: 'silent',
        REDIS_COMMAND_TIMEOUT_MS: '1000',
      }),
    });
    assert.equal(server.rankd.redis.isReady, false);
    const health = await getPath(server, '/healthcheck');
    assert.equal(health.status, 200);
  });

  test('every Redis-backed route and /readyz answer 503', { timeout: TEST_TIMEOUT_MS }, async () => {
    assert.ok(server, 'the server was built by the previous test');
    const address = `127.0.0.1:${port}`;
    for (const [path, body] of indexCalls('never')) {
      assertRedisUnavailable(await postJson(server, path, body), address, path);
    }
    assertRedisUnavailable(await getPath(server, '/readyz'), address, '/readyz');
  });

  test('a redis-server started later on that port is picked up: /readyz 200, upload and get work', {
    timeout: TEST_TIMEOUT_MS,
  }, async () => {
    assert.ok(server, 'the server was built by the first test');
    redis = await startTestRedis({ port });
    await waitUntilReady(server);
    await assertIndexWorks(server, 'late');
  });
});

describe('the Redis address: in the log always, in responses only with EXPOSE_REDIS_ADDRESS=true', () => {
  let port: number;
  const servers: FastifyInstance[] = [];
  let redis: TestRedis | undefined;

  /** A server on `port` (nothing listens there) with `env`, and the JSON log lines it writes. */
  async function downServer(env: Record<string, string> = {}) {
    const lines: Array<{ level: number; msg?: string; error_code?: string }> = [];
    const server = await buildServer({
      config: loadConfig({
        REDIS_URL: `redis://127.0.0.1:${port}`,
        LOG_LEVEL: 'warn',
        REDIS_COMMAND_TIMEOUT_MS: '1000',
        ...env,
      }),
      logStream: { write: (line: string) => void lines.push(JSON.parse(line)) },
    });
    servers.push(server);
    return { server, lines };
  }

  before(async () => {
    port = await freePort();
  });

  after(async () => {
    for (const server of servers) await server.close();
    await redis?.stop();
  });

  test('by default the 503 and /readyz leave it out, and the log line of the 503 names it', {
    timeout: TEST_TIMEOUT_MS,
  }, async () => {
    const { server, lines } = await downServer();
    const address = `127.0.0.1:${port}`;
    const [path, body] = indexCalls('hidden')[0] as [string, unknown];
    assertRedisUnavailable(await postJson(server, path, body), address, path);
    assertRedisUnavailable(await getPath(server, '/readyz'), address, '/readyz');
    const logged = lines.filter((line) => line.error_code === 'RANKD_REDIS_UNAVAILABLE');
    assert.equal(logged.length, 2, JSON.stringify(lines));
    for (const line of logged) {
      assert.equal(line.level, 40, 'a warning');
      assert.ok(line.msg?.includes(`Redis at ${address} is not available`), line.msg);
    }
  });

  test('EXPOSE_REDIS_ADDRESS=true: the 503 and /readyz name it', { timeout: TEST_TIMEOUT_MS }, async () => {
    const { server } = await downServer({ EXPOSE_REDIS_ADDRESS: 'true' });
    const address = `127.0.0.1:${port}`;
    const [path, body] = indexCalls('shown')[0] as [string, unknown];
    assertRedisUnavailable(await postJson(server, path, body), address, path, true);
    assertRedisUnavailable(await getPath(server, '/readyz'), address, '/readyz', true);
  });

  test('a ready /readyz names it only with EXPOSE_REDIS_ADDRESS=true', {
    timeout: TEST_TIMEOUT_MS,
  }, async () => {
    redis = await startTestRedis();
    const shown = await testServer(redis, { env: { EXPOSE_REDIS_ADDRESS: 'true' } });
    servers.push(shown);
    assert.deepEqual((await getPath(shown, '/readyz')).body, {
      status: 'ready',
      redis: `127.0.0.1:${redis.port}`,
    });
    const hidden = await testServer(redis);
    servers.push(hidden);
    assert.deepEqual((await getPath(hidden, '/readyz')).body, { status: 'ready' });
  });
});
