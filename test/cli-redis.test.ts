import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { oneLine } from '../src/cli/cli-error.js';
import { defaultRedisDir } from '../src/cli/data-dir.js';
import { formatStep, type InstallEnvironment, installPlan } from '../src/cli/install-redis.js';
import { isRedisServerProcess } from '../src/cli/process-info.js';
import { redisAddressOf } from '../src/cli/redis-address.js';
import { pingRedis } from '../src/redis/local-server.js';
import { freePort } from './helpers/free-port.js';
import { startTestRedis, type TestRedis } from './helpers/redis-server.js';

// The CLI runs from its TypeScript source through tsx, so these tests always exercise the current
// code, build or no build; one test below checks that bin/rankd.js launches the built copy.
const ROOT = new URL('..', import.meta.url).pathname;

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

function rankd(args: readonly string[]): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'src/cli/main.ts', ...args],
      { cwd: ROOT, timeout: 60_000 },
      (error, stdout, stderr) =>
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr }),
    );
  });
}

/** stderr of a failed command must be exactly one line. */
function assertOneLineFailure(result: CliResult, includes: string): void {
  assert.notEqual(result.code, 0, `expected a failure, got: ${result.stdout}`);
  const lines = result.stderr.trimEnd().split('\n');
  assert.equal(lines.length, 1, `stderr should be one line:\n${result.stderr}`);
  assert.match(lines[0] ?? '', new RegExp(includes.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
}

describe('install plan', () => {
  const env = (platform: NodeJS.Platform, isRoot: boolean, tools: string[]): InstallEnvironment => ({
    platform,
    isRoot,
    has: (name) => tools.includes(name),
  });
  const plan = (e: InstallEnvironment) => installPlan(e)?.map(formatStep);

  test('apt-get as root: update, then install redis-server', () => {
    assert.deepEqual(plan(env('linux', true, ['apt-get', 'sudo'])), [
      'apt-get update',
      'apt-get install -y redis-server',
    ]);
  });
  test('apt-get as a user goes through sudo when it exists, and not when it does not', () => {
    assert.deepEqual(plan(env('linux', false, ['apt-get', 'sudo'])), [
      'sudo apt-get update',
      'sudo apt-get install -y redis-server',
    ]);
    assert.deepEqual(plan(env('linux', false, ['apt-get'])), [
      'apt-get update',
      'apt-get install -y redis-server',
    ]);
  });
  test('dnf installs the redis package', () => {
    assert.deepEqual(plan(env('linux', false, ['dnf', 'sudo'])), ['sudo dnf install -y redis']);
  });
  test('brew is preferred on macOS and never uses sudo', () => {
    assert.deepEqual(plan(env('darwin', false, ['brew', 'sudo', 'apt-get'])), ['brew install redis']);
  });
  test('no package manager: no plan', () => {
    assert.equal(installPlan(env('linux', true, ['sudo'])), undefined);
  });
});

describe('default data directory', () => {
  test('Linux: XDG_DATA_HOME when absolute, else ~/.local/share', () => {
    assert.equal(
      defaultRedisDir(6379, { platform: 'linux', env: { XDG_DATA_HOME: '/data' }, home: '/home/a' }),
      '/data/rankd/redis-6379',
    );
    assert.equal(
      defaultRedisDir(7000, { platform: 'linux', env: { XDG_DATA_HOME: 'relative' }, home: '/home/a' }),
      '/home/a/.local/share/rankd/redis-7000',
    );
  });
  test('macOS: ~/Library/Application Support', () => {
    assert.equal(
      defaultRedisDir(6379, { platform: 'darwin', env: {}, home: '/Users/a' }),
      '/Users/a/Library/Application Support/rankd/redis-6379',
    );
  });
});

describe('helpers', () => {
  test('oneLine folds a multi-line message', () => {
    assert.equal(
      oneLine('Invalid configuration:\n  - PORT="x": bad\n  - HOST="": bad'),
      'Invalid configuration: PORT="x": bad; HOST="": bad',
    );
  });
  test('redisAddressOf: default port, IPv6, what counts as local', () => {
    assert.deepEqual(redisAddressOf('redis://localhost'), {
      host: 'localhost',
      port: 6379,
      display: 'localhost:6379',
      local: true,
    });
    assert.equal(redisAddressOf('redis://[::1]:7000').display, '[::1]:7000');
    assert.equal(redisAddressOf('redis://[::1]:7000').local, true);
    assert.equal(redisAddressOf('rediss://127.0.0.1:7000').local, false);
    assert.equal(redisAddressOf('redis://cache.internal:6379').local, false);
  });
});

describe('rankd --help', () => {
  for (const args of [
    ['--help'],
    ['redis', '--help'],
    ['redis', 'stop', '--help'],
    ['redis', 'status', '--help'],
    ['redis', 'install', '--help'],
    ['run', '--help'],
  ]) {
    test(`rankd ${args.join(' ')}`, async () => {
      const result = await rankd(args);
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, /^Usage: rankd/);
    });
  }

  test('bin/rankd.js launches the built CLI', {
    skip: !existsSync(join(ROOT, 'dist/cli/main.js')) && 'not built',
  }, async () => {
    const result = await new Promise<CliResult>((resolve) =>
      execFile(process.execPath, ['bin/rankd.js', '--version'], { cwd: ROOT }, (error, stdout, stderr) =>
        resolve({ code: error ? 1 : 0, stdout, stderr }),
      ),
    );
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^\d+\.\d+\.\d+/);
  });

  test('redis install: already installed, says where, exit 0', async () => {
    const result = await rankd(['redis', 'install']);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /redis-server is installed: \//);
  });

  test('a bad port is one line and exit 1', async () => {
    assertOneLineFailure(await rankd(['redis', '--port', 'abc']), 'expected a port number');
  });
});

