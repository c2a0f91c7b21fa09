import { createCluster, RESP_TYPES } from '@redis/client';
import { hashSlot } from './hash-slot.js';
import {
  closeWithin,
  NO_COMMAND_TIMEOUT,
  type RedisCommand,
  type RedisTransport,
  reconnectDelay,
  type TransportOptions,
} from './transport.js';

/**
 * How soon after a node starts reconnecting the client asks the cluster for its slot map again,
 * in ms. node-redis's default is 5 s; after a master dies its replica takes over within about
 * `cluster-node-timeout` plus an election, and until the map is refreshed every request for the
 * dead master's slots answers 503. The refresh repeats at this pace while the node stays down.
 */
const TOPOLOGY_REFRESH_AFTER_MS = 500;

/**
 * Longest pause between reconnection attempts to a cluster node, in ms. Shorter than a single
 * Redis's 2 s because the topology refresh above only runs on a reconnection attempt.
 */
const MAX_NODE_RECONNECT_DELAY_MS = 500;

/** `host:port` (or `[v6]:port`) → socket options. */
function socketOf(node: string): { host: string; port: number } {
  const at = node.lastIndexOf(':');
  return { host: node.slice(0, at).replace(/^\[(.*)\]$/, '$1'), port: Number(node.slice(at + 1)) };
}

function createBufferCluster(nodes: readonly string[], options: TransportOptions) {
  return createCluster({
    rootNodes: nodes.map((node) => ({ socket: socketOf(node) })),
    // Every node connection (the discovered ones too) is made from these.
    defaults: {
      // Fail fast while a node is down instead of queueing: a request must answer 503, never hang.
      disableOfflineQueue: true,
      socket: {
        connectTimeout: options.connectTimeoutMs,
        reconnectStrategy: (retries: number) =>
          Math.min(reconnectDelay(retries), MAX_NODE_RECONNECT_DELAY_MS),
      },
    },
    commandOptions: NO_COMMAND_TIMEOUT,
    topologyRefreshOnReconnectionAttemptStrategy: TOPOLOGY_REFRESH_AFTER_MS,
  }).withTypeMapping({ [RESP_TYPES.BLOB_STRING]: Buffer });
}

type BufferCluster = ReturnType<typeof createBufferCluster>;

/**
 * A Redis Cluster through node-redis's `createCluster`: commands are routed by their key's slot,
 * MOVED/ASK are followed, and the slot map is refreshed when a node goes away (failover).
 * Batches are split by hash slot ({@link groupOf}) by the connection, so every command it sends
 * here stays inside one slot.
 */
export class ClusterTransport implements RedisTransport {
  readonly address: string;
  readonly #cluster: BufferCluster;
  readonly #options: TransportOptions;
  #closed = false;

  constructor(nodes: readonly string[], options: TransportOptions) {
    this.address = nodes.join(',');
    this.#options = options;
    this.#cluster = createBufferCluster(nodes, options);
    // Without listeners node-redis would crash the process on the first connection error.
    this.#cluster.on('error', (error: Error) => options.onEvent('lost', error.message));
    this.#cluster.on('node-error', (error: Error, node: { host: string; port: number }) =>
      options.onEvent('lost', `${node.host}:${node.port}: ${error.message}`),
    );
    this.#cluster.on('node-ready', (node: { host: string; port: number }) =>
      options.onEvent('ready', `${node.host}:${node.port}`),
    );
  }

  get isReady(): boolean {
    return this.#cluster.isReady;
  }

  groupOf(key: string): number {
    return hashSlot(key);
  }

  /**
   * node-redis gives up when no seed node answers the first discovery; a rankd started before its
   * cluster must still come up by itself, so discovery is retried here until it works.
   */
  async connect(): Promise<void> {
    for (let attempt = 0; !this.#closed; attempt++) {
      try {
        await this.#cluster.connect();
        this.#options.onEvent('ready', this.address);
        return;
      } catch (error) {
        this.#options.onEvent('lost', error instanceof Error ? error.message : String(error));
        await new Promise((resolve) => setTimeout(resolve, reconnectDelay(attempt)).unref());
      }
    }
  }

  send(key: string | undefined, readonly: boolean, command: RedisCommand): Promise<unknown> {
    return this.#cluster.sendCommand(key, readonly, command as Array<string | Buffer>);
  }

  async transaction(key: string, commands: readonly RedisCommand[]): Promise<unknown[]> {
    const multi = this.#cluster.multi(key);
    for (const command of commands) multi.addCommand(key, false, command as Array<string | Buffer>);
    return (await multi.exec()) as unknown[];
  }

  async pingAll(): Promise<void> {
    // Before discovery the master list is empty: that is "not ready", not "every master answered".
    // A plain Error on purpose: RedisConnection's #run turns it into a RedisUnavailableError (503).
    if (!this.#cluster.isReady) throw new Error('the cluster slot map is not known yet');
    await Promise.all(
      this.#cluster.masters.map(async (master) => (await this.#cluster.nodeClient(master)).ping()),
    );
  }

  async forEachNode(
    visit: (send: (command: RedisCommand) => Promise<unknown>) => Promise<void>,
  ): Promise<void> {
    // A plain Error on purpose, as in pingAll: #run makes it a RedisUnavailableError.
    if (!this.#cluster.isReady) throw new Error('the cluster slot map is not known yet');
    for (const master of [...this.#cluster.masters]) {
      const client = await this.#cluster.nodeClient(master);
      await visit((command) => client.sendCommand(command as Array<string | Buffer>));
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    await closeWithin(this.#cluster.close(), () => this.#cluster.destroy());
  }
}
