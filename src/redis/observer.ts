import { ErrorReply, TimeoutError } from '@redis/client';

/**
 * How a command failed: it timed out (`REDIS_COMMAND_TIMEOUT_MS`), Redis was not reachable
 * (refused, disconnected, closed), or Redis answered with an error reply.
 */
export type RedisErrorKind = 'timeout' | 'unavailable' | 'reply';

/** Watches the commands of a RedisConnection (the server's metrics); kept free of any metrics library. */
export interface RedisObserver {
  /** `command` (lower case, e.g. `mget`; a MULTI/EXEC as `multi_set`) finished or failed after `seconds`. */
  commandDone(command: string, seconds: number): void;
  /** `command` failed; called after `commandDone`. */
  commandFailed(command: string, kind: RedisErrorKind): void;
}

/** Which {@link RedisErrorKind} a node-redis failure is. */
export function redisErrorKind(error: unknown): RedisErrorKind {
  if (error instanceof TimeoutError) return 'timeout';
  if (error instanceof ErrorReply) return 'reply';
  return 'unavailable';
}

/**
 * Error replies that mean Redis cannot serve the command now (loading, busy, a cluster without a
 * quorum or mid-failover, a replica, out of memory) rather than that rankd sent a command it should
 * not have (`ERR ... out of range`, `WRONGTYPE`): only the former are an outage.
 */
const OUTAGE_REPLY =
  /^(LOADING|BUSY|CLUSTERDOWN|TRYAGAIN|MASTERDOWN|READONLY|NOREPLICAS|MOVED|ASK|OOM|NOAUTH|WRONGPASS|NOPERM)\b/;

/**
 * Whether `error`, thrown inside a Redis operation, means Redis is unavailable (a 503): a timeout,
 * a connection failure (node-redis's errors, socket errors, the cluster client's own), or an
 * outage reply. A bug met on the way — a TypeError while building a command, a RangeError while
 * encoding, an error reply to a command Redis rejects — is not: answering it with "Redis is not
 * available" would send operators after a healthy Redis, so it surfaces as what it is.
 */
export function isRedisOutage(error: unknown): boolean {
  if (error instanceof ErrorReply) return OUTAGE_REPLY.test(error.message);
  if (!(error instanceof Error)) return false;
  return !(
    error instanceof TypeError ||
    error instanceof RangeError ||
    error instanceof ReferenceError ||
    error instanceof SyntaxError
  );
}
