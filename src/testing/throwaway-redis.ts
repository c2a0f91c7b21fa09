import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { killOnProcessExit, startRedisOnFreePorts } from '../redis/free-port-server.js';
import { findRedisServer } from '../redis/local-server.js';

/** A `redis-server` of one test file's own: on a free port, data in a temporary directory. */
interface ThrowawayRedis {
  readonly port: number;
  /** `redis://127.0.0.1:<port>`. */
  readonly url: string;
  /** Stops it and removes its data. */
  stop(): Promise<void>;
}

/** What a test run without `redis-server` is told: where it looked, and the one command that fixes it. */
const REDIS_SERVER_MISSING =
  'redis-server is not installed (looked on PATH and in /usr/bin, /usr/local/bin, /opt/homebrew/bin, ...): ' +
  '`npx rankd redis install` installs it (with apt-get, dnf or brew); the tests start their own on a free port';

/**
 * Starts a throwaway `redis-server` on a free loopback port (never 6379, where a developer's own
 * Redis runs), without persistence. It is killed if this process exits before `stop()`.
 */
export async function startThrowawayRedis(): Promise<ThrowawayRedis> {
  const binary = findRedisServer();
  if (binary === undefined) throw new Error(REDIS_SERVER_MISSING);
  const dir = mkdtempSync(join(tmpdir(), 'rankd-testing-'));
  let child: ChildProcess | undefined;
  const unguard = killOnProcessExit(() => [child], dir);
  let port: number;
  try {
    ({ child, port } = await startRedisOnFreePorts({ binary, dir, persistent: false }));
  } catch (error) {
    unguard();
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  const running = child;
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    async stop() {
      unguard();
      if (running.exitCode === null && running.signalCode === null) {
        const exited = new Promise((resolve) => running.once('exit', resolve));
        running.kill('SIGKILL');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
