import { clusterFailoverAdvice } from '../errors/index.js';
import {
  coversEverySlot,
  differs,
  ownersOf,
  parseClusterSlots,
  type SlotMap,
  type SlotOwner,
  type SlotRange,
  serversOf,
  stillServes,
} from './cluster-slot-map.js';
import { NodeNotAnsweringError, type OutageCause } from './outages.js';
import type { RedisCommand, TransportEvent } from './transport.js';

/**
 * While a master is lost or the cluster refuses queries, how often the slot map is read again
 * from a master that answers (has a replica been promoted?) and the lost masters probed, in ms.
 * A promotion is followed within this plus a round trip.
 */
const WATCH_MS = 250;

/**
 * Longest wait for one probe of a lost master or one read of the slot map, in ms: short, so that
 * one hung node does not hold up the watch. A hung node's probe is left pending (one at a time)
 * and counts as no answer until it settles.
 */
const PROBE_MS = 250;

/** Longest wait for the client to read the slot map again, in ms, before the next round tries. */
const REDISCOVER_MS = 2000;

/** What the watch needs of a cluster client: node-redis's, as the cluster transport adapts it. */
export interface ClusterAccess {
  readonly isReady: boolean;
  /** The slot map requests are routed by now. */
  readonly slots: SlotMap;
  /** The masters of that map, by address. */
  masters(): string[];
  /** Whether the connection to master `address` is up. */
  isConnected(address: string): boolean;
  /** Sends `command` on master `address`'s connection (fails if it is no master of the map). */
  send(address: string, command: RedisCommand): Promise<unknown>;
  /** Makes the client read the slot map again, from master `address`. */
  rediscover(address: string): Promise<void>;
}

/** A master reported lost and not yet back. */
interface LostNode {
  readonly owner: SlotOwner;
  readonly cause: OutageCause;
  readonly since: number;
  /** Set when it did not answer in time: what commands for its slots fail with, unsent, meanwhile. */
  readonly notAnswering: NodeNotAnsweringError | undefined;
  /** Its probe still unanswered, if any: a hung node is sent one at a time. */
  probe: Promise<boolean> | undefined;
}

