import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findRedisServer, spawnRedisServer, waitForRedis } from '../../src/redis/local-server.js';

/** A free TCP port on loopback (never 6379 in practice: the OS hands out ephemeral ports). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

/** A throwaway `redis-server` for one test file. */
export interface TestRedis {
  readonly port: number;
  readonly url: string;
  /** Stops it for good and removes its data directory. */
  stop(): Promise<void>;
  /** Kills it (SIGKILL), as an outage would. */
  kill(): Promise<void>;
  /** Starts it again on the same port and data directory. */
  restart(): Promise<void>;
}

/**
 * Starts a real `redis-server` on a free port (or on `port`, e.g. one a server already points at)
 * with a temporary data directory. Tests never touch a Redis on 6379. Call `stop()` in `after()`.
 */
export async function startTestRedis(
  options: { persistent?: boolean; port?: number } = {},
): Promise<TestRedis> {
  const binary = findRedisServer();
  if (!binary)
    throw new Error('redis-server is not installed: run `npm test` (its pretest step installs it)');
  const port = options.port ?? (await freePort());
  const dir = mkdtempSync(join(tmpdir(), 'rankd-test-redis-'));
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawnRedisServer({ binary, port, dir, persistent: options.persistent ?? false, detached: false });
    if (!(await waitForRedis(port, 10_000))) throw new Error(`redis-server did not start on port ${port}`);
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
  await start();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    kill,
    restart: start,
    async stop() {
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
