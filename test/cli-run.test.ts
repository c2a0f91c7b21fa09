import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { isRedisServerProcess } from '../src/cli/process-info.js';
import { pingRedis } from '../src/redis/local-server.js';
import {
  CLI,
  type CliService,
  killServices,
  ROOT,
  spawnCliService,
  waitForHealthcheck,
} from './helpers/cli-service.js';
import { freePort } from './helpers/free-port.js';
import { startTestRedis, type TestRedis } from './helpers/redis-server.js';

/** Spawns `rankd run --app template/pipelines/main.ts` on a free port and waits for /healthcheck. */
async function startService(
  env: Record<string, string>,
  extraArgs: readonly string[] = [],
): Promise<CliService> {
  const service = await spawnCliService('template/pipelines/main.ts', env, extraArgs);
  await waitForHealthcheck(service);
  return service;
}

function postJson(base: string, path: string, body: unknown): Promise<Response> {
  return fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

after(killServices);

describe('rankd run with Redis up', () => {
  let redis: TestRedis;
  let service: CliService;

  before(async () => {
    redis = await startTestRedis();
    service = await startService({ REDIS_URL: redis.url });
  });

  after(async () => {
    if (service.child.exitCode === null) service.child.kill('SIGKILL');
    await redis.stop();
  });

  test('says what it serves and where', () => {
    assert.match(service.output(), /rankd serving shop on http:\/\/127\.0\.0\.1:\d+ \(docs: \/redoc\)/);
    assert.doesNotMatch(service.output(), /not answering/);
  });

  test('says which access policy is in force: no key, so only this machine may change data', () => {
    assert.match(
      service.output(),
      /rankd: access: no API key set: .*only this machine \(loopback\) may upload, delete or reload models/,
    );
  });

  test('/healthcheck → {"status":"OK"}', async () => {
    const response = await fetch(`${service.base}/healthcheck`);
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), { status: 'OK' });
  });

  test('/redoc serves the docs page and its bundle', async () => {
    const page = await fetch(`${service.base}/redoc`);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /redoc/i);
    const bundle = await fetch(`${service.base}/redoc/redoc.standalone.js`);
    assert.equal(bundle.status, 200);
    await bundle.arrayBuffer();
  });

  test('a product uploaded over HTTP reads back, with the template app validating it', async () => {
    const product = { product_id: 'p1', brand: 'Ember & Wick', price: 24, categories: ['candles'] };
    const upload = await postJson(service.base, '/api/v1/entities/upload', {
      entity_type: 'product',
      entities: [product],
    });
    assert.equal(upload.status, 200, await upload.clone().text());
    assert.deepEqual(await upload.json(), { entity_type: 'product', entity_ids: ['p1'] });
    const get = await postJson(service.base, '/api/v1/entities/get', {
      entity_type: 'product',
      entity_ids: ['p1'],
    });
    assert.deepEqual(await get.json(), { entity_type: 'product', entities: { p1: product } });
    // The template declares price as a number: a string is refused.
    const wrong = await postJson(service.base, '/api/v1/entities/upload', {
      entity_type: 'product',
      entities: [{ product_id: 'p2', price: 'cheap' }],
    });
    assert.equal(wrong.status, 422);
  });

  test('SIGTERM closes it gracefully: exit code 0', async () => {
    service.child.kill('SIGTERM');
    assert.equal(await service.exited, 0, service.output());
  });
});

describe('rankd run with Redis down', () => {
  let service: CliService;
  let redisPort: number;

  before(async () => {
    redisPort = await freePort();
    service = await startService({
      REDIS_URL: `redis://127.0.0.1:${redisPort}`,
      REDIS_COMMAND_TIMEOUT_MS: '300',
    });
  });

  after(() => {
    if (service.child.exitCode === null) service.child.kill('SIGKILL');
  });

  test('still starts, and warns how to start Redis', () => {
    assert.match(
      service.output(),
      new RegExp(
        `Redis at 127\\.0\\.0\\.1:${redisPort} is not answering; start it with \`rankd redis --port ${redisPort}\``,
      ),
    );
    assert.match(service.output(), /rankd serving shop/);
  });

  test('/readyz → 503 naming `rankd redis`', async () => {
    const response = await fetch(`${service.base}/readyz`);
    assert.equal(response.status, 503);
    const body = (await response.json()) as { detail: string };
    assert.match(body.detail, /rankd redis/);
  });

  test('SIGTERM still exits 0', async () => {
    service.child.kill('SIGTERM');
    assert.equal(await service.exited, 0, service.output());
  });
});

