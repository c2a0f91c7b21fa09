import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from 'redis';
import { ensureLocalRedis, readPidFile } from '../../src/cli/local-redis.js';
import { isProcessRunning, waitForExit } from '../../src/cli/process-info.js';
import { freePort } from '../../test/helpers/free-port.js';

/**
 * The chaos test's Redis: started by the very code of `rankd redis` (`ensureLocalRedis`: AOF,
 * detached, pid file) on a free port — never 6379 — in a temporary directory, killed with SIGKILL
 * and started again on the same directory, so that what comes back is what the AOF replays.
 */
export class ChaosRedis {
  readonly dir = mkdtempSync(join(tmpdir(), 'rankd-chaos-redis-'));
  #port = 0;

  private constructor(readonly durable: boolean) {}

  /** Starts it (`durable`: `rankd redis --durable`, appendfsync always). */
  static async start(durable: boolean): Promise<ChaosRedis> {
    const redis = new ChaosRedis(durable);
    redis.#port = await freePort();
    await redis.restart();
    return redis;
  }

  get port(): number {
    return this.#port;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.#port}`;
  }

  /** The running redis-server's pid, from the pid file `rankd redis` writes. */
  get pid(): number | undefined {
    return readPidFile(this.dir);
  }

  /** `rankd redis` on the same port and directory; resolves once it answers PING (AOF loaded). */
  async restart(): Promise<void> {
    const result = await ensureLocalRedis({ port: this.#port, dir: this.dir }, () => undefined, {
      durable: this.durable,
    });
    if (!result.started) throw new Error(`a Redis already answered on port ${this.#port}`);
  }

  /** The running server's `appendfsync`, asked from it: what the run really tested. */
  async appendfsync(): Promise<string> {
    const client = createClient({ url: this.url });
    client.on('error', () => undefined);
    await client.connect();
    try {
      return (await client.configGet('appendfsync')).appendfsync ?? 'unknown';
    } finally {
      await client.close();
    }
  }

  /** SIGKILL: no shutdown, no final AOF write; resolves once the process is gone. */
  async kill(): Promise<number> {
    const pid = this.pid;
    if (pid === undefined || !isProcessRunning(pid)) throw new Error('redis-server is not running');
    process.kill(pid, 'SIGKILL');
    if (!(await waitForExit(pid, 10_000))) throw new Error(`redis-server ${pid} survived SIGKILL`);
    return pid;
  }

  /** Kills it if it runs and removes its directory. */
  async stop(): Promise<void> {
    const pid = this.pid;
    if (pid !== undefined && isProcessRunning(pid)) {
      process.kill(pid, 'SIGKILL');
      await waitForExit(pid, 10_000);
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
