import { ErrorReply, MaxCommandRedirectionsError, TimeoutError } from '@redis/client';

/**
 * Why a Redis Cluster master could not serve its part of a request: its connection is down
 * (`offline`: refused, closed, the client offline), it did not answer within
 * `REDIS_COMMAND_TIMEOUT_MS` (`timeout`), the cluster refuses its slots while a failover or a
 * migration is under way (`cluster_down`: CLUSTERDOWN, TRYAGAIN, MASTERDOWN, redirections that do
 * not settle), or it is loading its data or running a script (`busy`: LOADING, BUSY).
 */
export type OutageCause = 'offline' | 'timeout' | 'cluster_down' | 'busy';

/** Every {@link OutageCause}, for metrics that show each from the start. */
export const OUTAGE_CAUSES: readonly OutageCause[] = ['offline', 'timeout', 'cluster_down', 'busy'];

const CLUSTER_DOWN_REPLY = /^(CLUSTERDOWN|TRYAGAIN|MASTERDOWN|MOVED|ASK)\b/;
const BUSY_REPLY = /^(LOADING|BUSY)\b/;

/**
 * The {@link OutageCause} of a failed command when the failure means its node cannot answer now,
 * else undefined: a bug met while building the command (TypeError, RangeError, ...) or a command
 * Redis refuses (`ERR`, `WRONGTYPE`, `NOPERM`, a wrong password, `OOM`) is no outage of a node, and
 * a request must not be answered as if a node were down when it is not.
 */
export function outageCause(error: unknown): OutageCause | undefined {
  if (error instanceof TimeoutError || error instanceof NodeNotAnsweringError) return 'timeout';
  if (error instanceof MaxCommandRedirectionsError) return 'cluster_down';
  if (error instanceof ErrorReply) {
    if (CLUSTER_DOWN_REPLY.test(error.message)) return 'cluster_down';
    return BUSY_REPLY.test(error.message) ? 'busy' : undefined;
  }
  if (!(error instanceof Error)) return undefined;
  if (
    error instanceof TypeError ||
    error instanceof RangeError ||
    error instanceof ReferenceError ||
    error instanceof SyntaxError
  )
    return undefined;
  return 'offline';
}

/** A master of a Redis Cluster that could not serve some keys of one read. */
export interface NodeOutage {
  /** `host:port` of the master the keys' slots were routed to. */
  readonly node: string;
  /** The slots it serves in the slot map, as ranges (`0-5460`, `0-99,200-5460`); '' if unknown. */
  readonly slots: string;
  readonly cause: OutageCause;
  /** What the client said (`The client is offline`, `no answer within 1000 ms`, `CLUSTERDOWN ...`). */
  readonly reason: string;
  /** How many keys of the read it could not serve. */
  readonly keys: number;
}

/**
 * What a read on a Redis Cluster could not read because some masters could not answer: the
 * positions of those keys in the read (their values read as missing), and the masters, each once.
 */
export interface UnreadKeys {
  /** Positions, in the read's keys, of the keys not read; in order. */
  readonly indexes: readonly number[];
  readonly outages: readonly NodeOutage[];
}

/** `0-5460,10923`: slot ranges as Redis prints them, a single slot without a dash. */
export function formatSlotRanges(ranges: ReadonlyArray<readonly [from: number, to: number]>): string {
  return ranges.map(([from, to]) => (from === to ? String(from) : `${from}-${to}`)).join(',');
}

/**
 * A command not sent, because its node did not answer one within `REDIS_COMMAND_TIMEOUT_MS` and
 * has not answered a probe since: the node is treated as down for its slots (its outage's cause
 * stays `timeout`) until it answers again or a replica has taken its slots over, so that requests
 * stop waiting for the same timeout one after the other. Not a node-redis `TimeoutError`: nothing
 * waited, so the metrics count it as `unavailable`, not as a timeout.
 */
export class NodeNotAnsweringError extends Error {
  constructor(timeoutMs: number) {
    super(
      `no answer within ${timeoutMs} ms; rankd sends the node nothing until it answers again or a ` +
        'replica has taken its slots over',
    );
    this.name = 'NodeNotAnsweringError';
  }
}

const WHOLE_CLUSTER_DOWN_REPLY = /^CLUSTERDOWN The cluster is down\b/;

/**
 * Whether `error` is a node saying that the whole cluster refuses queries (`CLUSTERDOWN The
 * cluster is down`: its state is `fail`, so with `cluster-require-full-coverage yes` it refuses
 * every slot), rather than that one slot or one node cannot serve (`CLUSTERDOWN Hash slot not
 * served`, `TRYAGAIN`, a timeout): the cluster's outage, not the node's.
 */
export function refusesWholeCluster(error: unknown): boolean {
  return error instanceof ErrorReply && WHOLE_CLUSTER_DOWN_REPLY.test(error.message);
}
