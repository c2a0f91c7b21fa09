/**
 * Safe defaults: out of the box (no API_KEYS, no ADMIN_API_KEYS) no other machine can change data
 * or reload models, while ranking and reads stay open; answers never show absolute file paths; the
 * console sends its security headers and every answer `X-Content-Type-Options: nosniff`. Other
 * machines are met two ways: `inject` with a `remoteAddress`, and, when this machine has a
 * non-loopback interface, a real connection to that address (the server then sees it as the
 * client's address).
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { networkInterfaces, tmpdir } from 'node:os';
import { isAbsolute, join, relative } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { accessPolicy, isLoopback } from '../src/http/access.js';
import { buildServer } from '../src/http/build-server.js';
import { startServer } from '../src/http/start-server.js';
import { defineApp } from '../src/index.js';
import { linearModel } from '../src/models/linear-model.js';
import { loadConfig } from '../src/server.js';
import { itemPipeline } from './helpers/model-app.js';
import { RawRedis } from './helpers/raw-redis.js';
import { startTestRedis, type TestRedis } from './helpers/redis-server.js';
import { testConfig } from './helpers/server.js';

const REMOTE = '10.20.30.40';
const LOOPBACKS = ['127.0.0.1', '127.0.0.2', '::1', '::ffff:127.0.0.1'];

/** A model file inside the app's directory (the working directory) and one outside it. */
const INSIDE_DIR = join(process.cwd(), 'test-results', 'safe-defaults');
mkdirSync(INSIDE_DIR, { recursive: true });
const OUTSIDE_DIR = mkdtempSync(join(tmpdir(), 'rankd-safe-defaults-'));
const weights = JSON.stringify({ weights: { 'x:a': 1 }, bias: 0 });
writeFileSync(join(INSIDE_DIR, 'inside.json'), weights);
writeFileSync(join(OUTSIDE_DIR, 'outside.json'), weights);
const Inside = linearModel({ name: 'inside', file: join(INSIDE_DIR, 'inside.json'), features: ['x:a'] });
const Outside = linearModel({ name: 'outside', file: join(OUTSIDE_DIR, 'outside.json'), features: ['x:a'] });
const app = defineApp({ pipelines: [itemPipeline('inside', Inside), itemPipeline('outside', Outside)] });

let redis: TestRedis;
const servers: FastifyInstance[] = [];

before(async () => {
  redis = await startTestRedis();
});
after(async () => {
  await Promise.all(servers.map((server) => server.close()));
  await redis?.stop();
  rmSync(OUTSIDE_DIR, { recursive: true, force: true });
  rmSync(INSIDE_DIR, { recursive: true, force: true });
});

async function serverWith(env: Record<string, string> = {}): Promise<FastifyInstance> {
  const server = await buildServer({ config: testConfig(redis, env), app });
  servers.push(server);
  if (!(await server.rankd.redis.waitUntilReady(5000))) throw new Error('server did not connect to Redis');
  return server;
}

function post(
  server: FastifyInstance,
  url: string,
  body: unknown,
  options: { from?: string; headers?: Record<string, string> } = {},
) {
  const inject: InjectOptions = {
    method: 'POST',
    url,
    payload: JSON.stringify(body),
    headers: { 'content-type': 'application/json', ...options.headers },
    ...(options.from === undefined ? {} : { remoteAddress: options.from }),
  };
  return server.inject(inject);
}

/** Every route of rankd's that changes data or the running server, with a body it accepts. */
const WRITES: ReadonlyArray<readonly [string, unknown]> = [
  ['/api/v1/entities/upload', { entity_type: 'item', entities: [{ item_id: 'w1', a: 1 }] }],
  ['/api/v1/entities/delete', { entity_type: 'item', entity_ids: ['kept'] }],
  ['/api/entity/v1/entities/delete', { entity_type: 'item', entity_ids: ['kept'] }],
  ['/api/v1/features/upload', { feature_view: 'any', rows: [] }],
  ['/api/v1/features/delete', { feature_view: 'any', entity_ids: [] }],
  ['/api/v1/admin/models/reload', {}],
];

