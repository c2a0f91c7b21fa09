/**
 * Logs: JSON lines, every line of a request carrying its request id; the id is the caller's
 * `x-request-id` (when sane) and is echoed in the response header; API keys never reach a log.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../src/config/index.js';
import { buildServer } from '../src/http/build-server.js';
import { loggerOptions, REDACTED_PATHS, wantsPrettyLogs } from '../src/observability/logging.js';
import { observedApp, observedProducts, rankingBody } from './helpers/observed-app.js';
import { startTestRedis, type TestRedis } from './helpers/redis-server.js';
import { postJson, testConfig } from './helpers/server.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const SECRET = 'sk-live-0123456789abcdef';

/** Collects the server's log lines, parsed. */
class LogLines {
  readonly lines: Array<Record<string, unknown>> = [];
  write(line: string): void {
    this.lines.push(JSON.parse(line));
  }
  /** The lines written while `work` ran. */
  async during(work: () => Promise<unknown>): Promise<Array<Record<string, unknown>>> {
    const from = this.lines.length;
    await work();
    return this.lines.slice(from);
  }
  /** Resolves once a line matching `wanted` has been written; fails after `timeoutMs`. */
  async until(wanted: (line: Record<string, unknown>) => boolean, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.lines.some(wanted)) {
      if (Date.now() > deadline) throw new Error('the awaited log line was never written');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
  raw(): string {
    return this.lines.map((line) => JSON.stringify(line)).join('\n');
  }
}

let redis: TestRedis;
let server: FastifyInstance;
const logs = new LogLines();

before(async () => {
  redis = await startTestRedis();
  server = await buildServer({
    config: testConfig(redis, { LOG_LEVEL: 'info', API_KEYS: SECRET }),
    app: observedApp,
    logStream: logs,
    extraRoutes(s) {
      // What an app's own route might carelessly log: the whole headers object, at several depths.
      s.post('/debug/log-headers', async (request) => {
        request.log.info({ headers: request.headers }, 'headers at the top');
        request.log.info({ request: { headers: request.headers } }, 'headers one level down');
        return { ok: true };
      });
    },
  });
  assert.ok(await server.rankd.redis.waitUntilReady(5000));
  // The event stream connects in the background, and its line carries no request id; on a slow
  // machine it could otherwise land inside a test's window of "every line of this request".
  await logs.until((line) => String(line.msg).startsWith('Event stream Redis connected'), 5000);
  await postJson(
    server,
    '/api/v1/entities/upload',
    { entity_type: 'product', entities: observedProducts(5) },
    { 'x-api-key': SECRET },
  );
});

after(async () => {
  await server?.close();
  await redis?.stop();
});

/** POSTs with the API key, checks the status, and returns the response's x-request-id and the lines logged meanwhile. */
async function postLogged(
  url: string,
  payload: object,
  status: number,
  headers: Record<string, string> = {},
) {
  let header: unknown;
  const lines = await logs.during(async () => {
    const res = await server.inject({
      method: 'POST',
      url,
      payload,
      headers: { 'x-api-key': SECRET, ...headers },
    });
    assert.equal(res.statusCode, status, res.body);
    header = res.headers['x-request-id'];
  });
  return { header, lines };
}

describe('request ids', () => {
  test("every line of a ranking request carries the caller's x-request-id, which is echoed back", async () => {
    const { header, lines } = await postLogged('/api/v1/ranking', rankingBody(5), 200, {
      'x-request-id': 'trace-abc.123',
    });
    assert.equal(header, 'trace-abc.123');
    assert.ok(lines.length >= 2, 'incoming request and request completed');
    for (const line of lines) assert.equal(line.reqId, 'trace-abc.123', JSON.stringify(line));
    assert.ok(lines.some((line) => line.msg === 'request completed'));
  });

  test('a rejected request: its rejection line has the same id as its other lines', async () => {
    const { header, lines } = await postLogged('/api/v1/entities/get', { entity_type: 'product' }, 422);
    assert.match(String(header), UUID, 'no id sent: a UUID is made');
    assert.ok(lines.some((line) => line.msg === 'request rejected'));
    for (const line of lines) assert.equal(line.reqId, header, JSON.stringify(line));
  });

  test('a 404 and a 401 echo the id too', async () => {
    const missing = await server.inject({
      method: 'GET',
      url: '/nowhere',
      headers: { 'x-request-id': 'n-1', 'x-api-key': SECRET },
    });
    assert.equal(missing.statusCode, 404);
    assert.equal(missing.headers['x-request-id'], 'n-1');
    const denied = await server.inject({
      method: 'GET',
      url: '/nowhere',
      headers: { 'x-request-id': 'n-2' },
    });
    assert.equal(denied.statusCode, 401);
    assert.equal(denied.headers['x-request-id'], 'n-2');
  });

  test('an id that could forge or bloat log lines is replaced by a UUID', async () => {
    for (const bad of ['two words', 'x'.repeat(129), 'tab\there']) {
      const res = await server.inject({
        method: 'GET',
        url: '/healthcheck',
        headers: { 'x-request-id': bad },
      });
      assert.match(String(res.headers['x-request-id']), UUID, JSON.stringify(bad));
    }
  });

  test('ids made for requests that sent none are all different', async () => {
    const ids = new Set<unknown>();
    for (let i = 0; i < 20; i++)
      ids.add((await server.inject({ method: 'GET', url: '/healthcheck' })).headers['x-request-id']);
    assert.equal(ids.size, 20);
  });
});

describe('secrets', () => {
  test('API keys sent as x-api-key or Bearer never reach the log, whatever a route logs', async () => {
    const lines = await logs.during(async () => {
      for (const headers of [{ 'x-api-key': SECRET }, { authorization: `Bearer ${SECRET}` }]) {
        const res = await postJson(
          server,
          '/debug/log-headers',
          {},
          { ...headers, cookie: `session=${SECRET}` },
        );
        assert.equal(res.status, 200);
      }
    });
    assert.ok(lines.some((line) => line.msg === 'headers at the top'));
    assert.doesNotMatch(logs.raw(), new RegExp(SECRET));
    const top = lines.find((line) => line.msg === 'headers at the top') as {
      headers: Record<string, string>;
    };
    assert.equal(top.headers['x-api-key'], '[Redacted]');
    assert.equal(top.headers.cookie, '[Redacted]');
    assert.equal(top.headers['content-type'], 'application/json', 'other headers are kept');
    const nested = lines.filter((line) => line.msg === 'headers one level down')[1] as {
      request: { headers: Record<string, string> };
    };
    assert.equal(nested.request.headers.authorization, '[Redacted]');
    assert.ok(REDACTED_PATHS.includes('headers["x-api-key"]'));
  });
});

describe('format', () => {
  test('pretty lines only in development at a terminal', () => {
    assert.equal(wantsPrettyLogs({ ENVIRONMENT: 'development' }, true), true);
    assert.equal(wantsPrettyLogs({ ENVIRONMENT: 'development' }, false), false);
    assert.equal(wantsPrettyLogs({ ENVIRONMENT: 'production' }, true), false);
  });

  test('lines are JSON with level, time and msg; LOG_LEVEL=silent turns the logger off', async () => {
    const line = logs.lines.find((l) => l.msg === 'request completed');
    assert.ok(line);
    assert.equal(typeof line.level, 'number');
    assert.equal(typeof line.time, 'number');
    assert.equal(await loggerOptions(loadConfig({ LOG_LEVEL: 'silent' })), false);
  });
});
