import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import { createClient } from 'redis';
import type { TSchema } from 'typebox';
import { ProductEntity, Type } from '../../src/index.js';
import type { TestRedis } from './redis-server.js';
import { postJson } from './server.js';

/** The template's optional fields (spec 2.2): the given type or null, null when absent. */
export function nullable<T extends TSchema>(type: T) {
  return Type.Union([type, Type.Null()], { default: null });
}

/** The template product of spec 2.2, on the built-in ProductEntity. */
export const TemplateProduct = ProductEntity.extend({
  fields: {
    brand: nullable(Type.String()),
    category: nullable(Type.String()),
    categories: Type.Array(Type.String(), { default: [] }),
    title: nullable(Type.String()),
    description: nullable(Type.String()),
    price: nullable(Type.Number()),
    number_in_stock: nullable(Type.Integer()),
    search_score: nullable(Type.Number()),
  },
});

/** A plain client on the test Redis, for reading what rankd did (stats, keys, MONITOR). */
export async function rawClient(redis: TestRedis) {
  const client = createClient({ url: redis.url });
  await client.connect();
  return client;
}

type RawClient = Awaited<ReturnType<typeof rawClient>>;

/** Redis's own counters: `CONFIG RESETSTAT`, then the MGET calls and key look-ups since. */
export class RedisStats {
  readonly #client: RawClient;

  constructor(client: RawClient) {
    this.#client = client;
  }

  async reset(): Promise<void> {
    await this.#client.configResetStat();
  }

  /** Calls of `command` (lower case, e.g. `mget`) since the last reset. */
  async calls(command: string): Promise<number> {
    const info = await this.#client.info('commandstats');
    const match = new RegExp(`^cmdstat_${command}:calls=(\\d+)`, 'm').exec(info);
    return match ? Number(match[1]) : 0;
  }

  /** Keys read that existed (hits) and that did not (misses) since the last reset. */
  async keyspace(): Promise<{ hits: number; misses: number }> {
    const info = await this.#client.info('stats');
    const hits = /^keyspace_hits:(\d+)/m.exec(info);
    const misses = /^keyspace_misses:(\d+)/m.exec(info);
    assert.ok(hits && misses, 'INFO stats has keyspace_hits and keyspace_misses');
    return { hits: Number(hits[1]), misses: Number(misses[1]) };
  }
}

/**
 * Records every command Redis executes (MONITOR on a dedicated connection). `commands()` waits
 * until a marker sent after the work shows up, so every earlier command has been seen.
 */
export class RedisMonitor {
  readonly #monitor: RawClient;
  readonly #control: RawClient;
  #lines: string[] = [];
  #waiters: Array<() => void> = [];
  #markers = 0;

  private constructor(monitor: RawClient, control: RawClient) {
    this.#monitor = monitor;
    this.#control = control;
  }

  static async start(redis: TestRedis): Promise<RedisMonitor> {
    const monitor = await rawClient(redis);
    const control = await rawClient(redis);
    const recorder = new RedisMonitor(monitor, control);
    await monitor.monitor((line) => {
      recorder.#lines.push(String(line));
      for (const wake of recorder.#waiters.splice(0)) wake();
    });
    return recorder;
  }

  /** Forgets what was recorded so far. */
  clear(): void {
    this.#lines = [];
  }

  /** The commands recorded since the last `clear()`, each as its arguments (command name upper-cased). */
  async commands(): Promise<string[][]> {
    const marker = `rankd-test-marker-${++this.#markers}`;
    await this.#control.echo(marker);
    const deadline = Date.now() + 10_000;
    while (!this.#lines.some((line) => line.includes(marker))) {
      if (Date.now() > deadline) throw new Error('MONITOR did not report the marker');
      await new Promise<void>((resolve) => {
        this.#waiters.push(resolve);
        setTimeout(resolve, 50);
      });
    }
    const commands: string[][] = [];
    for (const line of this.#lines) {
      if (line.includes(marker)) break;
      const args = [...line.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => m[1] ?? '');
      if (args.length === 0) continue;
      args[0] = (args[0] ?? '').toUpperCase();
      commands.push(args);
    }
    return commands;
  }

  /** The keys of each MGET recorded since the last `clear()`, in order. */
  async mgets(): Promise<string[][]> {
    return (await this.commands()).filter((args) => args[0] === 'MGET').map((args) => args.slice(1));
  }

  async stop(): Promise<void> {
    this.#monitor.destroy();
    await this.#control.close();
  }
}

/** Uploads entities through the HTTP API and checks they were accepted. */
export async function uploadEntities(
  server: FastifyInstance,
  entityType: string,
  entities: Array<Record<string, unknown>>,
): Promise<void> {
  const res = await postJson(server, '/api/v1/entities/upload', { entity_type: entityType, entities });
  assert.equal(res.status, 200, `upload of ${entityType} answered ${JSON.stringify(res.body)}`);
}

/** Waits `ms` milliseconds (not a timed assertion: only lets time pass). */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
