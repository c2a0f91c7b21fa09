import { createCluster, ErrorReply, RESP_TYPES } from '@redis/client';
import { type ClusterAccess, ClusterHealth } from './cluster-health.js';
import { ownersOf, type SlotMap, type SlotOwner } from './cluster-slot-map.js';
import { hashSlot } from './hash-slot.js';
import { type OutageCause, outageCause } from './outages.js';
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

/** What {@link ClusterHealth} needs of node-redis's cluster client. */
function accessOf(cluster: BufferCluster): ClusterAccess {
  const master = (address: string) => cluster.masters.find((m) => m.address === address);
  return {
    get isReady() {
      return cluster.isReady;
    },
    get slots(): SlotMap {
      return cluster.slots;
    },
    masters: () => cluster.masters.map((m) => m.address),
    isConnected: (address) => master(address)?.client?.isReady === true,
    send: async (address, command) => {
      const node = master(address);
      if (node === undefined) throw new Error(`${address} is no master of the slot map`);
      return (await cluster.nodeClient(node)).sendCommand(command as Array<string | Buffer>);
    },
    rediscover: async (address) => {
      const node = master(address);
      // node-redis reads the map again from that node (the one that just answered), replaces its
      // slot map, and drops the connections of nodes no longer in it. `never`: node-redis types the
      // starting client with other type parameters than its node clients'.
      if (node !== undefined) await cluster._slots.rediscover((await cluster.nodeClient(node)) as never);
    },
  };
}

/**
 * A Redis Cluster through node-redis's `createCluster`: commands are routed by their key's slot,
 * MOVED/ASK are followed, and the slot map is refreshed when a node goes away (failover).
 * Batches are split by hash slot ({@link groupOf}) by the connection, so every command it sends
 * here stays inside one slot.
 *
 * Its {@link ClusterHealth} says what happens to each master, once per outage: which node was lost
 * and which slots it served (from node-redis's connection errors, or from the connection's failed
 * commands, since a node that hangs raises no connection error), then which node serves those
 * slots after a failover, or that the node answers again. A master that did not answer in time is
 * sent nothing until it does or its slots have moved: commands for its slots fail at once.
 */
export class ClusterTransport implements RedisTransport {
  readonly address: string;
  readonly #cluster: BufferCluster;
  readonly #options: TransportOptions;
  readonly #health: ClusterHealth;
  #closed = false;

