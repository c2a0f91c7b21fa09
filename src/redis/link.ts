/** The connection's lifecycle: connect, reconnect, state changes, close; each operation's deadline and 503. */
import { RankdError } from '../errors/index.js';
import { ClusterTransport } from './cluster-transport.js';
import { Deadlines } from './deadlines.js';
import { InvalidationTracker } from './invalidation-tracker.js';
import { type RedisObserver, redisErrorKind } from './observer.js';
import { failureOf } from './outage-accounting.js';
import { ReadCache } from './read-cache.js';
import { type RedisTransport, SingleNodeTransport, type TransportEvent } from './transport.js';

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

/**
 * What the commands of a {@link RedisConnection} run on: the transport (one Redis or a Redis
 * Cluster), connected in the background and reconnecting by itself forever, with the read cache's
 * tracking connections beside it; {@link run} gives each operation its deadline, its timing and
 * the error its failure means for the caller.
 */
export class RedisLink {
  /** `host:port` (or the cluster's seed nodes) as shown to users in error messages. */
  readonly address: string;
  /** Whether this is one Redis or a Redis Cluster (whose keys then carry hash tags). */
  readonly mode: 'single' | 'cluster';
  readonly transport: RedisTransport;
  /** The same transport when it is a cluster's: it names the node behind a failed slot. */
  readonly cluster: ClusterTransport | undefined;
  readonly deadlines: Deadlines;
  /** The read cache; undefined when off. */
  readonly cache: ReadCache | undefined;
  /** What keeps the read cache exact; undefined when it is off. */
  readonly tracker: InvalidationTracker | undefined;
  readonly #options: RedisConnectionOptions;
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
    this.cluster = nodes.length > 0 ? new ClusterTransport(nodes, transportOptions) : undefined;
    this.transport = this.cluster ?? new SingleNodeTransport(options.url, transportOptions);
    this.address = this.transport.address;
    this.deadlines = new Deadlines(options.commandTimeoutMs);
    const cache = options.readCache;
    if (cache !== undefined && cache.capacityBytes > 0) {
      this.cache = new ReadCache(cache.capacityBytes, cache.prefixes);
      this.tracker = new InvalidationTracker(this.cache, options.connectTimeoutMs);
    }
  }

  /** Told how long each command took and how it failed; undefined when nothing observes. */
  get observer(): RedisObserver | undefined {
    return this.#options.observer;
  }

  /** Starts connecting (in the background: Redis being down at start-up is not fatal). */
  connect(): void {
    if (this.#connecting !== undefined) return;
    // A single Redis's invalidations come from its own address; a cluster's masters are known once
    // its slot map is (followMasters, again after each change of the map).
    if (this.mode === 'single') this.tracker?.track([{ url: this.#options.url }]);
    this.#connecting = this.transport
      .connect()
      .then(() => this.followMasters())
      .catch(() => undefined);
  }

  /** Has the read cache's tracker follow a cluster's masters, as its slot map says now: DR-020. */
  followMasters(): void {
    const cluster = this.cluster;
    if (cluster !== undefined && this.tracker !== undefined && cluster.isReady)
      this.tracker.followMasters(cluster.slotMap);
  }

  /**
   * Resolves once every invalidation Redis sent before now has reached the read cache. At once
   * when the cache is off.
   */
  async syncInvalidations(): Promise<void> {
    this.followMasters();
    await this.tracker?.sync();
  }

  /** Whether commands can be sent now. */
  get isReady(): boolean {
    return this.transport.isReady;
  }

  /** Resolves true once connected, false if that takes longer than `timeoutMs`. */
  async waitUntilReady(timeoutMs: number): Promise<boolean> {
    this.connect();
    const deadline = Date.now() + timeoutMs;
    while (!this.transport.isReady) {
      if (Date.now() >= deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return true;
  }

  /** Closes the transport and the tracking connections; pending commands finish first. */
  async close(): Promise<void> {
    await Promise.all([this.transport.close(), this.tracker?.close()]);
  }

  /**
   * Runs one operation (a command, or one MULTI/EXEC), timing it for the observer under
   * `command` (two clock readings, none when nothing observes), within a deadline unless
   * `deadline` is false (a whole SCAN of the keyspace may rightly take longer). On a cluster,
   * `key` (the operation's first key) lets an outage be reported as its node's, with its slots.
   */
  async run<T>(operation: () => Promise<T>, command = 'other', deadline = true, key?: string): Promise<T> {
    this.connect();
    const observer = this.#options.observer;
    const start = observer === undefined ? 0 : performance.now();
    // The map the operation is routed by: a failure is the node's it was sent to.
    const map = this.cluster?.slotMap;
    try {
      const result = await (deadline ? this.deadlines.within(operation()) : operation());
      observer?.commandDone(command, (performance.now() - start) / 1000);
      return result;
    } catch (error) {
      if (error instanceof RankdError) throw error;
      if (observer !== undefined) {
        observer.commandDone(command, (performance.now() - start) / 1000);
        observer.commandFailed(command, redisErrorKind(error));
      }
      throw failureOf(this, error, key, map);
    }
  }

  /**
   * Reports a change of state: on a single Redis `lost` once per outage and `ready` when it is
   * over; a cluster's node events pass as they come (the transport reports each once per outage).
   */
  #onEvent(event: TransportEvent, detail: string): void {
    this.followMasters();
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