describe('rankd run --redis-auto', () => {
  let service: CliService;
  let redisPort: number;
  // rankd's data directory goes to a temporary XDG_DATA_HOME, never the user's.
  let dataHome: string;
  const env = () => ({ REDIS_URL: `redis://127.0.0.1:${redisPort}`, XDG_DATA_HOME: dataHome });

  before(async () => {
    redisPort = await freePort();
    dataHome = mkdtempSync(join(tmpdir(), 'rankd-cli-data-'));
    service = await startService(env(), ['--redis-auto']);
  });

  after(() => {
    if (service.child.exitCode === null) service.child.kill('SIGKILL');
    const pidFile = join(dataHome, 'rankd', `redis-${redisPort}`, 'redis.pid');
    if (existsSync(pidFile)) {
      const pid = Number(readFileSync(pidFile, 'utf8'));
      if (isRedisServerProcess(pid)) process.kill(pid, 'SIGKILL');
    }
    rmSync(dataHome, { recursive: true, force: true });
  });

  test('starts a local Redis in the data directory, as `rankd redis` does, instead of warning', async () => {
    assert.match(service.output(), new RegExp(`Redis is running on 127\\.0\\.0\\.1:${redisPort}`));
    assert.doesNotMatch(service.output(), /not answering/);
    assert.equal(await pingRedis(redisPort), true);
    assert.ok(existsSync(join(dataHome, 'rankd', `redis-${redisPort}`, 'redis.pid')));
  });

  test('the server is ready on it', async () => {
    const deadline = Date.now() + 10_000;
    let status = 0;
    while (Date.now() < deadline && status !== 200) {
      status = (await fetch(`${service.base}/readyz`)).status;
      if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.equal(status, 200);
  });

  test('Redis outlives the server, and `rankd redis stop` stops it', async () => {
    service.child.kill('SIGTERM');
    assert.equal(await service.exited, 0, service.output());
    assert.equal(await pingRedis(redisPort), true);
    const code = await new Promise<number | null>((resolve) =>
      execFile(
        process.execPath,
        [...CLI, 'redis', 'stop', '--port', String(redisPort)],
        { cwd: ROOT, env: { ...process.env, ...env() } },
        (error) => resolve(error ? (typeof error.code === 'number' ? error.code : null) : 0),
      ),
    );
    assert.equal(code, 0);
    assert.equal(await pingRedis(redisPort), false);
  });
});

describe('rankd run failures: one line, non-zero exit', () => {
  let dir: string;

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'rankd-cli-run-'));
  });

  after(() => rmSync(dir, { recursive: true, force: true }));

  function run(args: readonly string[]): Promise<{ code: number | null; stderr: string }> {
    return new Promise((resolve) => {
      execFile(
        process.execPath,
        [...CLI, 'run', ...args],
        { cwd: ROOT, timeout: 60_000 },
        (error, _stdout, stderr) =>
          resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stderr }),
      );
    });
  }

  function assertOneLine(result: { code: number | null; stderr: string }, pattern: RegExp): void {
    assert.notEqual(result.code, 0);
    const lines = result.stderr.trimEnd().split('\n');
    assert.equal(lines.length, 1, result.stderr);
    assert.match(lines[0] ?? '', pattern);
  }

  test('--app missing.ts names the file', async () => {
    assertOneLine(await run(['--app', 'missing.ts']), /^rankd: app module missing\.ts not found/);
  });

  test('a module whose default export is not a rankd app names the file', async () => {
    const path = join(dir, 'not-an-app.mjs');
    writeFileSync(path, 'export default { name: "nope" };\n');
    assertOneLine(
      await run(['--app', path]),
      new RegExp(`${path.replace(/[.]/g, '\\.')} does not export a rankd app`),
    );
  });

  test('a module that throws while loading names the file and the reason', async () => {
    const path = join(dir, 'broken.ts');
    writeFileSync(path, 'throw new Error("boom");\nexport default 1;\n');
    assertOneLine(await run(['--app', path]), /could not load app module .*broken\.ts: boom/);
  });

  test('an invalid configuration is one line too', async () => {
    const result = await new Promise<{ code: number | null; stderr: string }>((resolve) =>
      execFile(
        process.execPath,
        [...CLI, 'run', '--app', 'template/pipelines/main.ts'],
        { cwd: ROOT, env: { ...process.env, REDIS_PORT: 'many', MAX_BATCH: '0' } },
        (error, _stdout, stderr) => resolve({ code: error ? 1 : 0, stderr }),
      ),
    );
    assertOneLine(result, /Invalid configuration: REDIS_PORT="many": expected a whole number; MAX_BATCH/);
  });
});