/** `promise`'s value, or undefined when it fails or takes longer than `ms`. */
async function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(resolve, ms, undefined);
  });
  try {
    return await Promise.race([promise.catch(() => undefined), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** A setting's value in a `CONFIG GET` reply: `[name, value]` (RESP2), or a map (RESP3, as an object or a Map). */
function configValue(reply: unknown, name: string): unknown {
  if (Array.isArray(reply)) return reply[1];
  if (reply instanceof Map) return reply.get(name);
  return typeof reply === 'object' && reply !== null ? (reply as Record<string, unknown>)[name] : undefined;
}

function secondsSince(since: number): string {
  return ((Date.now() - since) / 1000).toFixed(1);
}

/** One sentence saying what happened to a master and what it means, for the log. */
function lostMessage(owner: SlotOwner, cause: OutageCause, reason: string, advice: string): string {
  const node = `node ${owner.address} (master of slots ${owner.slots})`;
  if (cause === 'timeout')
    return (
      `${node} does not answer (${reason}). rankd sends it nothing more until it answers again or a ` +
      'replica has taken its slots over: meanwhile requests that need those slots are answered degraded ' +
      `or fail, as configured, without waiting. ${advice}`
    );
  const what =
    cause === 'cluster_down'
      ? `${node} refuses its slots (${reason}): a failover or a slot migration is under way.`
      : cause === 'busy'
        ? `${node} cannot serve now (${reason}).`
        : `${node} cannot be reached (${reason}).`;
  return (
    `${what} Until it is back or a replica has taken its slots over, requests that need those slots ` +
    `are answered degraded or fail, as configured. ${advice}`
  );
}

/**
 * What rankd knows of a Redis Cluster's health, and the watch that keeps it true. Each master that
 * fails a command is reported lost once per outage; one that did not answer in time is then
 * treated as down for its slots, without being asked (see {@link notAnswering}), so that requests
 * stop waiting for the same timeout one after the other. A node saying the whole cluster refuses
 * queries (`CLUSTERDOWN`) is the cluster's outage, reported once, not the node's.
 *
 * While anything is wrong, every {@link WATCH_MS} the slot map is read from a master that answers
 * (`CLUSTER SLOTS`): when a replica has taken a lost master's slots over, the client reads the map
 * again and the log says a failover happened; a lost master still named the owner of its slots that
 * answers a short probe (`CLUSTER INFO`, `cluster_state:ok`) is back, and the log says no failover
 * happened. The advice quotes the cluster's own `cluster-node-timeout` (`CONFIG GET`), when readable.
 */
export class ClusterHealth {
  readonly #access: ClusterAccess;
  readonly #commandTimeoutMs: number;
  readonly #onEvent: (event: TransportEvent, detail: string) => void;
  /** Masters reported lost and not yet back, by address: one entry per outage, not per request. */
  readonly #lost = new Map<string, LostNode>();
  /** How many of them are not asked (timed out). */
  #notAnswering = 0;
  /** Since when, and why, the cluster refuses every query. */
  #refusing: { readonly since: number; readonly reason: string } | undefined;
  #nodeTimeoutMs: number | undefined;
  #watch: NodeJS.Timeout | undefined;
  #checking = false;
  #closed = false;

  constructor(
    access: ClusterAccess,
    commandTimeoutMs: number,
    onEvent: (event: TransportEvent, detail: string) => void,
  ) {
    this.#access = access;
    this.#commandTimeoutMs = commandTimeoutMs;
    this.#onEvent = onEvent;
  }

  /** What to do about a lost master, with the cluster's own `cluster-node-timeout` when known. */
  get advice(): string {
    return clusterFailoverAdvice(this.#nodeTimeoutMs);
  }

  /** Whether some master is treated as down without being asked: what a send checks first. */
  get skipsSomeNode(): boolean {
    return this.#notAnswering > 0;
  }

  /** What a command for `slot` fails with, unsent, when its master does not answer; else undefined. */
  notAnswering(slot: number): NodeNotAnsweringError | undefined {
    return this.notAnsweringAt(this.#access.slots[slot]?.master.address);
  }

  /** What a command for master `address` fails with, unsent, when it does not answer; else undefined. */
  notAnsweringAt(address: string | undefined): NodeNotAnsweringError | undefined {
    return address === undefined ? undefined : this.#lost.get(address)?.notAnswering;
  }

  /** Whether some master serves keys: the cluster does not refuse queries, and a master is up and not lost. */
  servesSome(): boolean {
    if (this.#refusing !== undefined) return false;
    return this.#access
      .masters()
      .some((address) => !this.#lost.has(address) && this.#access.isConnected(address));
  }

  /** Why no master serves keys, as a clause: the cluster refuses queries, or every master is lost. */
  whyNoneServes(): string {
    if (this.#refusing !== undefined) return `every master refuses queries (${this.#refusing.reason})`;
    const lost = [...this.#lost.values()].map(({ owner, cause }) => `${owner.address}: ${cause}`);
    return `no master answers (${lost.length > 0 ? lost.join(', ') : 'none connected'})`;
  }

  /** Reads the cluster's `cluster-node-timeout` from a master for the advice; keeps what it had if none says. */
  async readNodeTimeout(): Promise<void> {
    for (const address of this.#access.masters()) {
      if (this.#lost.has(address) || !this.#access.isConnected(address)) continue;
      const reply = await within(
        this.#access.send(address, ['CONFIG', 'GET', 'cluster-node-timeout']),
        4 * PROBE_MS,
      );
      const value = Number(String(configValue(reply, 'cluster-node-timeout')));
      if (Number.isFinite(value) && value > 0) {
        this.#nodeTimeoutMs = value;
        return;
      }
    }
  }

  /**
   * Records that master `owner` failed a command for `cause` (a master of the map the command was
   * routed by): logged once per outage, then watched until it is back or its slots have moved. A
   * node no longer master of the current map was failed over already: nothing to report.
   */
  reportOutage(owner: SlotOwner, cause: OutageCause, reason: string): void {
    if (this.#closed || this.#lost.has(owner.address)) return;
    const current = ownersOf(this.#access.slots).get(owner.address);
    if (current === undefined) return;
    const notAnswering = cause === 'timeout' ? new NodeNotAnsweringError(this.#commandTimeoutMs) : undefined;
    this.#lost.set(current.address, {
      owner: current,
      cause,
      since: Date.now(),
      notAnswering,
      probe: undefined,
    });
    if (notAnswering !== undefined) this.#notAnswering++;
    this.#onEvent('node-lost', lostMessage(current, cause, reason, this.advice));
    this.#startWatch();
    // For the next messages: the setting may have been changed since it was read.
    void this.readNodeTimeout();
  }

  /** Records that master `from` says the whole cluster refuses queries (`reason`): logged once until it serves again. */
  reportRefusal(reason: string, from: string): void {
    if (this.#closed || this.#refusing !== undefined) return;
    this.#refusing = { since: Date.now(), reason };
    this.#onEvent(
      'node-lost',
      `the cluster refuses every query (${reason}, answered by ${from}): some slots have no master that ` +
        'answers (a master failed and no replica has taken its slots over yet), and with ' +
        "cluster-require-full-coverage yes (Redis's default) every node refuses until they have one. " +
        `Requests that can read nothing answer 503 meanwhile, and so does /readyz. ${this.advice}`,
    );
    this.#startWatch();
  }

  /** Runs a round of the watch now, if something is wrong (a node reconnected, say). */
  checkNow(): void {
    if (this.#lost.size > 0 || this.#refusing !== undefined) void this.#check();
  }

  close(): void {
    this.#closed = true;
    clearInterval(this.#watch);
    this.#watch = undefined;
  }

  #startWatch(): void {
    this.#watch ??= setInterval(() => void this.#check(), WATCH_MS).unref();
    void this.#check();
  }

  /** One round: the slot map from a master that answers (followed if it moved), then each lost master, then the cluster's state. */
  async #check(): Promise<void> {
    if (this.#checking || this.#closed || !this.#access.isReady) return;
    this.#checking = true;
    try {
      const view = await this.#freshView();
      // A map with a slot no master serves must not replace the client's: it routes by every slot.
      if (view !== undefined && coversEverySlot(view.ranges) && differs(this.#access.slots, view.ranges))
        await within(this.#access.rediscover(view.from), REDISCOVER_MS);
      await Promise.all([...this.#lost.values()].map((lost) => this.#checkNode(lost, view?.ranges)));
      if (this.#refusing !== undefined) await this.#checkRefusal(view?.from);
    } finally {
      this.#checking = false;
      if (this.#lost.size === 0 && this.#refusing === undefined) {
        clearInterval(this.#watch);
        this.#watch = undefined;
      }
    }
  }

  /** `CLUSTER SLOTS` from the first master that is neither lost nor disconnected and answers in time. */
  async #freshView(): Promise<{ from: string; ranges: SlotRange[] } | undefined> {
    for (const address of this.#access.masters()) {
      if (this.#lost.has(address) || !this.#access.isConnected(address)) continue;
      const ranges = parseClusterSlots(
        await within(this.#access.send(address, ['CLUSTER', 'SLOTS']), PROBE_MS),
      );
      if (ranges !== undefined) return { from: address, ranges };
    }
    return undefined;
  }

  /**
   * A failover if other masters serve all of `lost`'s slots in the client's map; back if the
   * cluster (`ranges`, read from another master, when there is one) still names it their master
   * and it answers a probe with `cluster_state:ok`.
   */
  async #checkNode(lost: LostNode, ranges: readonly SlotRange[] | undefined): Promise<void> {
    const { address, slots } = lost.owner;
    const servers = serversOf(lost.owner, this.#access.slots);
    if (servers !== undefined && !servers.includes(address)) {
      this.#forget(lost);
      this.#onEvent(
        'node-back',
        `slots ${slots} are served by ${servers.join(', ')} now, no longer by ${address}: a failover ` +
          `happened, ${secondsSince(lost.since)} s after rankd first saw the node fail. The old master ` +
          'rejoins as a replica of the new one once it is back.',
      );
      return;
    }
    // Its slots are moving (the client follows in a later round): whether it answers says nothing.
    if (ranges !== undefined && !stillServes(lost.owner, ranges)) return;
    if (!(await this.#answersOk(lost))) return;
    this.#forget(lost);
    this.#onEvent(
      'node-back',
      `node ${address} (master of slots ${slots}) serves its slots again after ${secondsSince(lost.since)} s: ` +
        'it answers, and the cluster still names it their master (no failover happened).',
    );
  }

  /** Whether `lost` answers `CLUSTER INFO` with `cluster_state:ok` within {@link PROBE_MS}; one probe at a time. */
  async #answersOk(lost: LostNode): Promise<boolean> {
    lost.probe ??= this.#access.send(lost.owner.address, ['CLUSTER', 'INFO']).then(
      (info) => String(info).includes('cluster_state:ok'),
      () => false,
    );
    const answer = await within(lost.probe, PROBE_MS);
    // Settled (either way): the next round sends a new probe. Else this one stays the one in flight.
    if (answer !== undefined) lost.probe = undefined;
    return answer === true;
  }

  /** Over once a master says `cluster_state:ok`. */
  async #checkRefusal(from: string | undefined): Promise<void> {
    const refusing = this.#refusing;
    const address = from ?? this.#access.masters().find((a) => this.#access.isConnected(a));
    if (refusing === undefined || address === undefined) return;
    const info = await within(this.#access.send(address, ['CLUSTER', 'INFO']), PROBE_MS);
    if (!String(info).includes('cluster_state:ok')) return;
    this.#refusing = undefined;
    this.#onEvent(
      'node-back',
      `the cluster serves queries again (cluster_state:ok on ${address}) after ${secondsSince(refusing.since)} s.`,
    );
  }

  #forget(lost: LostNode): void {
    if (this.#lost.get(lost.owner.address) !== lost) return;
    this.#lost.delete(lost.owner.address);
    if (lost.notAnswering !== undefined) this.#notAnswering--;
  }
}
