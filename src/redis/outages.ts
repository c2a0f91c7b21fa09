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
  if (error instanceof TimeoutError) return 'timeout';
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
