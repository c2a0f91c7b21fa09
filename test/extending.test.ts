/**
 * An app extends the server (`defineApp({ server })`, docs/guides/extend-the-server.md): its hooks apply to
 * every route, rankd's own included; its routes get rankd's access control, error responses and
 * a place in the OpenAPI document; CORS preflights pass the key check. In process (inject), and
 * end to end through `rankd run --workers 2`, where each worker builds the app's extension.
 * The app is test/fixtures/client/app.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { defineApp } from '../src/app/define-app.js';
import { buildServer } from '../src/http/build-server.js';
import { ErrorCode } from '../src/index.js';
import { AppLoadError } from '../src/server.js';
import app, { ALLOWED_ORIGIN } from './fixtures/client/app.js';
import { type CliService, killServices, readyWorkerPids, startCliService } from './helpers/cli-service.js';
import { startTestRedis, type TestRedis } from './helpers/redis-server.js';
import { testConfig, useTestServer } from './helpers/server.js';

const KEY = 'user-key-1';
const ENV = { API_KEYS: KEY };
const LOOKUP = '/api/v1/shop/lookup';
const STATUS = '/api/v1/shop/status';
const UPLOAD = '/api/v1/entities/upload';
const PRODUCT = { product_id: 'ext-1', title: 'Blue candle', price: 12 };
const TIMEOUT = { timeout: 180_000 };

/** A request as both the in-process and the end-to-end tests send it. */
interface Call {
  method: 'GET' | 'POST' | 'OPTIONS';
  url: string;
  headers?: Record<string, string>;
  body?: unknown;
}

/** An answer: status, headers and the body parsed when it is JSON. */
interface Answer {
  status: number;
  headers: Record<string, string | undefined>;
  // biome-ignore lint/suspicious/noExplicitAny: bodies are asserted field by field
  body: any;
}

type Send = (call: Call) => Promise<Answer>;

