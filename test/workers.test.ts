/**
 * `rankd run --workers 2`: both workers serve one port; a killed worker is replaced (and logged)
 * while the service keeps answering; SIGHUP replaces the workers one by one while requests keep
 * flowing, none failing; SIGTERM lets a slow request finish (200) and exits 0. Also one process
 * (`--workers 1`, no primary): SIGHUP is logged and ignored, SIGTERM drains the same way.
 *
 * The CLI runs from source through tsx on the fixture app test/fixtures/workers/app.ts, whose
 * model waits `delay_ms` and prints a line once it has started scoring.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  CLI,
  type CliService,
  childPids,
  isAlive,
  killServices,
  ROOT,
  readyWorkerPids,
  startCliService,
} from './helpers/cli-service.js';
import { startTestRedis, type TestRedis } from './helpers/redis-server.js';

const APP = 'test/fixtures/workers/app.ts';
const TIMEOUT = { timeout: 180_000 };

function post(base: string, path: string, body: unknown): Promise<Response> {
  return fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

/** One upload and its read-back; throws on any non-200 or a wrong answer. */
async function roundTrip(base: string, id: string): Promise<void> {
  const product = { product_id: id, title: `title ${id}`, price: id.length };
  const upload = await post(base, '/api/v1/entities/upload', { entity_type: 'product', entities: [product] });
  if (upload.status !== 200) throw new Error(`upload ${id}: ${upload.status} ${await upload.text()}`);
  await upload.arrayBuffer();
  const get = await post(base, '/api/v1/entities/get', { entity_type: 'product', entity_ids: [id] });
  const body = (await get.json()) as { entities?: Record<string, unknown> };
  if (get.status !== 200) throw new Error(`get ${id}: ${get.status} ${JSON.stringify(body)}`);
  assert.deepEqual(body.entities, { [id]: product });
}

/** A slow ranking request (the model waits `delayMs`); resolves with its status. */
async function slowRanking(base: string, requestId: string, delayMs: number): Promise<number> {
  const response = await post(base, '/api/v1/slow-ranking', {
    request_id: requestId,
    delay_ms: delayMs,
    candidates: [{ product_id: 'slow-1', title: 'slow', price: 1 }],
  });
  await response.arrayBuffer();
  return response.status;
}

/** Round trips from `loops` concurrent loops until `stop()`; every failure is kept. */
function requestLoop(base: string, loops: number) {
  let running = true;
  let done = 0;
  const failures: string[] = [];
  const loop = async (n: number) => {
    for (let i = 0; running; i++) {
      try {
        await roundTrip(base, `loop-${n}-${i}`);
        done++;
      } catch (error) {
        failures.push((error as Error).message);
      }
    }
  };
  const all = Promise.all(Array.from({ length: loops }, (_, n) => loop(n)));
  return {
    async stop() {
      running = false;
      await all;
      return { done, failures };
    },
  };
}

after(killServices);

