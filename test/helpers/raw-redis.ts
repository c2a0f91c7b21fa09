import { createClient, createCluster, RESP_TYPES } from 'redis';
import { RedisKeys } from '../../src/redis/keys.js';
import { TEST_REDIS_MODE, type TestRedis } from './redis-server.js';

/**
 * The keys rankd uses with the test configuration (project `default`, index version 1) on the
 * kind of Redis the tests run against ({@link TEST_REDIS_MODE}): usable before any Redis starts.
 */
export const TEST_KEYS = new RedisKeys('default', '1', TEST_REDIS_MODE);

/** A plain node-redis client on one Redis (or one cluster node), bulk strings as Buffers. */
export type NodeClient = ReturnType<typeof bufferClient>;

function bufferClient(url: string) {
  return createClient({ url }).withTypeMapping({ [RESP_TYPES.BLOB_STRING]: Buffer });
}

type Cluster = ReturnType<typeof bufferCluster>;

function bufferCluster(nodes: string) {
  return createCluster({
    rootNodes: nodes.split(',').map((node) => ({ url: `redis://${node}` })),
  }).withTypeMapping({ [RESP_TYPES.BLOB_STRING]: Buffer });
}

/**
 * A client for checking what rankd did, on a single test Redis or a test cluster alike: key reads
 * go to the node holding the key, and whole-database questions (DBSIZE) are asked of every
 * master and summed. {@link nodes} gives plain clients on every master for the rest (INFO, ...).
 */
export class RawRedis {
  /** The keys rankd uses on this Redis: the single-node layout, or the cluster's hash-tagged one. */
  readonly keys: RedisKeys;
  readonly #single: NodeClient | undefined;
  readonly #cluster: Cluster | undefined;
  readonly #redis: TestRedis;
  /** Whichever of the two is in use, for commands on one key (both route those the same way). */
  readonly #keyed: Pick<NodeClient, 'get' | 'exists' | 'pTTL'>;

  private constructor(redis: TestRedis) {
    this.#redis = redis;
    this.keys = new RedisKeys('default', '1', redis.clusterNodes === undefined ? 'single' : 'cluster');
    // Tests kill Redis on purpose: an error event must not crash the test process.
    if (redis.clusterNodes === undefined) {
      this.#keyed = this.#single = bufferClient(redis.url);
      this.#single.on('error', () => undefined);
    } else {
      this.#keyed = this.#cluster = bufferCluster(redis.clusterNodes);
      this.#cluster.on('error', () => undefined);
    }
  }

  /** Connects to `redis` (every master of a cluster). */
  static async connect(redis: TestRedis): Promise<RawRedis> {
    const raw = new RawRedis(redis);
    if (raw.#single) await raw.#single.connect();
    else await raw.#cluster?.connect();
    return raw;
  }

  /** The value at `key` as UTF-8 text, or null. */
  async get(key: string): Promise<string | null> {
    return (await this.getBytes(key))?.toString('utf8') ?? null;
  }

  /** The value at `key` as stored, or null. */
  async getBytes(key: string): Promise<Buffer | null> {
    return this.#keyed.get(key);
  }

  /** How many of `keys` exist (a key listed twice counts twice, as EXISTS does). */
  async exists(keys: string | readonly string[]): Promise<number> {
    const list = typeof keys === 'string' ? [keys] : keys;
    // One EXISTS per key: on a cluster the keys of one call may live on different nodes.
    const counts = await Promise.all(list.map((key) => this.#keyed.exists(key)));
    return counts.reduce((sum, n) => sum + n, 0);
  }

  /** Milliseconds `key` has left to live (-1: no expiry, -2: no such key). */
  async pTTL(key: string): Promise<number> {
    return this.#keyed.pTTL(key);
  }

  /** Keys in the database (of every master, summed). */
  async dbSize(): Promise<number> {
    const sizes = await Promise.all((await this.nodes()).map((node) => node.dbSize()));
    return sizes.reduce((sum, n) => sum + n, 0);
  }

  /** A plain client on each node that serves keys: the Redis itself, or every master. */
  async nodes(): Promise<NodeClient[]> {
    if (this.#single) return [this.#single];
    const cluster = this.#cluster as Cluster;
    return Promise.all(cluster.masters.map((master) => cluster.nodeClient(master) as Promise<NodeClient>));
  }

  /** A plain client on the node that serves `key` (its master). */
  async nodeForKey(key: string): Promise<NodeClient> {
    if (this.#single) return this.#single;
    return (this.#cluster as Cluster).getNodeClientForKey(key) as Promise<NodeClient>;
  }

  /** `host:port` of each node that serves keys. */
  async addresses(): Promise<string[]> {
    if (this.#single) return [`127.0.0.1:${this.#redis.port}`];
    return (this.#cluster as Cluster).masters.map((m) => `${m.host}:${m.port}`);
  }

  async close(): Promise<void> {
    if (this.#single) await this.#single.close();
    else await this.#cluster?.close();
  }
}
