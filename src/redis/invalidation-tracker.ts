import { createClient, type RedisClientOptions } from '@redis/client';
import { ownersOf, type SlotMap } from './cluster-slot-map.js';
import type { ReadCache } from './read-cache.js';
import { NO_COMMAND_TIMEOUT, type RedisCommand, reconnectDelay } from './transport.js';

/** How to reach one node: a URL (a single Redis: its password and TLS come with it) or a host and port. */
export type TrackedNode = { readonly url: string } | { readonly host: string; readonly port: number };

/** The node's address as `host:port`, to compare a cluster's masters with. */
function addressOf(node: TrackedNode): string {
  if ('url' in node) {
    const url = new URL(node.url);
    return `${url.hostname || 'localhost'}:${url.port || '6379'}`;
  }
  return `${node.host}:${node.port}`;
}

function createTrackingClient(node: TrackedNode, connectTimeoutMs: number) {
  return createClient({
    ...('url' in node ? { url: node.url } : {}),
    // RESP3 on this connection only: invalidations arrive as pushes on the connection that asked
    // for them. The data connection keeps RESP2 and its parse path (DR-020).
    RESP: 3,
    emitInvalidate: true,
    maintNotifications: 'disabled',
    disableOfflineQueue: true,
    socket: {
      ...('url' in node ? {} : { host: node.host, port: node.port }),
      connectTimeout: connectTimeoutMs,
      reconnectStrategy: reconnectDelay,
    },
    commandOptions: NO_COMMAND_TIMEOUT,
  } satisfies RedisClientOptions);
}

/** One node's tracking connection: `CLIENT TRACKING ON BCAST` for the cached prefixes. */
class NodeTracker {
  readonly address: string;
  readonly #client: ReturnType<typeof createTrackingClient>;
  readonly #owner: InvalidationTracker;
  readonly #command: RedisCommand;
  /** Bumped by every loss: a setup that began before one does not count. */
  #epoch = 0;
  #tracking = false;
  #closed = false;

  constructor(node: TrackedNode, owner: InvalidationTracker, prefixes: readonly string[], timeoutMs: number) {
    this.address = addressOf(node);
    this.#owner = owner;
    this.#command = ['CLIENT', 'TRACKING', 'ON', 'BCAST', ...prefixes.flatMap((p) => ['PREFIX', p])];
    this.#client = createTrackingClient(node, timeoutMs);
    // null: the node was flushed (FLUSHALL, FLUSHDB), or its tracking table overflowed.
    this.#client.on('invalidate', (key: Buffer | string | null) => owner.invalidated(key));
    this.#client.on('error', () => this.#lost());
    this.#client.on('end', () => this.#lost());
    this.#client.on('ready', () => void this.#setUp());
    this.#client.connect().catch(() => undefined);
  }

  get tracking(): boolean {
    return this.#tracking;
  }

  /** Resolves once every invalidation the node sent before now has been handled. */
  async sync(): Promise<void> {
    await this.#client.sendCommand(['PING']);
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#lost();
    try {
      this.#client.destroy();
    } catch {
      // already closed
    }
  }

  #lost(): void {
    this.#epoch++;
    if (!this.#tracking) return;
    this.#tracking = false;
    this.#owner.nodeChanged();
  }

  async #setUp(): Promise<void> {
    const epoch = this.#epoch;
    try {
      // node-redis's emitInvalidate turned default tracking on; BCAST needs it off first.
      await this.#client.sendCommand(['CLIENT', 'TRACKING', 'OFF']);
      await this.#client.sendCommand(this.#command as string[]);
    } catch {
      // The connection went while setting up: its loss is handled; the next `ready` tries again.
      return;
    }
    if (epoch !== this.#epoch || this.#closed) return;
    this.#tracking = true;
    this.#owner.nodeChanged();
  }
}

/**
 * Keeps a {@link ReadCache} exact: one connection per node (each master of a cluster) with
 * `CLIENT TRACKING ON BCAST` over the cached key prefixes, so that Redis sends it every key written
 * under them, whoever writes (DR-020). No key is tracked per read, so reads cost Redis nothing more.
 * The cache serves only while every node's connection tracks; it is flushed when one is lost and
 * again when all track again, since invalidations sent meanwhile were lost.
 */
export class InvalidationTracker {
  readonly #cache: ReadCache;
  readonly #prefixes: readonly string[];
  readonly #connectTimeoutMs: number;
  #nodes: NodeTracker[] = [];
  /** The cluster slot map whose masters are tracked. */
  #followedMap: SlotMap | undefined;
  #closed = false;

  constructor(cache: ReadCache, connectTimeoutMs: number) {
    this.#cache = cache;
    this.#prefixes = disjointPrefixes(cache.prefixes);
    this.#connectTimeoutMs = connectTimeoutMs;
  }

  /** The addresses tracked, `host:port` each. */
  get addresses(): string[] {
    return this.#nodes.map((node) => node.address);
  }

  /**
   * Tracks exactly `nodes` (a cluster's masters after a change): connections to nodes no longer
   * named are closed, new ones opened; the cache stops serving until every one tracks.
   */
  track(nodes: readonly TrackedNode[]): void {
    if (this.#closed) return;
    const wanted = new Map(nodes.map((node) => [addressOf(node), node]));
    const kept = this.#nodes.filter((node) => wanted.has(node.address));
    for (const node of this.#nodes) if (!wanted.has(node.address)) void node.close();
    const known = new Set(kept.map((node) => node.address));
    for (const [address, node] of wanted)
      if (!known.has(address)) kept.push(new NodeTracker(node, this, this.#prefixes, this.#connectTimeoutMs));
    this.#nodes = kept;
    this.nodeChanged();
  }

  /** Tracks the masters of a cluster's slot map `map` (after a change of the map): DR-020. */
  followMasters(map: SlotMap): void {
    if (map === this.#followedMap) return;
    const masters = [...ownersOf(map).keys()];
    if (masters.length === 0) return;
    this.#followedMap = map;
    this.track(
      masters.map((address) => {
        const at = address.lastIndexOf(':');
        return {
          host: address.slice(0, at).replace(/^\[(.*)\]$/, '$1'),
          port: Number(address.slice(at + 1)),
        };
      }),
    );
  }

  /** Resolves once every invalidation sent before now by every tracked node has been handled. */
  async sync(): Promise<void> {
    await Promise.all(this.#nodes.map((node) => node.sync()));
  }

  /** A node's connection began or stopped tracking. */
  nodeChanged(): void {
    const all = !this.#closed && this.#nodes.length > 0 && this.#nodes.every((node) => node.tracking);
    if (all) this.#cache.enable();
    else if (this.#cache.enabled) this.#cache.disable();
  }

  /** An invalidation from a node: one key, or null for all of them. */
  invalidated(key: Buffer | string | null): void {
    if (key === null) this.#cache.flush();
    else this.#cache.invalidate(typeof key === 'string' ? key : key.toString('utf8'));
  }

  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all(this.#nodes.map((node) => node.close()));
    this.#nodes = [];
    this.#cache.disable();
  }
}

/** The prefixes without any that another contains (Redis refuses overlapping BCAST prefixes). */
function disjointPrefixes(prefixes: readonly string[]): string[] {
  return prefixes.filter(
    (prefix, i) =>
      !prefixes.some((other, j) => j !== i && prefix.startsWith(other) && (other !== prefix || j < i)),
  );
}
