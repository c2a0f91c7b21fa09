/**
 * API keys (issue 2, item 7): with `API_KEYS` set every route but health and docs needs a key, sent
 * as `x-api-key` or `Authorization: Bearer`; routes marked `access: 'admin'` need a key from
 * `ADMIN_API_KEYS`. Off when neither is set (then routes that change data answer loopback clients only: test/safe-defaults.test.ts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { buildServer } from '../src/http/build-server.js';
import { startTestRedis, type TestRedis } from './helpers/redis-server.js';
import { testConfig } from './helpers/server.js';

const ADMIN_PATH = '/test-only/admin';
const GET = '/api/v1/entities/get';
/** Open whatever the keys: health, the docs, and the Redoc bundle the docs page loads. */
const OPEN_PATHS = ['/healthcheck', '/readyz', '/redoc', '/openapi.json', '/redoc/redoc.standalone.js'];

let redis: TestRedis;
const servers: FastifyInstance[] = [];

before(async () => {
  redis = await startTestRedis();
});

after(async () => {
  await Promise.all(servers.map((s) => s.close()));
  await redis?.stop();
});

/** A server on the test Redis with `env`, plus an admin route (rankd has none of its own yet). */
async function serverWith(env: Record<string, string>): Promise<FastifyInstance> {
  const server = await buildServer({
    config: testConfig(redis, env),
    extraRoutes: (s) => {
      s.post(ADMIN_PATH, { config: { access: 'admin' } }, async () => ({ admin: true }));
    },
  });
  servers.push(server);
  if (!(await server.rankd.redis.waitUntilReady(5000))) throw new Error('server did not connect to Redis');
  return server;
}

async function call(
  server: FastifyInstance,
  method: 'GET' | 'POST',
  url: string,
  headers: Record<string, string> = {},
) {
  const options: InjectOptions = { method, url, headers };
  if (method === 'POST') {
    options.payload = JSON.stringify({ entity_type: 'product', entity_ids: ['x'] });
    options.headers = { 'content-type': 'application/json', ...headers };
  }
  const res = await server.inject(options);
  return { status: res.statusCode, body: res.body, json: () => res.json() };
}

function assertErrorShape(
  res: { status: number; json: () => { detail?: unknown; error_code?: unknown } },
  status: number,
  code: string,
): void {
  assert.equal(res.status, status);
  const body = res.json();
  assert.equal(body.error_code, code);
  assert.equal(typeof body.detail, 'string');
  assert.ok((body.detail as string).length > 0);
}

describe('API_KEYS=k1,k2', () => {
  let server: FastifyInstance;
  before(async () => {
    server = await serverWith({ API_KEYS: 'k1,k2' });
  });

  test('no key → 401 in the error shape, naming both ways to send one', async () => {
    const res = await call(server, 'POST', GET);
    assertErrorShape(res, 401, 'RANKD_UNAUTHORIZED');
    const detail = res.json().detail as string;
    assert.match(detail, /x-api-key/);
    assert.match(detail, /Bearer/);
  });

  test('a wrong key → 401, by either header; so does a key that only shares a prefix', async () => {
    for (const headers of [
      { 'x-api-key': 'nope' } as Record<string, string>,
      { authorization: 'Bearer nope' },
      { 'x-api-key': 'k' },
      { 'x-api-key': 'k1x' },
      { 'x-api-key': 'K1' },
    ]) {
      assertErrorShape(await call(server, 'POST', GET, headers), 401, 'RANKD_UNAUTHORIZED');
    }
  });

  test('Authorization with another scheme, or Bearer with no key, is no key → 401', async () => {
    for (const authorization of ['Basic azE=', 'k1', 'Bearer ', 'bearer']) {
      assertErrorShape(await call(server, 'POST', GET, { authorization }), 401, 'RANKD_UNAUTHORIZED');
    }
  });

  test('x-api-key: k1 → 200', async () => {
    const res = await call(server, 'POST', GET, { 'x-api-key': 'k1' });
    assert.equal(res.status, 200, res.body);
    assert.deepEqual(res.json(), { entity_type: 'product', entities: {} });
  });

  test('Authorization: Bearer k2 → 200', async () => {
    const res = await call(server, 'POST', GET, { authorization: 'Bearer k2' });
    assert.equal(res.status, 200, res.body);
  });

  test('the Bearer scheme in any case (RFC 9110: schemes are case-insensitive) → 200', async () => {
    for (const authorization of ['bearer k2', 'BEARER k2', 'BeArEr  k2']) {
      const res = await call(server, 'POST', GET, { authorization });
      assert.equal(res.status, 200, `${authorization}: ${res.body}`);
    }
  });

  test('every index route is protected', async () => {
    for (const path of [
      '/api/v1/entities/upload',
      GET,
      '/api/entity/v1/entities/delete',
      '/api/v1/entities/delete',
    ]) {
      assertErrorShape(await call(server, 'POST', path), 401, 'RANKD_UNAUTHORIZED');
    }
  });

  test('/healthcheck, /readyz, /redoc and /openapi.json are open without a key', async () => {
    for (const path of OPEN_PATHS) {
      const res = await call(server, 'GET', path);
      assert.equal(res.status, 200, `${path}: ${res.body.slice(0, 200)}`);
    }
  });

  test('with no ADMIN_API_KEYS, an admin route refuses user keys (403) and no key (401)', async () => {
    assertErrorShape(await call(server, 'POST', ADMIN_PATH, { 'x-api-key': 'k1' }), 403, 'RANKD_FORBIDDEN');
    assertErrorShape(await call(server, 'POST', ADMIN_PATH), 401, 'RANKD_UNAUTHORIZED');
  });
});

