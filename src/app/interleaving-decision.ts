import type { Config } from '../config/index.js';
import { RedisUnavailableError } from '../errors/index.js';
import { eventRedisOf } from '../events/create-sink.js';
import { streamEvents } from '../events/export/event-sources.js';
import {
  type InterleavingReport,
  type InterleavingReportOptions,
  interleavingReport,
} from '../experiments/interleaving-report.js';
import { RedisKeys } from '../redis/keys.js';

/**
 * The report of an interleaving experiment, and so its decision (`challenger_wins`,
 * `challenger_loses` or `undecided` at 95%, with the statistics), from the app's event stream:
 * what promoting a challenger by interleaving waits for. It reads only the stream, so every
 * process and every restart gets the same answer from the same events. The stream is read up to
 * `untilMs + windowMs` (never past now), so clicks on the last pages count.
 */
export async function interleavingDecision(
  config: Config,
  options: InterleavingReportOptions,
): Promise<InterleavingReport> {
  const redis = eventRedisOf(config);
  try {
    if (!(await redis.waitUntilReady(config.REDIS_COMMAND_TIMEOUT_MS + 1000)))
      throw new RedisUnavailableError(redis.address);
    const key = new RedisKeys(config.PROJECT_NAME, config.INDEX_VERSION).events();
    const readUntil = Math.min(options.untilMs + options.windowMs, Date.now());
    return await interleavingReport(streamEvents(redis, key, options.sinceMs, readUntil), options);
  } finally {
    await redis.close();
  }
}
