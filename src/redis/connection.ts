import {
  ClusterDownError,
  ClusterNodeUnavailableError,
  RankdError,
  RedisOutOfMemoryError,
  RedisUnavailableError,
  type UnavailableNode,
} from '../errors/index.js';
import { type BatchGroup, groupKeys, RedisPartialWriteError } from './batches.js';
import { ownersOf, type SlotMap, type SlotOwner } from './cluster-slot-map.js';
import { ClusterTransport } from './cluster-transport.js';
import { Deadlines } from './deadlines.js';
import { hashSlot } from './hash-slot.js';
import { InvalidationTracker } from './invalidation-tracker.js';
import { joinKeys, type SplitKeys } from './keys.js';
import { isRedisOutage, type RedisObserver, redisErrorKind } from './observer.js';
import { isOutOfMemoryReply, type MemoryReport, parseMemoryInfo, refusesWrites } from './out-of-memory.js';
import {
  type NodeOutage,
  type OutageCause,
  outageCause,
  refusesWholeCluster,
  type UnreadKeys,
} from './outages.js';
import { ReadCache } from './read-cache.js';
import {
  type RedisCommand,
  type RedisTransport,
  SingleNodeTransport,
  type TransportEvent,
} from './transport.js';

/** How to reach Redis and how long to wait for it. */
export interface RedisConnectionOptions {
  /** `redis://host:port` (or `rediss://`). Not used when `clusterNodes` is given. */
  url: string;
  /** `host:port` of some nodes of a Redis Cluster (`REDIS_CLUSTER_NODES`): cluster mode when not empty. */
  clusterNodes?: readonly string[] | undefined;
  /** Longest wait for one connection attempt, in ms. */
  connectTimeoutMs: number;
  /** Longest wait for one command, in ms; past it the caller gets a {@link RedisUnavailableError}. */
  commandTimeoutMs: number;
  /**
   * Told about connection trouble, once per outage rather than once per retry. On a single Redis
   * `detail` is its address (and the error, when lost); on a Redis Cluster it is a whole sentence
   * naming the node and its slots, what it means and what to check (and, when a node is back,
   * which node serves its slots now).
   */
  onStateChange?: (event: 'ready' | 'lost', detail: string) => void;
  /** Told how long each command took and how it failed (the server's metrics). */
  observer?: RedisObserver | undefined;
  /**
   * A cache of MGET reads kept exact by Redis's invalidations (`READ_CACHE_MB`, DR-020): its size
   * in bytes and the key prefixes every MGET reads under. Absent or 0 bytes: every read goes to Redis.
   */
  readCache?: { readonly capacityBytes: number; readonly prefixes: readonly string[] } | undefined;
}

/** Value as stored: Redis bulk strings come back as Buffers so that binary (LZ4) values survive. */
export type StoredValue = Buffer | null;