  constructor(nodes: readonly string[], options: TransportOptions) {
    this.address = nodes.join(',');
    this.#options = options;
    this.#cluster = createBufferCluster(nodes, options);
    this.#health = new ClusterHealth(
      accessOf(this.#cluster),
      options.commandTimeoutMs ?? 2000,
      options.onEvent,
    );
    // Without listeners node-redis would crash the process on the first connection error.
    this.#cluster.on('error', (error: Error) => {
      // Once the slot map is known, the node events below say which node failed.
      if (!this.#cluster.isReady) options.onEvent('lost', `no seed node answers (${error.message})`);
    });
    this.#cluster.on('node-error', (error: Error, node: { host: string; port: number }) => {
      const owner = this.#ownerByAddress(`${node.host}:${node.port}`);
      // A node that serves no slot (one dropped from the map) concerns no request.
      if (owner !== undefined) this.reportOutage(owner, 'offline', error.message);
    });
    // A new master (after a failover) or an old one reconnecting: see at once whether that ends an outage.
    this.#cluster.on('node-ready', () => this.#health.checkNow());
  }

  get isReady(): boolean {
    return this.#cluster.isReady;
  }

  /**
   * The slot map commands are routed by now: taken before a command, it names the node the command
   * went to even if the map changed before it failed ({@link ownerOfSlot}).
   */
  get slotMap(): SlotMap {
    return this.#cluster.slots;
  }

  /** What to do about a lost master, quoting the cluster's `cluster-node-timeout` when known. */
  get advice(): string {
    return this.#health.advice;
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
        const masters = [...ownersOf(this.#cluster.slots).values()].map(
          (o) => `${o.address} (slots ${o.slots})`,
        );
        this.#options.onEvent('ready', `connected through ${this.address}; masters: ${masters.join(', ')}`);
        void this.#health.readNodeTimeout();
        return;
      } catch (error) {
        this.#options.onEvent(
          'lost',
          `no seed node answers (${error instanceof Error ? error.message : String(error)})`,
        );
        await new Promise((resolve) => setTimeout(resolve, reconnectDelay(attempt)).unref());
      }
    }
  }

  send(key: string | undefined, readonly: boolean, command: RedisCommand): Promise<unknown> {
    if (key !== undefined && this.#health.skipsSomeNode) {
      const unsent = this.#health.notAnswering(hashSlot(key));
      if (unsent !== undefined) return Promise.reject(unsent);
    }
    return this.#cluster.sendCommand(key, readonly, command as Array<string | Buffer>);
  }

  /**
   * node-redis routes a command by its command table, not by the key it is given: one that names no
   * key (INFO) goes to any master, and when that one is down its failure would be blamed on `key`'s
   * master, up all along. So this sends it on the connection of `key`'s master in the slot map as
   * it is now, the map a failure is reported by ({@link slotMap}).
   */
  async sendToNodeOf(key: string, command: RedisCommand): Promise<unknown> {
    const slot = hashSlot(key);
    const unsent = this.#health.notAnswering(slot);
    if (unsent !== undefined) throw unsent;
    const master = this.#cluster.isReady ? this.#cluster.slots[slot]?.master : undefined;
    // A plain Error on purpose, as in pingAll: RedisLink's run makes it a RedisUnavailableError.
    if (master === undefined) throw new Error('the cluster slot map is not known yet');
    return (await this.#cluster.nodeClient(master)).sendCommand(command as Array<string | Buffer>);
  }

  async transaction(key: string, commands: readonly RedisCommand[]): Promise<unknown[]> {
    if (this.#health.skipsSomeNode) {
      const unsent = this.#health.notAnswering(hashSlot(key));
      if (unsent !== undefined) throw unsent;
    }
    const multi = this.#cluster.multi(key);
    for (const command of commands) multi.addCommand(key, false, command as Array<string | Buffer>);
    return (await multi.exec()) as unknown[];
  }

  async pingAll(): Promise<void> {
    // Before discovery the master list is empty: that is "not ready", not "every master answered".
    // A plain Error on purpose: RedisLink's run turns it into a RedisUnavailableError (503).
    if (!this.#cluster.isReady) throw new Error('the cluster slot map is not known yet');
    await Promise.all(
      this.#cluster.masters.map(async (master) => (await this.#cluster.nodeClient(master)).ping()),
    );
  }

  /**
   * Asks every master whether it serves (`CLUSTER INFO`), each within `deadline` (one hung master
   * must not hold the answer about the others); resolves with how many masters there are and those
   * that do not serve and why: no answer, an error, `cluster_state:fail` (a refusal of the whole
   * cluster, as `CLUSTERDOWN`), or not asked because it did not answer lately. A reply that is an
   * error but no outage (CLUSTER INFO not allowed to rankd's user) counts as serving. Throws when
   * the slot map is not known yet.
   */
  async probeEach(
    deadline: (probe: Promise<unknown>) => Promise<unknown>,
  ): Promise<{ masters: number; failed: Array<{ owner: SlotOwner; error: unknown }> }> {
    if (!this.#cluster.isReady) throw new Error('the cluster slot map is not known yet');
    const masters = [...this.#cluster.masters];
    const outcomes = await Promise.allSettled(
      masters.map(async (master) => {
        const unsent = this.#health.notAnsweringAt(master.address);
        if (unsent !== undefined) throw unsent;
        const info = await deadline(
          this.#cluster.nodeClient(master).then((client) => client.sendCommand(['CLUSTER', 'INFO'])),
        ).catch((error: unknown) => {
          if (outageCause(error) === undefined && error instanceof ErrorReply) return 'cluster_state:ok';
          throw error;
        });
        // What the node answers any key meanwhile: the same words, so the same cause.
        if (!String(info).includes('cluster_state:ok'))
          throw new ErrorReply('CLUSTERDOWN The cluster is down (cluster_state:fail)');
      }),
    );
    const failed: Array<{ owner: SlotOwner; error: unknown }> = [];
    outcomes.forEach((outcome, i) => {
      if (outcome.status === 'fulfilled') return;
      const address = (masters[i] as (typeof masters)[number]).address;
      failed.push({
        owner: this.#ownerByAddress(address) ?? { address, slots: '', ranges: [] },
        error: outcome.reason,
      });
    });
    return { masters: masters.length, failed };
  }

  async forEachNode(
    visit: (send: (command: RedisCommand) => Promise<unknown>) => Promise<void>,
  ): Promise<void> {
    // A plain Error on purpose, as in pingAll: RedisLink's run makes it a RedisUnavailableError.
    if (!this.#cluster.isReady) throw new Error('the cluster slot map is not known yet');
    for (const master of [...this.#cluster.masters]) {
      const client = await this.#cluster.nodeClient(master);
      await visit((command) => client.sendCommand(command as Array<string | Buffer>));
    }
  }

  /**
   * The master `slot` is routed to in `map` (the current one unless given: pass the map a failed
   * command was sent by), with all the slots it serves; undefined before the map is known. For
   * failures only: it looks the node up, which a send does not need.
   */
  ownerOfSlot(slot: number, map: SlotMap = this.#cluster.slots): SlotOwner | undefined {
    const address = this.#cluster.isReady ? map[slot]?.master.address : undefined;
    return address === undefined ? undefined : ownersOf(map).get(address);
  }

  /**
   * Whether some master's connection is up: a command failing on one node while another is connected
   * is that node's outage, not the cluster's. With none connected the whole cluster is away.
   */
  hasConnectedMaster(): boolean {
    return this.#cluster.isReady && this.#cluster.masters.some((master) => master.client?.isReady === true);
  }

  /**
   * Whether some master serves keys now: the cluster does not refuse queries, and some master is
   * connected and not lost. A read that could read nothing while none does answers 503.
   */
  hasServingMaster(): boolean {
    return this.#cluster.isReady && this.#health.servesSome();
  }

  /** Why no master serves keys (for {@link hasServingMaster} false), as a clause. */
  whyNoneServes(): string {
    return this.#health.whyNoneServes();
  }

  /**
   * Records that `owner` failed a command for `cause`: logged once per outage of the node (a
   * `node-lost` event), after which the cluster is watched until a replica has taken the node's
   * slots over or the node answers again (a `node-back` event). A master that timed out is sent
   * nothing meanwhile.
   */
  reportOutage(owner: SlotOwner, cause: OutageCause, reason: string): void {
    if (!this.#closed) this.#health.reportOutage(owner, cause, reason);
  }

  /** Records that master `from` says the whole cluster refuses queries (`CLUSTERDOWN`): logged once until it serves again. */
  reportRefusal(reason: string, from: string): void {
    if (!this.#closed) this.#health.reportRefusal(reason, from);
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#health.close();
    await closeWithin(this.#cluster.close(), () => this.#cluster.destroy());
  }

  #ownerByAddress(address: string): SlotOwner | undefined {
    return this.#cluster.isReady ? ownersOf(this.#cluster.slots).get(address) : undefined;
  }
}
