/** The one Redis connection of a process: the stores' operations, each passed to the file of its concern. */
import type { UnavailableNode } from '../errors/index.js';
import * as hashes from './hash-commands.js';
import * as probes from './health-probes.js';
import type { SplitKeys } from './keys.js';
import * as keyspace from './keyspace-commands.js';
import { type RedisConnectionOptions, RedisLink } from './link.js';
import type { MemoryReport } from './out-of-memory.js';
import type { ReadCache } from './read-cache.js';
import type { AvailableValues, StoredValue } from './slot-batches.js';
import * as streams from './stream-commands.js';
import * as strings from './string-commands.js';

export type { RedisConnectionOptions } from './link.js';
export type { AvailableValues, StoredValue } from './slot-batches.js';

/**
 * The one Redis connection of a rankd process, on a single Redis or on a Redis Cluster: connects
 * in the background, reconnects by itself forever, and turns every transport failure into a
 * {@link RedisUnavailableError} (HTTP 503). The methods are the few operations rankd's stores need.
 *
 * Batches (MGET, MSET, deletes) are split by hash slot: on a single Redis that is one group, so
 * each call is one command, atomic as before. On a cluster each slot gets its own command, all
 * sent in the same tick, so node-redis pipelines them and a batch costs one round trip per node.
 * A write whose groups partly fail throws a {@link RedisPartialWriteError} saying which items were
 * confirmed; the stores turn it into the ids of a `RANKD_PARTIAL_WRITE` answer.
 */
export class RedisConnection {
  /** `host:port` (or the cluster's seed nodes) as shown to users in error messages. */
  readonly address: string;
  /** Whether this is one Redis or a Redis Cluster (whose keys then carry hash tags). */
  readonly mode: 'single' | 'cluster';
  readonly #link: RedisLink;

  constructor(options: RedisConnectionOptions) {
    this.#link = new RedisLink(options);
    this.address = this.#link.address;
    this.mode = this.#link.mode;
  }

  /** Starts connecting (in the background: Redis being down at start-up is not fatal). */
  connect(): void {
    this.#link.connect();
  }

  /** The read cache (for its metrics); undefined when off. */
  get readCache(): ReadCache | undefined {
    return this.#link.cache;
  }

  /**
   * Resolves once every invalidation Redis sent before now has reached the read cache: a write
   * acknowledged before this call is then seen by every later read. At once when the cache is off.
   */
  syncInvalidations(): Promise<void> {
    return this.#link.syncInvalidations();
  }

  /** Whether commands can be sent now. */
  get isReady(): boolean {
    return this.#link.isReady;
  }

  /** Resolves true once connected, false if that takes longer than `timeoutMs`. */
  waitUntilReady(timeoutMs: number): Promise<boolean> {
    return this.#link.waitUntilReady(timeoutMs);
  }

