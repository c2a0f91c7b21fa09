import { resolve } from 'node:path';
import type { Config } from '../config/index.js';
import { ErrorCode } from '../errors/index.js';
import { eventRedisOf } from '../events/create-sink.js';
import { fileEvents, streamEvents, type TimedEvent } from '../events/export/event-sources.js';
import { RedisKeys } from '../redis/keys.js';
import { CliError } from './cli-error.js';

/** The events a command reads, and how to let go of what it opened for them. */
interface OpenedEvents {
  readonly source: AsyncIterable<TimedEvent>;
  readonly close: () => Promise<void>;
}

/**
 * The events between `sinceMs` and `untilMs` that `rankd events export` and `rankd train` read:
 * from the file `input` (resolved against `cwd`) when one is given, else from the project's event
 * stream, or a CLI error saying how to reach its Redis. `onUnreadable` counts entries that are
 * not events.
 */
export async function openEventSource(
  config: Config,
  cwd: string,
  input: string | undefined,
  sinceMs: number,
  untilMs: number,
  onUnreadable?: () => void,
): Promise<OpenedEvents> {
  const options = onUnreadable === undefined ? {} : { onUnreadable };
  if (input !== undefined)
    return { source: fileEvents(resolve(cwd, input), sinceMs, untilMs, options), close: async () => {} };
  const redis = eventRedisOf(config);
  const close = () => redis.close();
  if (!(await redis.waitUntilReady(config.REDIS_COMMAND_TIMEOUT_MS + 1000))) {
    await close();
    throw new CliError(
      `Redis at ${redis.address} is not answering: start it or point EVENTS_REDIS_URL (or REDIS_URL) at it`,
      ErrorCode.REDIS_UNAVAILABLE,
    );
  }
  const key = new RedisKeys(config.PROJECT_NAME, config.INDEX_VERSION).events();
  return { source: streamEvents(redis, key, sinceMs, untilMs, options), close };
}