function injector(server: () => FastifyInstance): Send {
  return async ({ method, url, headers = {}, body }) => {
    const response = await server().inject({
      method,
      url,
      headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
    const type = String(response.headers['content-type'] ?? '');
    return {
      status: response.statusCode,
      headers: Object.fromEntries(Object.entries(response.headers).map(([k, v]) => [k, v?.toString()])),
      body: type.includes('json') && response.body.length > 0 ? response.json() : response.body,
    };
  };
}

function fetcher(base: () => string): Send {
  return async ({ method, url, headers = {}, body }) => {
    const response = await fetch(`${base()}${url}`, {
      method,
      headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    const type = response.headers.get('content-type') ?? '';
    return {
      status: response.status,
      headers: Object.fromEntries(response.headers.entries()),
      body: type.includes('json') && text.length > 0 ? JSON.parse(text) : text,
    };
  };
}

/** The checks both ways of serving share: what an app's extension must give, wherever it runs. */
function extensionChecks(send: Send): void {
  test("the app's public route answers without a key, with the app's header", async () => {
    const answer = await send({ method: 'GET', url: STATUS });
    assert.equal(answer.status, 200);
    assert.deepEqual(answer.body, { status: 'open', app: 'client-fixture' });
    assert.equal(answer.headers['x-shop'], 'client-fixture');
  });

  test("the app's keyed route: 401 without a key in rankd's error shape, the app's header on it too", async () => {
    const answer = await send({ method: 'POST', url: LOOKUP, body: { product_id: 'x' } });
    assert.equal(answer.status, 401);
    assert.equal(answer.body.error_code, ErrorCode.UNAUTHORIZED);
    assert.equal(answer.headers['x-shop'], 'client-fixture');
  });

  test("the app's route validates its body as rankd's do (422), and its own errors keep rankd's shape", async () => {
    const headers = { 'x-api-key': KEY };
    const invalid = await send({ method: 'POST', url: LOOKUP, headers, body: { product: 'x' } });
    assert.equal(invalid.status, 422);
    assert.equal(invalid.body.error_code, ErrorCode.VALIDATION);
    assert.ok(Array.isArray(invalid.body.detail));
    const missing = await send({ method: 'POST', url: LOOKUP, headers, body: { product_id: 'nope' } });
    assert.equal(missing.status, 422);
    assert.deepEqual(missing.body.detail, [
      { loc: ['body', 'product_id'], msg: 'no such product', type: 'not_found' },
    ]);
  });

  test("the app's route reads the server's index", async () => {
    const headers = { 'x-api-key': KEY };
    const upload = await send({
      method: 'POST',
      url: UPLOAD,
      headers,
      body: { entity_type: 'product', entities: [PRODUCT] },
    });
    assert.equal(upload.status, 200, JSON.stringify(upload.body));
    const found = await send({
      method: 'POST',
      url: LOOKUP,
      headers,
      body: { product_id: PRODUCT.product_id },
    });
    assert.equal(found.status, 200);
    assert.deepEqual(found.body, { product_id: PRODUCT.product_id, title: PRODUCT.title });
  });

  test("a CORS preflight passes the key check and the app's hook answers it, on rankd's routes too", async () => {
    const answer = await send({
      method: 'OPTIONS',
      url: UPLOAD,
      headers: {
        origin: ALLOWED_ORIGIN,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type, x-api-key',
      },
    });
    assert.equal(answer.status, 204);
    assert.equal(answer.headers['access-control-allow-origin'], ALLOWED_ORIGIN);
    assert.match(answer.headers['access-control-allow-headers'] ?? '', /x-api-key/);
  });

  test("the app's onRequest hook runs on rankd's own routes (index, pipelines), inside their plugin scopes", async () => {
    const headers = { origin: ALLOWED_ORIGIN, 'x-api-key': KEY };
    const get = await send({
      method: 'POST',
      url: '/api/v1/entities/get',
      headers,
      body: { entity_type: 'product', entity_ids: [PRODUCT.product_id] },
    });
    assert.equal(get.status, 200);
    assert.equal(get.headers['access-control-allow-origin'], ALLOWED_ORIGIN);
    const ranking = await send({
      method: 'POST',
      url: '/api/v1/ranking',
      headers,
      body: { request_id: 'ext-r1', market: 'de', candidates: [{ product_id: PRODUCT.product_id }] },
    });
    assert.equal(ranking.status, 200, JSON.stringify(ranking.body));
    assert.equal(ranking.headers['access-control-allow-origin'], ALLOWED_ORIGIN);
    const otherOrigin = await send({
      method: 'GET',
      url: STATUS,
      headers: { origin: 'https://elsewhere.example' },
    });
    assert.equal(otherOrigin.headers['access-control-allow-origin'], undefined);
  });

  test("the app's routes with a schema are in the OpenAPI document; one without is served but not documented", async () => {
    const doc = (await send({ method: 'GET', url: '/openapi.json' })).body;
    assert.equal(doc.paths[STATUS].get.operationId, 'shop_status');
    assert.deepEqual(doc.paths[STATUS].get.responses['200'].content['application/json'].schema, {
      $ref: '#/components/schemas/ShopStatus',
    });
    assert.deepEqual(doc.paths[LOOKUP].post.requestBody.content['application/json'].schema, {
      $ref: '#/components/schemas/ShopLookupRequest',
    });
    assert.equal(doc.paths['/api/v1/shop/undocumented'], undefined);
    const served = await send({
      method: 'GET',
      url: '/api/v1/shop/undocumented',
      headers: { 'x-api-key': KEY },
    });
    assert.equal(served.status, 200);
  });
}

describe('an app extending the server, in process', () => {
  const fixture = useTestServer({ app, env: ENV });
  extensionChecks(injector(() => fixture.server));
});

describe('an app extending the server, under rankd run --workers 2', () => {
  let redis: TestRedis;
  let service: CliService;

  before(async () => {
    redis = await startTestRedis();
    service = await startCliService('test/fixtures/client/app.ts', { REDIS_URL: redis.url, API_KEYS: KEY }, [
      '--workers',
      '2',
    ]);
  }, TIMEOUT);

  after(async () => {
    killServices();
    await redis?.stop();
  });

  extensionChecks(fetcher(() => service.base));

  test('both workers serve the extension', async () => {
    const workers = new Set(readyWorkerPids(service.output()).map(String));
    assert.equal(workers.size, 2);
    const answered = new Set<string>();
    // A new connection each time: the primary hands connections to the workers in turn.
    for (let i = 0; i < 20 && answered.size < 2; i++) {
      const answer = await fetcher(() => service.base)({
        method: 'GET',
        url: STATUS,
        headers: { connection: 'close' },
      });
      assert.equal(answer.status, 200);
      assert.equal(answer.headers['x-shop'], 'client-fixture');
      answered.add(answer.headers['x-shop-pid'] ?? '');
    }
    assert.deepEqual([...answered].sort(), [...workers].sort());
  });
});

describe('an extension that fails', () => {
  let redis: TestRedis;
  before(async () => {
    redis = await startTestRedis();
  });
  after(async () => {
    await redis?.stop();
  });

  test('stops the start with RANKD_APP_INVALID naming the app and the reason', async () => {
    const broken = defineApp({
      name: 'broken-extension',
      server: async () => {
        throw new Error('no licence key');
      },
    });
    await assert.rejects(buildServer({ config: testConfig(redis), app: broken }), (error: unknown) => {
      assert.ok(error instanceof AppLoadError);
      assert.equal(error.code, ErrorCode.APP_INVALID);
      assert.match(error.message, /broken-extension failed to start: no licence key/);
      return true;
    });
  });

  test("a route at one of rankd's paths is refused at start", async () => {
    const clash = defineApp({
      name: 'clashing-extension',
      server: (server) => {
        server.post(UPLOAD, async () => ({}));
      },
    });
    await assert.rejects(buildServer({ config: testConfig(redis), app: clash }), (error: unknown) => {
      assert.ok(error instanceof AppLoadError);
      assert.match(error.message, /clashing-extension failed to start: .*\/api\/v1\/entities\/upload/);
      return true;
    });
  });
});
