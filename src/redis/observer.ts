import { ErrorReply, TimeoutError } from 'redis';

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
