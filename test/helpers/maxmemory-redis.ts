import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from 'redis';
import { findRedisServer } from '../../src/redis/local-server.js';
import { startRedisOnFreePorts } from './redis-child.js';
import { killOnProcessExit } from './redis-server.js';

/** A plain client of the `redis` package. */
type Client = ReturnType<typeof plainClient>;
const plainClient = (url: string) => createClient({ url });

/** A redis-server with a `maxmemory` under `noeviction`, and a client on it. */
export interface MaxmemoryRedis {
  readonly url: string;
  readonly client: Client;
  /** Closes the client, kills the server and removes its directory. */
  stop(): Promise<void>;
}

/**
 * Starts a throwaway redis-server (free port, nothing on disk) that refuses writes past
 * `maxmemory` bytes (`noeviction`, as deployments are advised to run), as the event-budget tests
 * need: a single Redis whatever `RANKD_TEST_REDIS` says.
 */
export async function startMaxmemoryRedis(maxmemory: number): Promise<MaxmemoryRedis> {
  const binary = findRedisServer();
  if (!binary) throw new Error('redis-server is not installed');
  const dir = mkdtempSync(join(tmpdir(), 'rankd-test-redis-'));
  let child: ChildProcess | undefined;
  const unguard = killOnProcessExit(() => [child], dir);
  const started = await startRedisOnFreePorts({
    binary,
    dir,
    persistent: false,
    extraArgs: () => ['--maxmemory', String(maxmemory), '--maxmemory-policy', 'noeviction'],
  });
  child = started.child;
  const url = `redis://127.0.0.1:${started.port}`;
  const client = plainClient(url);
  client.on('error', () => undefined);
  await client.connect();
  return {
    url,
    client,
    async stop() {
      await client.close();
      unguard();
      const running = child;
      if (running && running.exitCode === null)
        await new Promise<void>((resolve) => {
          running.once('exit', () => resolve());
          running.kill('SIGKILL');
        });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
