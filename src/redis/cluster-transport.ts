import { createCluster, RESP_TYPES } from '@redis/client';
import { CLUSTER_FAILOVER_ADVICE } from '../errors/index.js';
import { HASH_SLOTS, hashSlot } from './hash-slot.js';
import { formatSlotRanges, type OutageCause } from './outages.js';
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

/**
 * While some master is reported lost, how often the slot map is compared with the one it was lost
 * from (has a replica taken its slots over?) and the node asked whether it answers again, in ms.
 */
const LOST_NODE_CHECK_MS = 1000;

/** A master of the slot map and the slots it serves. */
export interface SlotOwner {
  /** `host:port`, as the cluster announces it. */
  readonly address: string;
  /** Its slots as ranges, `0-5460`. */
  readonly slots: string;
  readonly ranges: ReadonlyArray<readonly [from: number, to: number]>;
}

/** A master reported lost and not yet back: what it served, why it was lost, and since when. */
interface LostNode {
  readonly owner: SlotOwner;
  readonly cause: OutageCause;
  readonly since: number;
}

/** One sentence saying what happened to a master and what it means, for the log. */
function lostMessage(owner: SlotOwner, cause: OutageCause, reason: string): string {
  const node = `node ${owner.address} (master of slots ${owner.slots})`;
  const what =
    cause === 'cluster_down'
      ? `${node} refuses its slots (${reason}): the cluster reports slots no master serves, and with ` +
        "cluster-require-full-coverage yes (Redis's default) every node refuses queries meanwhile."
      : cause === 'timeout'
        ? `${node} does not answer (${reason}).`
        : cause === 'busy'
          ? `${node} cannot serve now (${reason}).`
          : `${node} cannot be reached (${reason}).`;
  return (
    `${what} Until it is back or a replica has taken its slots over, requests that need those slots ` +
    `are answered degraded or fail, as configured. ${CLUSTER_FAILOVER_ADVICE}`
  );
}

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
 *
 * It also says what happens to each master, once per outage: which node was lost and which slots
 * it served (from node-redis's connection errors, or from the connection's failed commands, since a
 * node that hangs raises no connection error), then which node serves those slots after a failover,
 * or that the node answers again. The comparison of slot maps runs only while a node is lost.
 */
export class ClusterTransport implements RedisTransport {
  readonly address: string;
  readonly #cluster: BufferCluster;
  readonly #options: TransportOptions;
  #closed = false;
  /** The slot map {@link #owners} was computed from (node-redis replaces the array on each refresh). */
  #ownersOf: unknown;
  #owners = new Map<string, SlotOwner>();
  /** Masters reported lost and not yet back, by address: one entry per outage, not per request. */
  readonly #lost = new Map<string, LostNode>();
  #watch: NodeJS.Timeout | undefined;
  #checking = false;