/** The values of a read that may leave out the keys of cluster nodes that cannot answer. */
export interface AvailableValues {
  /** In the keys' order; `null` where a key does not exist or was not read. */
  readonly values: StoredValue[];
  /** The keys not read and the nodes that did not serve them; undefined when every key was read. */
  readonly unread: UnreadKeys | undefined;
}

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
  readonly #transport: RedisTransport;
  /** The same transport when it is a cluster's: it names the node behind a failed slot. */
  readonly #cluster: ClusterTransport | undefined;
  readonly #options: RedisConnectionOptions;
  readonly #deadlines: Deadlines;
  /** The read cache and what keeps it exact; undefined when off. */
  readonly #cache: ReadCache | undefined;
  readonly #tracker: InvalidationTracker | undefined;
  /** The cluster slot map whose masters the tracker follows. */
  #trackedMap: SlotMap | undefined;
  #connecting: Promise<unknown> | undefined;
  #state: TransportEvent | undefined;

  constructor(options: RedisConnectionOptions) {
    this.#options = options;
    const transportOptions = {
      connectTimeoutMs: options.connectTimeoutMs,
      commandTimeoutMs: options.commandTimeoutMs,
      onEvent: (event: TransportEvent, detail: string) => this.#onEvent(event, detail),
    };
    const nodes = options.clusterNodes ?? [];
    this.mode = nodes.length > 0 ? 'cluster' : 'single';
    this.#cluster = nodes.length > 0 ? new ClusterTransport(nodes, transportOptions) : undefined;
    this.#transport = this.#cluster ?? new SingleNodeTransport(options.url, transportOptions);
    this.address = this.#transport.address;
    this.#deadlines = new Deadlines(options.commandTimeoutMs);
    const cache = options.readCache;
    if (cache !== undefined && cache.capacityBytes > 0) {
      this.#cache = new ReadCache(cache.capacityBytes, cache.prefixes);
      this.#tracker = new InvalidationTracker(this.#cache, options.connectTimeoutMs);
    }
  }

  /** Starts connecting (in the background: Redis being down at start-up is not fatal). */
  connect(): void {
    if (this.#connecting !== undefined) return;
    // A single Redis's invalidations come from its own address; a cluster's masters are known once
    // its slot map is (#followMasters, again after each change of the map).
    if (this.mode === 'single') this.#tracker?.track([{ url: this.#options.url }]);
    this.#connecting = this.#transport
      .connect()
      .then(() => this.#cluster !== undefined && this.#followMasters(this.#cluster.slotMap))
      .catch(() => undefined);
  }

  /** The read cache (for its metrics); undefined when off. */
  get readCache(): ReadCache | undefined {
    return this.#cache;
  }

  /**
   * Resolves once every invalidation Redis sent before now has reached the read cache: a write
   * acknowledged before this call is then seen by every later read. At once when the cache is off.
   */
  async syncInvalidations(): Promise<void> {
    if (this.#cluster !== undefined && this.#cache !== undefined) this.#followMasters(this.#cluster.slotMap);
    await this.#tracker?.sync();
  }

  /** Whether commands can be sent now. */
  get isReady(): boolean {
    return this.#transport.isReady;
  }

  /** Resolves true once connected, false if that takes longer than `timeoutMs`. */
  async waitUntilReady(timeoutMs: number): Promise<boolean> {
    this.connect();
    const deadline = Date.now() + timeoutMs;
    while (!this.#transport.isReady) {
      if (Date.now() >= deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return true;
  }

  /** Round trip to Redis (to every master of a cluster); throws {@link RedisUnavailableError} when one does not answer. */
  async ping(): Promise<void> {
    await this.#run(() => this.#transport.pingAll(), 'ping');
  }

  /**
   * {@link ping} that accepts a partial answer from a Redis Cluster: resolves with the masters that
   * cannot serve (none on a single Redis: Redis down is thrown) while at least one master serves,
   * and throws a {@link RedisUnavailableError} when none does: none answers, or every one refuses
   * queries (`cluster_state:fail`, as during a failover's `CLUSTERDOWN`).
   */
  async pingAvailable(): Promise<UnavailableNode[]> {
    const cluster = this.#cluster;
    if (cluster === undefined) {
      await this.ping();
      return [];
    }
    // No deadline around the whole: each master's probe has its own, inside.
    const { masters, failed } = await this.#run(
      () => cluster.probeEach((probe) => this.#deadlines.within(probe)),
      'ping',
      false,
    );
    if (failed.length === 0) return [];
    const outages = failed.filter(({ error }) => outageCause(error) !== undefined);
    // Every master down, or a failure that is no outage: reported as a plain ping would report it.
    if (outages.length < failed.length || !cluster.hasConnectedMaster())
      await this.#run(() => Promise.reject((failed[0] as (typeof failed)[number]).error), 'ping');
    if (failed.length >= masters) {
      const reasons = failed.every(({ error }) => refusesWholeCluster(error))
        ? 'every master refuses queries (CLUSTERDOWN: cluster_state:fail on each)'
        : `no master serves (${failed.map(({ owner, error }) => `${owner.address}: ${messageOf(error)}`).join('; ')})`;
      throw new ClusterDownError(this.address, reasons, cluster.advice);
    }
    return outages.map(({ owner, error }) => ({
      node: owner.address,
      slots: owner.slots,
      reason: error instanceof Error ? error.message : String(error),
    }));
  }

  /**
   * Throws a {@link RedisOutOfMemoryError} when Redis (any master of a cluster) is past its
   * `maxmemory` with a policy that cannot evict, i.e. refuses writes now; `INFO memory` on each,
   * which costs Redis a few microseconds (for `/readyz`). A node whose INFO lacks the fields passes.
   */
  async checkMemory(): Promise<void> {
    const full = await this.#run(async () => {
      let refusing = false;
      await this.#transport.forEachNode(async (send) => {
        const report = parseMemoryInfo(String(await send(['INFO', 'memory'])));
        if (report !== undefined && refusesWrites(report)) refusing = true;
      });
      return refusing;
    }, 'info');
    if (full)
      throw new RedisOutOfMemoryError(new Error("used memory > 'maxmemory' and the policy cannot evict"));
  }

  /**
   * Values of `keys`, in order, `null` where a key does not exist. One MGET per hash slot (one in
   * all on a single Redis); any failure fails the whole read (on a cluster, with a
   * {@link ClusterNodeUnavailableError} naming the nodes and their slots when only some failed).
   * Keys given as {@link SplitKeys} go through the read cache when it is on; `fromCache` (if given)
   * is then set true at the index of each value it served.
   */
  async mget(keys: readonly string[] | SplitKeys, fromCache?: boolean[]): Promise<StoredValue[]> {
    if (this.#cache !== undefined && !isWhole(keys))
      return (await this.#cachedRead(this.#cache, keys, false, fromCache)).values;
    const whole = isWhole(keys) ? keys : joinKeys(keys);
    if (whole.length === 0) return [];
    // A single Redis takes the whole read as one MGET and answers in the keys' own order: its reply
    // is the result, with no groups to make nor places to map back.
    if (this.mode === 'single') {
      const send = () => this.#transport.send(whole[0] as string, true, ['MGET', ...whole]);
      return (await this.#run(send, 'mget')) as StoredValue[];
    }
    return (await this.#readGroups(whole, false)).values;
  }

  /**
   * {@link mget} that leaves out, rather than fails on, the keys of Redis Cluster masters that
   * cannot answer (an outage: offline, past the timeout, CLUSTERDOWN and the like), and says which.
   * Anything else still fails the read, and so does an outage of the whole cluster (no master
   * connected) or of a single Redis: there is nothing left to serve then.
   */
  async mgetAvailable(keys: readonly string[] | SplitKeys, fromCache?: boolean[]): Promise<AvailableValues> {
    if (this.mode === 'single') return { values: await this.mget(keys, fromCache), unread: undefined };
    if (this.#cache !== undefined && !isWhole(keys))
      return this.#cachedRead(this.#cache, keys, true, fromCache);
    const whole = isWhole(keys) ? keys : joinKeys(keys);
    if (whole.length === 0) return { values: [], unread: undefined };
    return this.#readGroups(whole, true);
  }

  /**
   * An MGET through the read cache (DR-020): the keys it holds are served from it, the others read
   * as the plain path reads them, in one MGET (per slot on a cluster), and offered to it.
   * `fromCache` (an explanation's): set true at the index of each value served from the cache.
   */
  async #cachedRead(
    cache: ReadCache,
    keys: SplitKeys,
    leaveOut: boolean,
    fromCache: boolean[] | undefined,
  ): Promise<AvailableValues> {
    const { spaces, rests } = keys;
    if (rests.length === 0) return { values: [], unread: undefined };
    const cluster = this.#cluster;
    if (cluster !== undefined && cluster.slotMap !== this.#trackedMap) this.#followMasters(cluster.slotMap);
    const now = Date.now();
    let missingAt: number[] | undefined;
    let values: StoredValue[] = [];
    if (cache.enabled) {
      values = new Array<StoredValue>(rests.length);
      for (let i = 0; i < rests.length; i++) {
        const value = cache.get(spaces[i] as string, rests[i] as string, now);
        if (value !== undefined) {
          values[i] = value;
          if (fromCache !== undefined) fromCache[i] = true;
        } else if (missingAt === undefined) missingAt = [i];
        else missingAt.push(i);
      }
      const misses = missingAt?.length ?? 0;
      cache.stats.hits += rests.length - misses;
      cache.stats.misses += misses;
      if (missingAt === undefined) return { values, unread: undefined };
    }
    const at = missingAt;
    const toRead =
      at === undefined ? joinKeys(keys) : at.map((i) => (spaces[i] as string) + (rests[i] as string));
    const ticket = cache.begin();
    const read =
      this.mode === 'single'
        ? {
            values: (await this.#run(
              () => this.#transport.send(toRead[0], true, ['MGET', ...toRead]),
              'mget',
            )) as StoredValue[],
            unread: undefined,
          }
        : await this.#readGroups(toRead, leaveOut);
    const invalidated = cache.invalidatedSince(ticket);
    for (let j = 0; j < toRead.length; j++) {
      const value = read.values[j] ?? null;
      const i = at === undefined ? j : (at[j] as number);
      if (value !== null)
        cache.offer(spaces[i] as string, rests[i] as string, value, ticket, invalidated, now);
    }
    if (at === undefined) return read;
    for (let j = 0; j < at.length; j++) values[at[j] as number] = read.values[j] ?? null;
    const unread = read.unread;
    if (unread === undefined) return { values, unread: undefined };
    return { values, unread: { ...unread, indexes: unread.indexes.map((j) => at[j] as number) } };
  }

  /** Has the tracker follow the masters of `map` (a cluster's, after a change): DR-020. */
  #followMasters(map: SlotMap): void {
    const tracker = this.#tracker;
    if (tracker === undefined || map === this.#trackedMap || !(this.#cluster as ClusterTransport).isReady)
      return;
    const masters = [...ownersOf(map).keys()];
    if (masters.length === 0) return;
    this.#trackedMap = map;
    tracker.track(
      masters.map((address) => {
        const at = address.lastIndexOf(':');
        return {
          host: address.slice(0, at).replace(/^\[(.*)\]$/, '$1'),
          port: Number(address.slice(at + 1)),
        };
      }),
    );
  }

  /** Drops `keys` from the read cache before a write of this process: its own reads see its writes. */
  #invalidateLocally(keys: Iterable<string>): void {
    const cache = this.#cache;
    if (cache !== undefined) for (const key of keys) cache.invalidate(key);
  }

  /**
   * Sets every pair with MSET: on a single Redis one atomic MSET (all or none); on a cluster one
   * per hash slot, each atomic. A later duplicate key wins.
   */
  async mset(entries: ReadonlyArray<readonly [string, string | Buffer]>): Promise<void> {
    if (entries.length === 0) return;
    if (this.#cache !== undefined) this.#invalidateLocally(entries.map(([key]) => key));
    if (this.mode === 'single') {
      // One group, so one command built in one pass: an upload's MSET has thousands of arguments,
      // and every intermediate array of them is garbage to collect.
      const command = new Array<string | Buffer>(1 + 2 * entries.length);
      command[0] = 'MSET';
      for (let i = 0; i < entries.length; i++) {
        const [key, value] = entries[i] as readonly [string, string | Buffer];
        command[1 + 2 * i] = key;
        command[2 + 2 * i] = value;
      }
      await this.#run(() => this.#transport.send(entries[0]?.[0], false, command), 'mset');
      return;
    }
    await this.#writeGroups(
      entries.map(([key]) => key),
      (group) => this.#transport.send(group.keys[0], false, ['MSET', ...flatPairs(entries, group)]),
      'mset',
    );
  }

  /**
   * Sets every entry atomically (per hash slot on a cluster): MSET when none expires, else a
   * MULTI/EXEC of SETs, those with an expiry time (ms since the epoch) using PXAT.
   */
  async setMany(
    entries: ReadonlyArray<readonly [string, string | Buffer, number | undefined]>,
  ): Promise<void> {
    if (entries.length === 0) return;
    if (entries.every(([, , expiresAt]) => expiresAt === undefined)) {
      await this.mset(entries.map(([key, value]) => [key, value] as const));
      return;
    }
    if (this.#cache !== undefined) this.#invalidateLocally(entries.map(([key]) => key));
    await this.#writeGroups(
      entries.map(([key]) => key),
      (group) =>
        this.#transport.transaction(
          group.keys[0] as string,
          group.indexes.map((index) => {
            const [key, value, expiresAt] = entries[index] as (typeof entries)[number];
            return expiresAt === undefined
              ? ['SET', key, value]
              : ['SET', key, value, 'PXAT', String(Math.ceil(expiresAt))];
          }),
        ),
      'multi_set',
    );
  }

  /** HSETNX: sets a hash field unless it exists. */
  async setFieldIfAbsent(key: string, field: string, value: string): Promise<void> {
    await this.#run(
      () => this.#transport.send(key, false, ['HSETNX', key, field, value]),
      'hsetnx',
      true,
      key,
    );
  }

  /** HGETALL as strings. */
  async getAllFields(key: string): Promise<Record<string, string>> {
    const reply = (await this.#run(
      () => this.#transport.send(key, true, ['HGETALL', key]),
      'hgetall',
      true,
      key,
    )) as Array<Buffer> | Record<string, Buffer> | Map<Buffer, Buffer>;
    const out: Record<string, string> = Object.create(null);
    const pairs: Array<[unknown, unknown]> = Array.isArray(reply)
      ? reply.flatMap((v, i) => (i % 2 === 0 ? [[v, reply[i + 1]] as [unknown, unknown]] : []))
      : reply instanceof Map
        ? [...reply.entries()]
        : Object.entries(reply);
    for (const [field, value] of pairs) out[String(field)] = String(value);
    return out;
  }

  /** EVAL of a script on one key (so one node of a cluster), with `args`; its reply as Redis gives it. */
  async evalOnKey(key: string, script: string, args: readonly string[]): Promise<unknown> {
    return this.#run(
      () => this.#transport.send(key, false, ['EVAL', script, '1', key, ...args]),
      'eval',
      true,
      key,
    );
  }

  /** HMGET as strings; null where a field is missing. */
  async getFields(key: string, fields: readonly string[]): Promise<Array<string | null>> {
    const values = (await this.#run(
      () => this.#transport.send(key, true, ['HMGET', key, ...fields]),
      'hmget',
      true,
      key,
    )) as Array<Buffer | null>;
    return values.map((v) => (v === null ? null : v.toString('utf8')));
  }

  /**
   * Deletes `keys` atomically (one MULTI/EXEC round trip; one per hash slot on a cluster) and
   * returns, per key, 1 if it existed and 0 if not. A key listed twice counts once.
   */
  async deleteEach(keys: readonly string[]): Promise<number[]> {
    if (keys.length === 0) return [];
    this.#invalidateLocally(keys);
    const existed = new Array<number>(keys.length).fill(0);
    await this.#writeGroups(
      keys,
      async (group) => {
        const replies = await this.#transport.transaction(
          group.keys[0] as string,
          group.keys.map((key) => ['DEL', key]),
        );
        group.indexes.forEach((index, i) => {
          existed[index] = Number(replies[i]);
        });
      },
      'multi_del',
    );
    return existed;
  }

  /**
   * Appends entries to stream `key`, each given as its field/value pairs, and caps the stream at
   * about `maxLength` entries (`XADD key MAXLEN ~ n * field value ...`: Redis trims whole nodes
   * only, which is what makes the cap cheap, so the stream may hold a node's worth more). One
   * MULTI/EXEC: every entry is written or none, so a failure is counted exactly.
   */
  async appendToStream(
    key: string,
    entries: ReadonlyArray<readonly string[]>,
    maxLength: number,
  ): Promise<void> {
    if (entries.length === 0) return;
    const cap = String(maxLength);
    await this.#run(
      () =>
        this.#transport.transaction(
          key,
          entries.map((fields) => ['XADD', key, 'MAXLEN', '~', cap, '*', ...fields]),
        ),
      'multi_xadd',
      true,
      key,
    );
  }

  /**
   * Trims stream `key` (XTRIM): `MAXLEN` keeps about `threshold` entries, `MINID` drops entries
   * with an id below `threshold` (Redis ≥ 6.2), `~` so that only whole nodes go. Returns how many
   * entries were removed. Redis runs XTRIM even when out of memory, as it only frees memory.
   */
  async trimStream(key: string, strategy: 'MAXLEN' | 'MINID', threshold: string): Promise<number> {
    return Number(
      await this.#run(
        () => this.#transport.send(key, false, ['XTRIM', key, strategy, '~', threshold]),
        'xtrim',
        true,
        key,
      ),
    );
  }

  /**
   * Bytes stream `key` takes (`MEMORY USAGE ... SAMPLES 100`: Redis sums 100 of its nodes and
   * extrapolates, a bounded cost whatever the stream's length; the default 5 missed the rare large
   * entries, e.g. sampled FEATURE events, by 20%) and its entries (`XLEN`), read together; 0 and 0
   * when it does not exist. With them, `INFO memory` of the node holding it (its `maxmemory` and
   * what it uses), undefined when the reply lacks the fields.
   */
  async streamSize(
    key: string,
  ): Promise<{ bytes: number; entries: number; memory: MemoryReport | undefined }> {
    const [bytes, entries, info] = await this.#run(
      () =>
        Promise.all([
          this.#transport.send(key, true, ['MEMORY', 'USAGE', key, 'SAMPLES', '100']),
          this.#transport.send(key, true, ['XLEN', key]),
          this.#transport.sendToNodeOf(key, ['INFO', 'memory']),
        ]),
      'memory_usage',
      true,
      key,
    );
    return {
      bytes: Number(bytes ?? 0),
      entries: Number(entries ?? 0),
      memory: parseMemoryInfo(String(info)),
    };
  }

  /**
   * Up to `count` entries of stream `key` with ids from `start` to `end` (XRANGE: `-` and `+` are
   * the ends, `(id` excludes an id), each with its fields as strings.
   */
  async readStream(
    key: string,
    start: string,
    end: string,
    count: number,
  ): Promise<Array<{ id: string; fields: Record<string, string> }>> {
    const reply = (await this.#run(
      () => this.#transport.send(key, true, ['XRANGE', key, start, end, 'COUNT', String(count)]),
      'xrange',
      true,
      key,
    )) as Array<[Buffer | string, Array<Buffer | string>]> | null;
    return (reply ?? []).map(([id, flat]) => {
      // Field names are whatever the entry's writer chose: none may reach Object.prototype.
      const fields: Record<string, string> = Object.create(null);
      for (let i = 0; i + 1 < flat.length; i += 2) fields[String(flat[i])] = String(flat[i + 1]);
      return { id: String(id), fields };
    });
  }

  /**
   * Deletes every key matching `pattern` (SCAN + UNLINK, on every master of a cluster). For tests
   * and admin tools, not the request path.
   */
  async deleteMatching(pattern: string): Promise<number> {
    return this.#run(
      async () => {
        let removed = 0;
        await this.#transport.forEachNode(async (send) => {
          let cursor = '0';
          do {
            // Each command within the deadline, the whole walk without one.
            const [next, batch] = (await this.#deadlines.within(
              send(['SCAN', cursor, 'MATCH', pattern, 'COUNT', '1000']),
            )) as [unknown, unknown[]];
            cursor = String(next);
            // UNLINK of several keys must stay inside one slot on a cluster.
            for (const group of this.#groups(batch.map(String)))
              removed += Number(await this.#deadlines.within(send(['UNLINK', ...group.keys])));
          } while (cursor !== '0');
        });
        return removed;
      },
      'scan_unlink',
      false,
    );
  }

  /**
   * Up to `limit` keys matching `pattern`: what at most 10 SCAN steps find on each node (every
   * master of a cluster), each step within the deadline. A sample, not a listing: its cost does
   * not grow with the keyspace. The first step reads about 100 keys (enough when most keys match),
   * each next one four times as many up to 2000 (a pattern few keys match is still found).
   */
  async sampleKeys(pattern: string, limit: number): Promise<string[]> {
    const found: string[] = [];
    await this.#scanNodes(
      pattern,
      (step) => (step < 10 ? Math.min(100 * 4 ** step, 2000) : undefined),
      (keys) => {
        for (const key of keys.slice(0, limit - found.length)) found.push(String(key));
        return found.length >= limit;
      },
    );
    return found;
  }

  /**
   * Whether some key matches `pattern` (SCAN, master after master of a cluster, stopping at the
   * first match): true, false, or undefined when `maxScanned` keys were looked at without a match
   * and without reaching the end. For a background check (an empty index), not the request path.
   */
  async hasKeyMatching(pattern: string, maxScanned = 100_000): Promise<boolean | undefined> {
    let scanned = 0;
    let found = false;
    const complete = await this.#scanNodes(
      pattern,
      () => (scanned < maxScanned ? 1000 : undefined),
      (keys) => {
        scanned += 1000;
        found = keys.length > 0;
        return found;
      },
    );
    return found ? true : complete ? false : undefined;
  }

  /**
   * SCANs for `pattern` node after node (every master of a cluster), each step within the deadline
   * and the whole without one: `count(step)` is a step's COUNT, undefined to leave the node there;
   * `take(keys)` gets each step's keys and returns true to end the whole scan. Resolves with whether
   * it ended so, or read every node to its end.
   */
  async #scanNodes(
    pattern: string,
    count: (step: number) => number | undefined,
    take: (keys: unknown[]) => boolean,
  ): Promise<boolean> {
    return this.#run(
      async () => {
        let done = false;
        let complete = true;
        await this.#transport.forEachNode(async (send) => {
          let cursor = '0';
          for (let step = 0; !done; step++) {
            const size = count(step);
            if (size === undefined) {
              complete = false;
              return;
            }
            const [next, batch] = (await this.#deadlines.within(
              send(['SCAN', cursor, 'MATCH', pattern, 'COUNT', String(size)]),
            )) as [unknown, unknown[]];
            done = take(batch);
            cursor = String(next);
            if (cursor === '0') return;
          }
        });
        return done || complete;
      },
      'scan',
      false,
    );
  }

  /** Closes the connection; pending commands finish first. */
  async close(): Promise<void> {
    await Promise.all([this.#transport.close(), this.#tracker?.close()]);
  }

  #groups(keys: readonly string[]): BatchGroup[] {
    // A single Redis takes the whole batch in one command: no slot to compute, nothing to split.
    if (this.mode === 'single') return keys.length === 0 ? [] : [{ indexes: keys.map((_key, i) => i), keys }];
    return groupKeys(keys, (key) => this.#transport.groupOf(key));
  }

  /**
   * Runs `write` once per hash-slot group of `keys`, all groups at once. One group (always, on a
   * single Redis) fails as a whole. With several, a failure of some but not all throws a
   * {@link RedisPartialWriteError} saying, per key, whether its write was confirmed, and naming the
   * cluster nodes that failed.
   */
  async #writeGroups(
    keys: readonly string[],
    write: (group: BatchGroup) => Promise<unknown>,
    command: string,
  ): Promise<void> {
    const groups = this.#groups(keys);
    const outcomes = await Promise.allSettled(
      groups.map((group) => this.#run(() => write(group), command, true, group.keys[0])),
    );
    const failure = outcomes.find((outcome) => outcome.status === 'rejected');
    if (failure === undefined) return;
    const failedNodes = new Map<string, UnavailableNode>();
    for (const outcome of outcomes) {
      if (outcome.status === 'rejected' && outcome.reason instanceof ClusterNodeUnavailableError)
        for (const node of outcome.reason.nodes) failedNodes.set(node.node, node);
    }
    if (outcomes.every((outcome) => outcome.status === 'rejected')) {
      // Several nodes failed the whole write: one error naming them all, not the first one only.
      if (failedNodes.size > 1 && outcomes.every((o) => o.reason instanceof ClusterNodeUnavailableError))
        throw new ClusterNodeUnavailableError(
          this.address,
          [...failedNodes.values()],
          failure.reason.cause,
          this.#cluster?.advice,
        );
      throw failure.reason;
    }
    const applied = new Array<boolean>(keys.length).fill(false);
    outcomes.forEach((outcome, g) => {
      if (outcome.status === 'fulfilled')
        for (const index of (groups[g] as BatchGroup).indexes) applied[index] = true;
    });
    const reason = failure.reason as RedisUnavailableError;
    throw new RedisPartialWriteError(
      this.address,
      applied,
      reason.cause ?? reason,
      [...failedNodes.values()],
      this.#cluster?.advice,
    );
  }

  /**
   * A cluster read: one MGET per hash-slot group, all sent in the same tick (node-redis pipelines
   * those of one node), under one deadline. Unlike `Promise.all`, one failed group does not end the
   * read: every group's answer is kept, so a read can say exactly which keys it could not read.
   * Failed groups are then either thrown ({@link mget}) or left out ({@link mgetAvailable}).
   */
  async #readGroups(keys: readonly string[], leaveOut: boolean): Promise<AvailableValues> {
    this.connect();
    const observer = this.#options.observer;
    const start = observer === undefined ? 0 : performance.now();
    // The map the groups are routed by: a failure is the node's it was sent to, whatever happens next.
    const map = (this.#cluster as ClusterTransport).slotMap;
    const groups = this.#groups(keys);
    const replies = new Array<StoredValue[] | undefined>(groups.length);
    let errors: unknown[] | undefined;
    let settled = false;
    const all = new Promise<void>((resolve) => {
      let left = groups.length;
      for (let g = 0; g < groups.length; g++) {
        const group = groups[g] as BatchGroup;
        this.#transport.send(group.keys[0], true, ['MGET', ...group.keys]).then(
          (reply) => {
            if (!settled) replies[g] = reply as StoredValue[];
            if (--left === 0) resolve();
          },
          (error: unknown) => {
            if (!settled) {
              errors ??= new Array<unknown>(groups.length);
              errors[g] = error;
            }
            if (--left === 0) resolve();
          },
        );
      }
    });
    try {
      await this.#deadlines.within(all);
    } catch (timeout) {
      // The groups still unanswered at the deadline are the ones that timed out; the others' answers stand.
      errors ??= new Array<unknown>(groups.length);
      for (let g = 0; g < groups.length; g++)
        if (replies[g] === undefined && errors[g] === undefined) errors[g] = timeout;
    }
    settled = true;
    observer?.commandDone('mget', (performance.now() - start) / 1000);
    const values = new Array<StoredValue>(keys.length).fill(null);
    let failed: number[] | undefined;
    for (let g = 0; g < groups.length; g++) {
      const reply = replies[g];
      if (reply === undefined) {
        failed ??= [];
        failed.push(g);
        continue;
      }
      const indexes = (groups[g] as BatchGroup).indexes;
      for (let i = 0; i < indexes.length; i++) values[indexes[i] as number] = reply[i] ?? null;
    }
    if (failed === undefined) return { values, unread: undefined };
    const groupErrors = errors as unknown[];
    observer?.commandFailed('mget', redisErrorKind(groupErrors[failed[0] as number]));
    const unread = this.#unreadOf(groups, failed, groupErrors, map);
    if (!leaveOut) {
      const nodes = unread.outages.map(({ node, slots, reason }) => ({ node, slots, reason }));
      throw new ClusterNodeUnavailableError(
        this.address,
        nodes,
        groupErrors[failed[0] as number],
        (this.#cluster as ClusterTransport).advice,
      );
    }
    return { values, unread };
  }

  /**
   * What the failed groups of a cluster read (routed by `map`) mean: the keys not read and the
   * nodes behind them, each reported to the transport (logged once per outage; a node saying the
   * whole cluster refuses queries is reported as the cluster's). Throws when the failure is not the
   * outage of some nodes: an error that is no outage (reported as itself, as {@link #run} does), the
   * whole cluster away (no master connected: a plain {@link RedisUnavailableError}), or nothing read
   * while no master serves (a {@link ClusterDownError}: a 503, not an answer made of nothing).
   */
  #unreadOf(
    groups: readonly BatchGroup[],
    failed: readonly number[],
    errors: readonly unknown[],
    map: SlotMap,
  ): UnreadKeys {
    const cluster = this.#cluster as ClusterTransport;
    const byNode = new Map<
      string,
      { owner: SlotOwner; cause: OutageCause; error: unknown; reason: string; keys: number }
    >();
    const indexes: number[] = [];
    for (const g of failed) {
      const error = errors[g];
      const cause = outageCause(error);
      if (cause === undefined) throw this.#failure(error);
      const group = groups[g] as BatchGroup;
      const owner = cluster.ownerOfSlot(hashSlot(group.keys[0] as string), map);
      if (owner === undefined || !cluster.hasConnectedMaster()) throw this.#failure(error);
      const known = byNode.get(owner.address);
      if (known === undefined) {
        const reason = messageOf(error);
        byNode.set(owner.address, { owner, cause, error, reason, keys: group.indexes.length });
      } else known.keys += group.indexes.length;
      for (const index of group.indexes) indexes.push(index);
    }
    indexes.sort((a, b) => a - b);
    const outages: NodeOutage[] = [];
    for (const { owner, cause, error, reason, keys } of byNode.values()) {
      if (refusesWholeCluster(error)) cluster.reportRefusal(reason, owner.address);
      else cluster.reportOutage(owner, cause, reason);
      outages.push({ node: owner.address, slots: owner.slots, cause, reason, keys });
    }
    if (failed.length === groups.length && !cluster.hasServingMaster())
      throw new ClusterDownError(
        this.address,
        cluster.whyNoneServes(),
        cluster.advice,
        errors[failed[0] as number],
      );
    return { indexes, outages };
  }

  /**
   * Runs one operation (a command, or one MULTI/EXEC), timing it for the observer under
   * `command` (two clock readings, none when nothing observes), within a deadline unless
   * `deadline` is false (a whole SCAN of the keyspace may rightly take longer). On a cluster,
   * `key` (the operation's first key) lets an outage be reported as its node's, with its slots.
   */
  async #run<T>(operation: () => Promise<T>, command = 'other', deadline = true, key?: string): Promise<T> {
    this.connect();
    const observer = this.#options.observer;
    const start = observer === undefined ? 0 : performance.now();
    // The map the operation is routed by: a failure is the node's it was sent to.
    const map = this.#cluster?.slotMap;
    try {
      const result = await (deadline ? this.#deadlines.within(operation()) : operation());
      observer?.commandDone(command, (performance.now() - start) / 1000);
      return result;
    } catch (error) {
      if (error instanceof RankdError) throw error;
      if (observer !== undefined) {
        observer.commandDone(command, (performance.now() - start) / 1000);
        observer.commandFailed(command, redisErrorKind(error));
      }
      throw this.#failure(error, key, map);
    }
  }

  /**
   * What a failed operation is reported as: Redis out of memory, an outage (503: of one cluster
   * node, naming it and its slots, when `key` says which node and other masters are up; else of
   * Redis), or, for a bug or a command Redis rejects, the error itself (a 500).
   */
  #failure(error: unknown, key?: string, map?: SlotMap): unknown {
    // Redis answered, and refused for memory: reconnecting would not help, making room would.
    if (isOutOfMemoryReply(error)) return new RedisOutOfMemoryError(error);
    // Only an outage is a 503: a bug or a command Redis rejects is reported as itself (a 500).
    if (!isRedisOutage(error)) return error;
    const cluster = this.#cluster;
    const cause = outageCause(error);
    if (cluster !== undefined && key !== undefined && cause !== undefined && cluster.hasConnectedMaster()) {
      const owner = cluster.ownerOfSlot(hashSlot(key), map);
      if (owner !== undefined) {
        const reason = messageOf(error);
        if (refusesWholeCluster(error)) {
          cluster.reportRefusal(reason, owner.address);
          return new ClusterDownError(this.address, cluster.whyNoneServes(), cluster.advice, error);
        }
        cluster.reportOutage(owner, cause, reason);
        return new ClusterNodeUnavailableError(
          this.address,
          [{ node: owner.address, slots: owner.slots, reason }],
          error,
          cluster.advice,
        );
      }
    }
    return new RedisUnavailableError(this.address, error, this.mode === 'cluster');
  }

  /**
   * Reports a change of state: on a single Redis `lost` once per outage and `ready` when it is
   * over; a cluster's node events pass as they come (the transport reports each once per outage).
   */
  #onEvent(event: TransportEvent, detail: string): void {
    if (this.#cluster !== undefined && this.#cache !== undefined) this.#followMasters(this.#cluster.slotMap);
    if (event === 'node-lost' || event === 'node-back') {
      this.#options.onStateChange?.(event === 'node-lost' ? 'lost' : 'ready', detail);
      return;
    }
    if (event === this.#state) return;
    this.#state = event;
    if (this.mode === 'cluster') this.#options.onStateChange?.(event, detail);
    else this.#options.onStateChange?.(event, event === 'lost' ? `${this.address}: ${detail}` : this.address);
  }
}

/** `[key, value, key, value, ...]` of the entries of one group, for MSET. */
function flatPairs(
  entries: ReadonlyArray<readonly [string, string | Buffer]>,
  group: BatchGroup,
): RedisCommand {
  const flat: Array<string | Buffer> = [];
  for (const index of group.indexes) {
    const [key, value] = entries[index] as readonly [string, string | Buffer];
    flat.push(key, value);
  }
  return flat;
}

/** What an error says, for a log line or a response's reason. */
function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Whether `keys` are whole key strings rather than {@link SplitKeys}. */
function isWhole(keys: readonly string[] | SplitKeys): keys is readonly string[] {
  return Array.isArray(keys);
}