describe('rankd redis on a spare port', () => {
  let port: number;
  let dir: string;

  before(async () => {
    port = await freePort();
    dir = mkdtempSync(join(tmpdir(), 'rankd-cli-redis-'));
  });

  after(() => {
    // Whatever happened, do not leave a detached redis-server behind.
    const pidFile = join(dir, 'redis.pid');
    if (existsSync(pidFile)) {
      const pid = Number(readFileSync(pidFile, 'utf8'));
      if (isRedisServerProcess(pid)) process.kill(pid, 'SIGKILL');
    }
    rmSync(dir, { recursive: true, force: true });
  });

  test('starts redis-server in the background, with AOF in the data dir and a pid file', async () => {
    const result = await rankd(['redis', '--port', String(port), '--dir', dir]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, new RegExp(`127\\.0\\.0\\.1:${port}`));
    assert.ok(result.stdout.includes(dir), result.stdout);
    assert.match(result.stdout, /rankd redis stop/);
    assert.equal(await pingRedis(port), true);
    const pid = Number(readFileSync(join(dir, 'redis.pid'), 'utf8'));
    assert.ok(isRedisServerProcess(pid));
    assert.ok(existsSync(join(dir, 'appendonlydir')), 'AOF directory');
  });

  test('running it again says it is already running and exits 0', async () => {
    const result = await rankd(['redis', '--port', String(port), '--dir', dir]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /already running/);
  });

  test('status: answers, started by rankd, exit 0', async () => {
    const result = await rankd(['redis', 'status', '--port', String(port), '--dir', dir]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /answers.*started by rankd/);
  });

  test('stop stops it and removes the pid file', async () => {
    const result = await rankd(['redis', 'stop', '--port', String(port), '--dir', dir]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /Stopped Redis/);
    assert.equal(await pingRedis(port), false);
    assert.equal(existsSync(join(dir, 'redis.pid')), false);
  });

  test('stop again: nothing to stop, one line, exit 1', async () => {
    const result = await rankd(['redis', 'stop', '--port', String(port), '--dir', dir]);
    assert.equal(result.code, 1);
    assertOneLineFailure(result, `no Redis started by rankd on port ${port}`);
  });

  test('status when nothing answers: one line, exit 1', async () => {
    const result = await rankd(['redis', 'status', '--port', String(port), '--dir', dir]);
    assert.equal(result.code, 1);
    assertOneLineFailure(result, `no Redis answers on 127.0.0.1:${port}`);
  });

  test('options given before the subcommand count too: `redis --port N --dir D stop`', async () => {
    const started = await rankd(['redis', '--port', String(port), '--dir', dir]);
    assert.equal(started.code, 0, started.stderr);
    const stopped = await rankd(['redis', '--port', String(port), '--dir', dir, 'stop']);
    assert.equal(stopped.code, 0, stopped.stderr);
    assert.equal(await pingRedis(port), false);
  });

  test('stop never signals a pid that is not a redis-server', async () => {
    // Our own pid stands for a recycled pid: stop must refuse and leave the process alone.
    writeFileSync(join(dir, 'redis.pid'), `${process.pid}\n`);
    const result = await rankd(['redis', 'stop', '--port', String(port), '--dir', dir]);
    assertOneLineFailure(result, 'is not a running redis-server');
    assert.equal(existsSync(join(dir, 'redis.pid')), false, 'stale pid file removed');
  });

  test('a port taken by something else: one line naming the reason, exit 1, no pid file', async () => {
    const { createServer } = await import('node:net');
    const blocker = createServer().listen(0, '127.0.0.1');
    await new Promise((resolve) => blocker.once('listening', resolve));
    const address = blocker.address();
    const taken = typeof address === 'object' && address ? address.port : 0;
    try {
      const result = await rankd(['redis', '--port', String(taken), '--dir', dir]);
      assertOneLineFailure(result, `redis-server did not start on port ${taken}`);
      assert.equal(existsSync(join(dir, 'redis.pid')), false);
    } finally {
      blocker.close();
    }
  });
});

describe('rankd redis with a Redis it did not start', () => {
  let redis: TestRedis;
  let dir: string;

  before(async () => {
    redis = await startTestRedis();
    dir = mkdtempSync(join(tmpdir(), 'rankd-cli-redis-'));
  });

  after(async () => {
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('`rankd redis` uses it and exits 0 without writing a pid file', async () => {
    const result = await rankd(['redis', '--port', String(redis.port), '--dir', dir]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /already answers/);
    assert.equal(existsSync(join(dir, 'redis.pid')), false);
  });

  test('status says rankd did not start it; stop refuses (exit 1) and it keeps running', async () => {
    const status = await rankd(['redis', 'status', '--port', String(redis.port), '--dir', dir]);
    assert.equal(status.code, 0, status.stderr);
    assert.match(status.stdout, /not started by rankd/);
    const stop = await rankd(['redis', 'stop', '--port', String(redis.port), '--dir', dir]);
    assert.equal(stop.code, 1);
    assertOneLineFailure(stop, `no Redis started by rankd on port ${redis.port}`);
    assert.equal(await pingRedis(redis.port), true);
  });
});