  constructor(nodes: readonly string[], options: TransportOptions) {
    this.address = nodes.join(',');
    this.#options = options;
    this.#cluster = createBufferCluster(nodes, options);
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
    this.#cluster.on('node-ready', () => {
      if (this.#lost.size > 0) void this.#checkLost();
    });
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
        const masters = [...this.#ownerMap().values()].map((o) => `${o.address} (slots ${o.slots})`);
        this.#options.onEvent('ready', `connected through ${this.address}; masters: ${masters.join(', ')}`);
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

  /**
   * PINGs every master, each within `deadline` (one hung master must not hold the answer about the
   * others); resolves with the masters that failed and why (none when all answered). Throws when
   * the slot map is not known yet.
   */
  async pingEach(
    deadline: (ping: Promise<unknown>) => Promise<unknown>,
  ): Promise<Array<{ owner: SlotOwner; error: unknown }>> {
    if (!this.#cluster.isReady) throw new Error('the cluster slot map is not known yet');
    const masters = [...this.#cluster.masters];
    const outcomes = await Promise.allSettled(
      masters.map((master) => deadline(this.#cluster.nodeClient(master).then((client) => client.ping()))),
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
    return failed;
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

  /**
   * The master `slot` is routed to in the current slot map, with all the slots it serves; undefined
   * before the map is known. For failures only: it looks the node up, which a send does not need.
   */
  ownerOfSlot(slot: number): SlotOwner | undefined {
    const address = this.#cluster.isReady ? this.#cluster.slots[slot]?.master.address : undefined;
    return address === undefined ? undefined : this.#ownerByAddress(address);
  }

  /**
   * Whether some master's connection is up: a command failing on one node while another is connected
   * is that node's outage, not the cluster's. With none connected the whole cluster is away.
   */
  hasConnectedMaster(): boolean {
    return this.#cluster.isReady && this.#cluster.masters.some((master) => master.client?.isReady === true);
  }

  /**
   * Records that `owner` failed a command for `cause`: logged once per outage of the node (a
   * `node-lost` event), after which the slot map is watched until a replica has taken the node's
   * slots over or the node answers again (a `node-back` event).
   */
  reportOutage(owner: SlotOwner, cause: OutageCause, reason: string): void {
    if (this.#closed || this.#lost.has(owner.address)) return;
    this.#lost.set(owner.address, { owner, cause, since: Date.now() });
    this.#options.onEvent('node-lost', lostMessage(owner, cause, reason));
    this.#watch ??= setInterval(() => void this.#checkLost(), LOST_NODE_CHECK_MS).unref();
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#watch);
    this.#watch = undefined;
    await closeWithin(this.#cluster.close(), () => this.#cluster.destroy());
  }

  /** The masters of the current slot map by address, computed once per map node-redis makes. */
  #ownerMap(): Map<string, SlotOwner> {
    const slots = this.#cluster.slots;
    if (slots === this.#ownersOf) return this.#owners;
    const ranges = new Map<string, Array<[number, number]>>();
    let start = 0;
    let owner = slots[0]?.master.address;
    for (let slot = 1; slot <= HASH_SLOTS; slot++) {
      const address = slot < HASH_SLOTS ? slots[slot]?.master.address : undefined;
      if (slot < HASH_SLOTS && address === owner) continue;
      if (owner !== undefined) {
        const list = ranges.get(owner);
        if (list === undefined) ranges.set(owner, [[start, slot - 1]]);
        else list.push([start, slot - 1]);
      }
      start = slot;
      owner = address;
    }
    this.#owners = new Map(
      [...ranges].map(([address, list]) => [
        address,
        { address, slots: formatSlotRanges(list), ranges: list },
      ]),
    );
    this.#ownersOf = slots;
    return this.#owners;
  }

  #ownerByAddress(address: string): SlotOwner | undefined {
    return this.#cluster.isReady ? this.#ownerMap().get(address) : undefined;
  }

  /**
   * For each lost master: if other nodes now serve all its slots, a failover happened (says who
   * took over); if it still serves them and answers with `cluster_state:ok`, it is back.
   */
  async #checkLost(): Promise<void> {
    if (this.#checking || this.#closed || !this.#cluster.isReady) return;
    this.#checking = true;
    try {
      for (const [address, lost] of [...this.#lost]) {
        const seconds = ((Date.now() - lost.since) / 1000).toFixed(1);
        const servers = this.#serversOf(lost.owner);
        if (servers !== undefined && !servers.includes(address)) {
          this.#lost.delete(address);
          this.#options.onEvent(
            'node-back',
            `slots ${lost.owner.slots} are served by ${servers.join(', ')} now, no longer by ${address}: ` +
              `a failover happened, ${seconds} s after rankd first saw the node fail. The old master ` +
              'rejoins as a replica of the new one once it is restarted.',
          );
        } else if (servers !== undefined && (await this.#answersOk(address))) {
          this.#lost.delete(address);
          this.#options.onEvent(
            'node-back',
            `node ${address} (master of slots ${lost.owner.slots}) serves its slots again after ${seconds} s; ` +
              'no failover was needed.',
          );
        }
      }
    } finally {
      this.#checking = false;
      if (this.#lost.size === 0) {
        clearInterval(this.#watch);
        this.#watch = undefined;
      }
    }
  }

  /** The masters that serve `owner`'s former slots in the current map; undefined if some have none. */
  #serversOf(owner: SlotOwner): string[] | undefined {
    const slots = this.#cluster.slots;
    const servers = new Set<string>();
    for (const [from, to] of owner.ranges) {
      for (let slot = from; slot <= to; slot++) {
        const address = slots[slot]?.master.address;
        if (address === undefined) return undefined;
        servers.add(address);
      }
    }
    return [...servers];
  }

  /** Whether master `address` answers CLUSTER INFO with `cluster_state:ok` within the command timeout. */
  async #answersOk(address: string): Promise<boolean> {
    const master = this.#cluster.masters.find((m) => m.address === address);
    if (master === undefined) return false;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<string>((resolve) => {
      timer = setTimeout(() => resolve(''), this.#options.commandTimeoutMs ?? 2000);
    });
    const probe = (async () => {
      const client = await this.#cluster.nodeClient(master);
      return String(await client.sendCommand(['CLUSTER', 'INFO']));
    })().catch(() => '');
    try {
      return (await Promise.race([probe, timeout])).includes('cluster_state:ok');
    } finally {
      clearTimeout(timer);
    }
  }
}