describe('rankd run --workers 2', () => {
  let redis: TestRedis;
  let service: CliService;

  before(async () => {
    redis = await startTestRedis();
    service = await startCliService(APP, { REDIS_URL: redis.url, SHUTDOWN_TIMEOUT_MS: '10000' }, [
      '--workers',
      '2',
    ]);
  });

  after(async () => {
    killServices();
    await redis.stop();
  });

  test('serves from two worker processes, announced with their pids', TIMEOUT, async () => {
    assert.match(
      service.output(),
      /rankd serving workers-fixture on http:\/\/127\.0\.0\.1:\d+ with 2 workers/,
    );
    const pids = readyWorkerPids(service.output());
    assert.equal(pids.length, 2);
    assert.deepEqual([...childPids(service.child.pid ?? 0)].sort(), [...pids].sort());
    await roundTrip(service.base, 'first');
  });

  test(
    'a killed worker is replaced, the replacement is logged, and the service keeps answering',
    TIMEOUT,
    async () => {
      const [victim, survivor] = readyWorkerPids(service.output());
      assert.ok(victim !== undefined && survivor !== undefined);
      const from = service.output().length;
      process.kill(victim, 'SIGKILL');
      await service.waitFor(
        new RegExp(`worker \\d+ \\(pid ${victim}\\) exited unexpectedly \\(signal SIGKILL\\)`),
        30_000,
        from,
      );
      const replacement = Number((await service.waitFor(/worker \d+ ready \(pid (\d+)\)/, 60_000, from))[1]);
      assert.notEqual(replacement, victim);
      assert.deepEqual([...childPids(service.child.pid ?? 0)].sort(), [survivor, replacement].sort());
      // New connections, each answered by one of the two live workers.
      for (let i = 0; i < 10; i++) await roundTrip(service.base, `after-kill-${i}`);
      assert.equal(service.child.exitCode, null);
    },
  );

  test(
    'SIGHUP replaces the workers one by one while requests flow: none fails, new pids',
    TIMEOUT,
    async () => {
      const before = childPids(service.child.pid ?? 0);
      assert.equal(before.length, 2);
      const loop = requestLoop(service.base, 4);
      // Requests flowing before the signal, so connections are open and busy when workers drain.
      await new Promise((resolve) => setTimeout(resolve, 500));
      const from = service.output().length;
      service.child.kill('SIGHUP');
      await service.waitFor(/reload done: 2 workers replaced/, 120_000, from);
      // Requests also after, on whatever connections the clients moved to.
      await new Promise((resolve) => setTimeout(resolve, 500));
      const { done, failures } = await loop.stop();
      assert.deepEqual(failures, [], `${failures.length} of ${done + failures.length} requests failed`);
      assert.ok(done > 0);
      const replaced = service.output().slice(from);
      assert.equal([...replaced.matchAll(/worker \d+ replaces worker \d+/g)].length, 2, replaced);
      const afterPids = childPids(service.child.pid ?? 0);
      assert.equal(afterPids.length, 2);
      for (const pid of afterPids) assert.ok(!before.includes(pid), `pid ${pid} was there before the reload`);
      for (const pid of before) assert.ok(!isAlive(pid), `old worker ${pid} still runs`);
    },
  );

  test(
    'SIGTERM: a slow in-flight request completes with 200, then the primary exits 0',
    TIMEOUT,
    async () => {
      const from = service.output().length;
      const slow = slowRanking(service.base, 'slow-sigterm', 1500);
      await service.waitFor(/slow model: scoring slow-sigterm/, 30_000, from);
      const workers = childPids(service.child.pid ?? 0);
      service.child.kill('SIGTERM');
      assert.equal(await slow, 200);
      assert.equal(await service.exited, 0, service.output());
      assert.match(service.output().slice(from), /SIGTERM received, stopping 2 workers/);
      assert.match(service.output().slice(from), /all workers stopped/);
      for (const pid of workers) assert.ok(!isAlive(pid), `worker ${pid} outlived the primary`);
    },
  );
});

describe('rankd run (one process, no primary)', () => {
  let redis: TestRedis;
  let service: CliService;

  before(async () => {
    redis = await startTestRedis();
    service = await startCliService(APP, { REDIS_URL: redis.url });
  });

  after(async () => {
    killServices();
    await redis.stop();
  });

  test('SIGHUP is logged and ignored: the process keeps serving', TIMEOUT, async () => {
    const from = service.output().length;
    service.child.kill('SIGHUP');
    await service.waitFor(/SIGHUP ignored: .* run with --workers 2/, 30_000, from);
    await roundTrip(service.base, 'after-hup');
    assert.equal(service.child.exitCode, null);
  });

  test('SIGTERM: a slow in-flight request completes with 200, then exit 0', TIMEOUT, async () => {
    const from = service.output().length;
    const slow = slowRanking(service.base, 'slow-single', 1500);
    await service.waitFor(/slow model: scoring slow-single/, 30_000, from);
    service.child.kill('SIGTERM');
    assert.equal(await slow, 200);
    assert.equal(await service.exited, 0, service.output());
  });
});

describe('rankd run --workers 2 with an app that cannot load', () => {
  let redis: TestRedis;
  let dir: string;

  before(async () => {
    redis = await startTestRedis();
    dir = mkdtempSync(join(tmpdir(), 'rankd-workers-'));
  });

  after(async () => {
    rmSync(dir, { recursive: true, force: true });
    await redis.stop();
  });

  test('fails at once with the reason, one line, exit 1 (no restart loop)', TIMEOUT, async () => {
    const app = join(dir, 'broken.ts');
    writeFileSync(app, 'throw new Error("boom");\nexport default 1;\n');
    const result = await new Promise<{ code: number | null; stderr: string }>((resolve) =>
      execFile(
        process.execPath,
        [...CLI, 'run', '--app', app, '--port', '0', '--workers', '2'],
        { cwd: ROOT, env: { ...process.env, REDIS_URL: redis.url }, timeout: 120_000 },
        (error, _stdout, stderr) =>
          resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stderr }),
      ),
    );
    assert.equal(result.code, 1, result.stderr);
    const lines = result.stderr.trimEnd().split('\n');
    assert.equal(lines.length, 1, result.stderr);
    assert.match(
      lines[0] ?? '',
      /^rankd: a worker could not start: could not load app module .*broken\.ts: boom/,
    );
  });
});
