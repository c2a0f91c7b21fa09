import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { killOnProcessExit, startRedisOn, startRedisOnFreePorts } from '../../src/redis/free-port-server.js';
import { findRedisServer } from '../../src/redis/local-server.js';
import { asTestRedis, startTestCluster } from './redis-cluster.js';
import type { TestRedis } from './test-redis.js';

export type { TestRedis } from './test-redis.js';

/**
 * What {@link startTestRedis} starts: `cluster` when `RANKD_TEST_REDIS=cluster` (`npm run
 * test:cluster`), so that the same suites run against a Redis Cluster, else a single Redis.
 */
export const TEST_REDIS_MODE: 'single' | 'cluster' =
  process.env.RANKD_TEST_REDIS === 'cluster' ? 'cluster' : 'single';

/**
 * Starts a real `redis-server` on a free port (or on `port`, e.g. one a server already points at)
 * with a temporary data directory. Tests never touch a Redis on 6379. Call `stop()` in `after()`.
 * In cluster mode ({@link TEST_REDIS_MODE}) a plain call starts a 3 + 3 node Redis Cluster instead;
 * a call asking for a port or persistence still gets a single Redis.
 */
export async function startTestRedis(
  options: { persistent?: boolean; port?: number } = {},
): Promise<TestRedis> {
  if (TEST_REDIS_MODE === 'cluster' && options.port === undefined && !options.persistent) {
    return asTestRedis(await startTestCluster());
  }
  const binary = findRedisServer();
  if (!binary)
    throw new Error('redis-server is not installed: run `npm test` (its pretest step installs it)');
  const dir = mkdtempSync(join(tmpdir(), 'rankd-test-redis-'));
  const persistent = options.persistent ?? false;
  let child: ChildProcess | undefined;
  const unguard = killOnProcessExit(() => [child], dir);
  let port = options.port;
  try {
    if (port === undefined) ({ child, port } = await startRedisOnFreePorts({ binary, dir, persistent }));
    else child = await startRedisOn({ binary, dir, persistent, port });
  } catch (error) {
    unguard();
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  const fixedPort = port;
  // A restart is on the same port: the server under test points at it.
  const start = async () => {
    child = await startRedisOn({ binary, dir, persistent, port: fixedPort });
  };
  const kill = async () => {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      running.once('exit', () => resolve());
      running.kill('SIGKILL');
    });
  };
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    kill,
    restart: start,
    async stop() {
      unguard();
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export { killOnProcessExit } from '../../src/redis/free-port-server.js';