  /** Round trip to Redis (to every master of a cluster); throws {@link RedisUnavailableError} when one does not answer. */
  ping(): Promise<void> {
    return probes.ping(this.#link);
  }

  /**
   * {@link ping} that accepts a partial answer from a Redis Cluster: resolves with the masters that
   * cannot serve (none on a single Redis: Redis down is thrown) while at least one master serves,
   * and throws a {@link RedisUnavailableError} when none does: none answers, or every one refuses
   * queries (`cluster_state:fail`, as during a failover's `CLUSTERDOWN`).
   */
  pingAvailable(): Promise<UnavailableNode[]> {
    return probes.pingAvailable(this.#link);
  }

  /**
   * Throws a {@link RedisOutOfMemoryError} when Redis (any master of a cluster) is past its
   * `maxmemory` with a policy that cannot evict, i.e. refuses writes now; `INFO memory` on each,
   * which costs Redis a few microseconds (for `/readyz`). A node whose INFO lacks the fields passes.
   */
  checkMemory(): Promise<void> {
    return probes.checkMemory(this.#link);
  }

  /**
   * Values of `keys`, in order, `null` where a key does not exist. One MGET per hash slot (one in
   * all on a single Redis); any failure fails the whole read (on a cluster, with a
   * {@link ClusterNodeUnavailableError} naming the nodes and their slots when only some failed).
   * Keys given as {@link SplitKeys} go through the read cache when it is on; `fromCache` (if given)
   * is then set true at the index of each value it served.
   */
  mget(keys: readonly string[] | SplitKeys, fromCache?: boolean[]): Promise<StoredValue[]> {
    return strings.mget(this.#link, keys, fromCache);
  }

  /**
   * {@link mget} that leaves out, rather than fails on, the keys of Redis Cluster masters that
   * cannot answer (an outage: offline, past the timeout, CLUSTERDOWN and the like), and says which.
   * Anything else still fails the read, and so does an outage of the whole cluster (no master
   * connected) or of a single Redis: there is nothing left to serve then.
   */
  mgetAvailable(keys: readonly string[] | SplitKeys, fromCache?: boolean[]): Promise<AvailableValues> {
    return strings.mgetAvailable(this.#link, keys, fromCache);
  }

  /**
   * Sets every pair with MSET: on a single Redis one atomic MSET (all or none); on a cluster one
   * per hash slot, each atomic. A later duplicate key wins.
   */
  mset(entries: ReadonlyArray<readonly [string, string | Buffer]>): Promise<void> {
    return strings.mset(this.#link, entries);
  }

  /**
   * Sets every entry atomically (per hash slot on a cluster): MSET when none expires, else a
   * MULTI/EXEC of SETs, those with an expiry time (ms since the epoch) using PXAT.
   */
  setMany(entries: ReadonlyArray<readonly [string, string | Buffer, number | undefined]>): Promise<void> {
    return strings.setMany(this.#link, entries);
  }

  /** HSETNX: sets a hash field unless it exists. */
  setFieldIfAbsent(key: string, field: string, value: string): Promise<void> {
    return hashes.setFieldIfAbsent(this.#link, key, field, value);
  }

  /** HGETALL as strings. */
  getAllFields(key: string): Promise<Record<string, string>> {
    return hashes.getAllFields(this.#link, key);
  }

  /** EVAL of a script on one key (so one node of a cluster), with `args`; its reply as Redis gives it. */
  evalOnKey(key: string, script: string, args: readonly string[]): Promise<unknown> {
    return keyspace.evalOnKey(this.#link, key, script, args);
  }

  /** HMGET as strings; null where a field is missing. */
  getFields(key: string, fields: readonly string[]): Promise<Array<string | null>> {
    return hashes.getFields(this.#link, key, fields);
  }

  /**
   * Deletes `keys` atomically (one MULTI/EXEC round trip; one per hash slot on a cluster) and
   * returns, per key, 1 if it existed and 0 if not. A key listed twice counts once.
   */
  deleteEach(keys: readonly string[]): Promise<number[]> {
    return strings.deleteEach(this.#link, keys);
  }

  /**
   * Appends entries to stream `key`, each given as its field/value pairs, and caps the stream at
   * about `maxLength` entries (`XADD key MAXLEN ~ n * field value ...`: Redis trims whole nodes
   * only, which is what makes the cap cheap, so the stream may hold a node's worth more). One
   * MULTI/EXEC: every entry is written or none, so a failure is counted exactly.
   */
  appendToStream(key: string, entries: ReadonlyArray<readonly string[]>, maxLength: number): Promise<void> {
    return streams.appendToStream(this.#link, key, entries, maxLength);
  }

  /**
   * Trims stream `key` (XTRIM): `MAXLEN` keeps about `threshold` entries, `MINID` drops entries
   * with an id below `threshold` (Redis ≥ 6.2), `~` so that only whole nodes go. Returns how many
   * entries were removed. Redis runs XTRIM even when out of memory, as it only frees memory.
   */
  trimStream(key: string, strategy: 'MAXLEN' | 'MINID', threshold: string): Promise<number> {
    return streams.trimStream(this.#link, key, strategy, threshold);
  }

  /**
   * Bytes stream `key` takes (`MEMORY USAGE ... SAMPLES 100`: Redis sums 100 of its nodes and
   * extrapolates, a bounded cost whatever the stream's length; the default 5 missed the rare large
   * entries, e.g. sampled FEATURE events, by 20%) and its entries (`XLEN`), read together; 0 and 0
   * when it does not exist. With them, `INFO memory` of the node holding it (its `maxmemory` and
   * what it uses), undefined when the reply lacks the fields.
   */
  streamSize(key: string): Promise<{ bytes: number; entries: number; memory: MemoryReport | undefined }> {
    return streams.streamSize(this.#link, key);
  }

  /**
   * Up to `count` entries of stream `key` with ids from `start` to `end` (XRANGE: `-` and `+` are
   * the ends, `(id` excludes an id), each with its fields as strings.
   */
  readStream(
    key: string,
    start: string,
    end: string,
    count: number,
  ): Promise<Array<{ id: string; fields: Record<string, string> }>> {
    return streams.readStream(this.#link, key, start, end, count);
  }

  /**
   * Deletes every key matching `pattern` (SCAN + UNLINK, on every master of a cluster). For tests
   * and admin tools, not the request path.
   */
  deleteMatching(pattern: string): Promise<number> {
    return keyspace.deleteMatching(this.#link, pattern);
  }

  /**
   * Up to `limit` keys matching `pattern`: what at most 10 SCAN steps find on each node (every
   * master of a cluster), each step within the deadline. A sample, not a listing: its cost does
   * not grow with the keyspace. The first step reads about 100 keys (enough when most keys match),
   * each next one four times as many up to 2000 (a pattern few keys match is still found).
   */
  sampleKeys(pattern: string, limit: number): Promise<string[]> {
    return keyspace.sampleKeys(this.#link, pattern, limit);
  }

  /**
   * Whether some key matches `pattern` (SCAN, master after master of a cluster, stopping at the
   * first match): true, false, or undefined when `maxScanned` keys were looked at without a match
   * and without reaching the end. For a background check (an empty index), not the request path.
   */
  hasKeyMatching(pattern: string, maxScanned = 100_000): Promise<boolean | undefined> {
    return keyspace.hasKeyMatching(this.#link, pattern, maxScanned);
  }

  /** Closes the connection; pending commands finish first. */
  close(): Promise<void> {
    return this.#link.close();
  }
}
