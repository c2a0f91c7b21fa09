import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import { createClient } from 'redis';
import type { TSchema } from 'typebox';
import {
  defineApp,
  defineRankingPipeline,
  ProductEntity,
  type RankdApp,
  type RankingPipelineOptions,
  Type,
} from '../../src/index.js';
import { type NodeClient, RawRedis } from './raw-redis.js';
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

/**
 * An app named `name` with the starter's pipeline, `MyRankingPipeline` at `/api/v1/ranking`, over
 * {@link TemplateProduct}, scored by `model` (plus any other pipeline options).
 */
export function starterApp(
  name: string,
  options: Omit<RankingPipelineOptions<typeof TemplateProduct>, 'name' | 'path' | 'candidate'>,
): RankdApp {
  return defineApp({
    name,
    entities: [TemplateProduct],
    pipelines: [
      defineRankingPipeline({
        name: 'MyRankingPipeline',
        path: '/ranking',
        candidate: TemplateProduct,
        ...options,
      }),
    ],
  });
}

/** A plain client on the test Redis, for reading what rankd did (stats, keys, MONITOR). */
export async function rawClient(redis: TestRedis) {
  const client = createClient({ url: redis.url });
  await client.connect();
  return client;
}

type RawClient = Awaited<ReturnType<typeof rawClient>>;

/** The INFO and CONFIG commands {@link RedisStats} needs, as plain clients and node clients have them. */
type StatsClient = Pick<RawClient, 'configResetStat' | 'info'> | Pick<NodeClient, 'configResetStat' | 'info'>;

/**
 * Redis's own counters: `CONFIG RESETSTAT`, then the MGET calls and key look-ups since. On a
 * cluster ({@link RawRedis}) they are read from every master and summed.
 */
export class RedisStats {
  readonly #nodes: () => Promise<StatsClient[]>;

  constructor(client: RawClient | RawRedis) {
    this.#nodes = client instanceof RawRedis ? () => client.nodes() : async () => [client];
  }

  async reset(): Promise<void> {
    await Promise.all((await this.#nodes()).map((node) => node.configResetStat()));
  }

  /** Calls of `command` (lower case, e.g. `mget`) since the last reset. */
  async calls(command: string): Promise<number> {
    let calls = 0;
    for (const info of await this.#infos('commandstats')) {
      const match = new RegExp(`^cmdstat_${command}:calls=(\\d+)`, 'm').exec(info);
      calls += match ? Number(match[1]) : 0;
    }
    return calls;
  }

  /** Keys read that existed (hits) and that did not (misses) since the last reset. */
  async keyspace(): Promise<{ hits: number; misses: number }> {
    const total = { hits: 0, misses: 0 };
    for (const info of await this.#infos('stats')) {
      const hits = /^keyspace_hits:(\d+)/m.exec(info);
      const misses = /^keyspace_misses:(\d+)/m.exec(info);
      assert.ok(hits && misses, 'INFO stats has keyspace_hits and keyspace_misses');
      total.hits += Number(hits[1]);
      total.misses += Number(misses[1]);
    }
    return total;
  }

  async #infos(section: string): Promise<string[]> {
    return Promise.all((await this.#nodes()).map(async (node) => String(await node.info(section))));
  }
}

/** MONITOR of one Redis node: a monitoring connection, a control connection, the lines seen. */
interface MonitoredNode {
  readonly monitor: RawClient;
  readonly control: RawClient;
  lines: string[];
}

/**
 * Records every command Redis executes (MONITOR on a dedicated connection; on a cluster, on every
 * master). `commands()` waits until a marker sent after the work shows up, so every earlier
 * command has been seen.
 */
export class RedisMonitor {
  readonly #nodes: MonitoredNode[];
  #waiters: Array<() => void> = [];
  #markers = 0;

  private constructor(nodes: MonitoredNode[]) {
    this.#nodes = nodes;
  }

  static async start(redis: TestRedis): Promise<RedisMonitor> {
    let urls = [redis.url];
    if (redis.clusterNodes !== undefined) {
      const raw = await RawRedis.connect(redis);
      urls = (await raw.addresses()).map((address) => `redis://${address}`);
      await raw.close();
    }
    const nodes: MonitoredNode[] = [];
    for (const url of urls) {
      const monitor = createClient({ url });
      const control = createClient({ url });
      await Promise.all([monitor.connect(), control.connect()]);
      nodes.push({ monitor, control, lines: [] });
    }
    const recorder = new RedisMonitor(nodes);
    for (const node of nodes) {
      await node.monitor.monitor((line) => {
        node.lines.push(String(line));
        for (const wake of recorder.#waiters.splice(0)) wake();
      });
    }
    return recorder;
  }

  /** Forgets what was recorded so far. */
  clear(): void {
    for (const node of this.#nodes) node.lines = [];
  }

  /**
   * The commands recorded since the last `clear()`, each as its arguments (command name
   * upper-cased): on a cluster, node after node (the order between nodes means nothing).
   */
  async commands(): Promise<string[][]> {
    const marker = `rankd-test-marker-${++this.#markers}`;
    await Promise.all(this.#nodes.map((node) => node.control.echo(marker)));
    const deadline = Date.now() + 10_000;
    while (!this.#nodes.every((node) => node.lines.some((line) => line.includes(marker)))) {
      if (Date.now() > deadline) throw new Error('MONITOR did not report the marker');
      await new Promise<void>((resolve) => {
        this.#waiters.push(resolve);
        setTimeout(resolve, 50);
      });
    }
    const commands: string[][] = [];
    for (const node of this.#nodes) {
      for (const line of node.lines) {
        if (line.includes(marker)) break;
        const args = [...line.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => m[1] ?? '');
        if (args.length === 0) continue;
        args[0] = (args[0] ?? '').toUpperCase();
        commands.push(args);
      }
    }
    return commands;
  }

  /** The keys of each MGET recorded since the last `clear()`, in order (per node, on a cluster). */
  async mgets(): Promise<string[][]> {
    return (await this.commands()).filter((args) => args[0] === 'MGET').map((args) => args.slice(1));
  }

  async stop(): Promise<void> {
    for (const node of this.#nodes) {
      node.monitor.destroy();
      await node.control.close();
    }
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