describe('API_KEYS=k1 and ADMIN_API_KEYS=a1', () => {
  let server: FastifyInstance;
  before(async () => {
    server = await serverWith({ API_KEYS: 'k1', ADMIN_API_KEYS: 'a1' });
  });

  test('admin route: a user key → 403 naming ADMIN_API_KEYS', async () => {
    const res = await call(server, 'POST', ADMIN_PATH, { 'x-api-key': 'k1' });
    assertErrorShape(res, 403, 'RANKD_FORBIDDEN');
    assert.match(res.json().detail as string, /ADMIN_API_KEYS/);
  });

  test('admin route: the admin key → 200, by either header', async () => {
    for (const headers of [{ 'x-api-key': 'a1' }, { authorization: 'Bearer a1' }] as Array<
      Record<string, string>
    >) {
      const res = await call(server, 'POST', ADMIN_PATH, headers);
      assert.equal(res.status, 200, res.body);
      assert.deepEqual(res.json(), { admin: true });
    }
  });

  test('admin route: no key → 401, an unknown key → 401', async () => {
    assertErrorShape(await call(server, 'POST', ADMIN_PATH), 401, 'RANKD_UNAUTHORIZED');
    assertErrorShape(
      await call(server, 'POST', ADMIN_PATH, { 'x-api-key': 'zz' }),
      401,
      'RANKD_UNAUTHORIZED',
    );
  });

  test('the admin key works on normal routes too; the user key still does', async () => {
    assert.equal((await call(server, 'POST', GET, { 'x-api-key': 'a1' })).status, 200);
    assert.equal((await call(server, 'POST', GET, { 'x-api-key': 'k1' })).status, 200);
    assertErrorShape(await call(server, 'POST', GET), 401, 'RANKD_UNAUTHORIZED');
  });

  test('open routes stay open', async () => {
    for (const path of OPEN_PATHS) assert.equal((await call(server, 'GET', path)).status, 200, path);
  });
});

describe('ADMIN_API_KEYS=a1 alone', () => {
  let server: FastifyInstance;
  before(async () => {
    server = await serverWith({ ADMIN_API_KEYS: 'a1' });
  });

  test('normal routes are open; the admin route needs the admin key', async () => {
    assert.equal((await call(server, 'POST', GET)).status, 200);
    assertErrorShape(await call(server, 'POST', ADMIN_PATH), 401, 'RANKD_UNAUTHORIZED');
    assert.equal((await call(server, 'POST', ADMIN_PATH, { 'x-api-key': 'a1' })).status, 200);
  });
});

describe('neither API_KEYS nor ADMIN_API_KEYS set', () => {
  let server: FastifyInstance;
  before(async () => {
    server = await serverWith({});
  });

  test('everything is open to this machine (loopback), admin route included, and a stray key is ignored', async () => {
    assert.equal((await call(server, 'POST', GET)).status, 200);
    assert.equal((await call(server, 'POST', GET, { 'x-api-key': 'whatever' })).status, 200);
    assert.equal((await call(server, 'POST', ADMIN_PATH)).status, 200);
    for (const path of OPEN_PATHS) assert.equal((await call(server, 'GET', path)).status, 200, path);
  });
});