describe('no API key set', () => {
  let server: FastifyInstance;
  let raw: RawRedis;
  before(async () => {
    server = await serverWith();
    raw = await RawRedis.connect(redis);
  });
  after(async () => raw?.close());

  test('another machine cannot upload, delete or reload: 403 RANKD_LOOPBACK_ONLY naming the settings, nothing written', async () => {
    const kept = await post(server, '/api/v1/entities/upload', {
      entity_type: 'item',
      entities: [{ item_id: 'kept' }],
    });
    assert.equal(kept.statusCode, 200);
    const before = await raw.dbSize();
    for (const [url, body] of WRITES) {
      const res = await post(server, url, body, { from: REMOTE });
      assert.equal(res.statusCode, 403, url);
      assert.equal(res.json().error_code, 'RANKD_LOOPBACK_ONLY', url);
      assert.match(res.json().detail, /ADMIN_API_KEYS/);
      assert.match(res.json().detail, /API_KEYS/);
    }
    assert.equal(await raw.dbSize(), before, 'nothing written or deleted');
    assert.equal(await raw.exists(raw.keys.entity('item', 'kept')), 1);
    assert.equal(await raw.exists(raw.keys.entity('item', 'w1')), 0);
  });

  test('it can still rank, read and send feedback', async () => {
    const ranked = await post(
      server,
      '/api/v1/inside',
      { request_id: 'r', candidates: [{ item_id: 'kept' }] },
      { from: REMOTE },
    );
    assert.equal(ranked.statusCode, 200, ranked.body);
    const got = await post(
      server,
      '/api/v1/entities/get',
      { entity_type: 'item', entity_ids: ['kept'] },
      { from: REMOTE },
    );
    assert.equal(got.statusCode, 200);
    const feedback = await post(
      server,
      '/api/v1/events/feedback',
      { events: [{ request_id: 'r', entity_type: 'item', entity_id: 'kept', feedback_type: 'click' }] },
      { from: REMOTE },
    );
    assert.equal(feedback.statusCode, 200, feedback.body);
  });

  test('this machine can, from any loopback address', async () => {
    for (const from of LOOPBACKS) {
      const res = await post(
        server,
        '/api/v1/entities/upload',
        { entity_type: 'item', entities: [{ item_id: 'l1' }] },
        { from },
      );
      assert.equal(res.statusCode, 200, from);
    }
    assert.equal((await post(server, '/api/v1/admin/models/reload', {}, { from: '::1' })).statusCode, 200);
  });

  test('a real connection to a non-loopback address of this machine is refused too', async (t) => {
    const address = Object.values(networkInterfaces())
      .flat()
      .find((nic) => nic !== undefined && !nic.internal && nic.family === 'IPv4')?.address;
    if (address === undefined) {
      t.skip('this machine has no non-loopback IPv4 interface');
      return;
    }
    const listening = await serverWith();
    const running = await startServer(listening, { port: 0, host: address, shutdownTimeoutMs: 1000 });
    const url = (path: string) => `http://${address}:${running.port}${path}`;
    const send = (path: string, body: unknown) =>
      fetch(url(path), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const upload = await send('/api/v1/entities/upload', {
      entity_type: 'item',
      entities: [{ item_id: 'nic1' }],
    });
    assert.equal(upload.status, 403);
    assert.equal(((await upload.json()) as { error_code: string }).error_code, 'RANKD_LOOPBACK_ONLY');
    assert.equal(
      (await send('/api/v1/entities/get', { entity_type: 'item', entity_ids: ['kept'] })).status,
      200,
    );
    assert.equal(await raw.exists(raw.keys.entity('item', 'nic1')), 0);
  });
});

describe('with keys, other machines write with a key', () => {
  test('API_KEYS: any key may write; ADMIN_API_KEYS alone: writes need an admin key', async () => {
    const keyed = await serverWith({ API_KEYS: 'k1', ADMIN_API_KEYS: 'a1' });
    const upload = { entity_type: 'item', entities: [{ item_id: 'k' }] };
    assert.equal((await post(keyed, '/api/v1/entities/upload', upload, { from: REMOTE })).statusCode, 401);
    assert.equal(
      (await post(keyed, '/api/v1/entities/upload', upload, { from: REMOTE, headers: { 'x-api-key': 'k1' } }))
        .statusCode,
      200,
    );
    const adminOnly = await serverWith({ ADMIN_API_KEYS: 'a1' });
    assert.equal(
      (await post(adminOnly, '/api/v1/entities/upload', upload, { from: REMOTE })).statusCode,
      401,
    );
    assert.equal(
      (await post(adminOnly, '/api/v1/entities/upload', upload, { from: '127.0.0.1' })).statusCode,
      401,
      'once a key is set, loopback is no exception (a proxy on this machine makes every client local)',
    );
    assert.equal(
      (
        await post(adminOnly, '/api/v1/entities/upload', upload, {
          from: REMOTE,
          headers: { authorization: 'Bearer a1' },
        })
      ).statusCode,
      200,
    );
    // Reads and ranking stay open with only admin keys.
    assert.equal(
      (
        await post(
          adminOnly,
          '/api/v1/entities/get',
          { entity_type: 'item', entity_ids: ['k'] },
          { from: REMOTE },
        )
      ).statusCode,
      200,
    );
  });

  test('the start line says which policy is in force', () => {
    assert.match(
      accessPolicy(loadConfig({})),
      /only this machine \(loopback\) may upload, delete or reload models/,
    );
    assert.match(
      accessPolicy(loadConfig({ ADMIN_API_KEYS: 'a' })),
      /uploads, deletes and admin routes need a key from ADMIN_API_KEYS/,
    );
    assert.match(accessPolicy(loadConfig({ API_KEYS: 'k' })), /needs a key from API_KEYS/);
  });

  test('loopback addresses', () => {
    for (const address of LOOPBACKS) assert.ok(isLoopback(address), address);
    for (const address of [REMOTE, '::ffff:10.0.0.1', '128.0.0.1', 'fe80::1', undefined])
      assert.ok(!isLoopback(address), String(address));
  });
});

describe('no absolute paths in answers', () => {
  test('the model reload answer names files relative to the app directory, or by name alone', async () => {
    const server = await serverWith();
    const res = await post(server, '/api/v1/admin/models/reload', {});
    assert.equal(res.statusCode, 200);
    const files = Object.fromEntries(
      (res.json().models as Array<{ name: string; file: string }>).map((model) => [model.name, model.file]),
    );
    assert.deepEqual(files, {
      inside: relative(process.cwd(), join(INSIDE_DIR, 'inside.json')),
      outside: 'outside.json',
    });
    // A failed reload's reason names the file too.
    rmSync(join(OUTSIDE_DIR, 'outside.json'));
    const failed = await post(server, '/api/v1/admin/models/reload', { model: 'outside' });
    const [model] = failed.json().models as Array<{ status: string; error: string }>;
    assert.equal(model?.status, 'failed');
    assert.ok(!(model?.error ?? '').includes(OUTSIDE_DIR), model?.error);
    assert.ok(!failed.body.includes(tmpdir()), failed.body);
    writeFileSync(join(OUTSIDE_DIR, 'outside.json'), weights);
  });

  test('an error naming the event file names it without its directory', async () => {
    const eventFile = join(OUTSIDE_DIR, 'missing-dir', 'events.jsonl');
    const server = await serverWith({ EVENTS_SINK: 'file', EVENTS_FILE: eventFile });
    const res = await post(server, '/api/v1/events/feedback', {
      events: [{ request_id: 'r', entity_type: 'item', entity_id: 'x', feedback_type: 'click' }],
    });
    assert.equal(res.statusCode, 503, res.body);
    assert.match(res.json().detail, /events\.jsonl/);
    assert.ok(!res.body.includes(OUTSIDE_DIR), res.body);
    assert.ok(!isAbsolute(String(/ (\/\S+events\.jsonl)/.exec(res.json().detail)?.[1] ?? 'x')));
  });
});

describe('security headers', () => {
  test('the console sends a strict CSP, X-Frame-Options DENY and nosniff, on every one of its answers', async () => {
    const server = await serverWith();
    const page = await server.inject({ method: 'GET', url: '/console' });
    assert.equal(page.statusCode, 200);
    const asset = /src="\/console\/(assets\/[^"]+\.js)"/.exec(page.body)?.[1];
    assert.ok(asset, 'the built page loads its script from /console/assets/');
    for (const url of [
      '/console',
      '/console/',
      `/console/${asset}`,
      '/console/app.json',
      '/console/sample-ids?entity_type=item',
      '/console/assets/nope.js',
    ]) {
      const res = await server.inject({ method: 'GET', url });
      const csp = String(res.headers['content-security-policy']);
      assert.match(csp, /default-src 'self'/, url);
      assert.match(csp, /script-src 'self'(;|$)/, url);
      assert.match(csp, /frame-ancestors 'none'/, url);
      assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/, url);
      assert.equal(res.headers['x-frame-options'], 'DENY', url);
      assert.equal(res.headers['x-content-type-options'], 'nosniff', url);
    }
    // docs/console.md shows the policy as it is sent.
    const doc = readFileSync(new URL('../docs/console.md', import.meta.url), 'utf8');
    assert.ok(
      doc.includes(`\n${String(page.headers['content-security-policy'])}\n`),
      'console.md shows the policy sent',
    );
    // The page itself has no inline script for the policy to block.
    assert.doesNotMatch(page.body, /<script(?![^>]*\bsrc=)[^>]*>/);
  });

  test('every answer says nosniff: API answers, errors and unknown routes', async () => {
    const server = await serverWith({ API_KEYS: 'k' });
    for (const res of [
      await server.inject({ method: 'GET', url: '/healthcheck' }),
      await post(
        server,
        '/api/v1/entities/get',
        { entity_type: 'item', entity_ids: ['x'] },
        { headers: { 'x-api-key': 'k' } },
      ),
      await post(server, '/api/v1/entities/get', { entity_type: 'item', entity_ids: ['x'] }),
      await server.inject({ method: 'GET', url: '/nope' }),
    ])
      assert.equal(
        res.headers['x-content-type-options'],
        'nosniff',
        `${res.statusCode} ${res.body.slice(0, 80)}`,
      );
  });
});
