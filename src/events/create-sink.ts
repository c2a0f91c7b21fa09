import { resolve } from 'node:path';
import { type Config, eventsFileOf, redisUrlOf } from '../config/index.js';
import { RedisOutOfMemoryError } from '../errors/index.js';
import { type EventJson, FAST_EVENT_JSON } from '../fast-paths/event-json.js';
import { RedisConnection } from '../redis/connection.js';
import type { RedisKeys } from '../redis/keys.js';
import { budgetSentence } from './event-budget.js';
import { EventSink, type EventSinkOptions } from './event-sink.js';
import {
  EventBudgetFullError,
  type EventWriter,
  FileEventWriter,
  NullEventWriter,
  RedisStreamWriter,
} from './event-writer.js';
import { EventPolicy } from './recorder.js';

/** Where a sink reports trouble; the server passes its logger. */
interface SinkLog {
  warn(message: string): void;
  info(message: string): void;
}

/**
 * The Redis connection of the event stream, a connection of its own: to `EVENTS_REDIS_URL`, else
 * to the main Redis (or Redis Cluster).
 */
export function eventRedisOf(config: Config, log?: SinkLog, onReady?: () => void): RedisConnection {
  return new RedisConnection({
    url: config.EVENTS_REDIS_URL ?? redisUrlOf(config),
    clusterNodes: config.EVENTS_REDIS_URL === undefined ? config.REDIS_CLUSTER_NODES : [],
    connectTimeoutMs: config.REDIS_COMMAND_TIMEOUT_MS,
    commandTimeoutMs: config.REDIS_COMMAND_TIMEOUT_MS,
    ...(log === undefined
      ? {}
      : {
          onStateChange: (event: 'ready' | 'lost', detail: string) => {
            if (event === 'lost')
              log.warn(
                `Event stream Redis unavailable (${detail}); events wait in the buffer, then are dropped`,
              );
            else {
              // A cluster's detail is a sentence (connected ..., a failover ...), a single Redis's its address.
              log.info(
                config.EVENTS_REDIS_URL === undefined && config.REDIS_CLUSTER_NODES.length > 0
                  ? `Event stream Redis Cluster: ${detail}`
                  : `Event stream Redis connected at ${detail}`,
              );
              onReady?.();
            }
          },
        }),
  });
}

/** How long the stream keeps an entry beside the index. */
const DAY_MS = 24 * 60 * 60 * 1000;

/** How long the stream keeps events: a day beside the index; no age limit in a Redis of its own (0). */
export function streamMaxAgeMs(config: Config): number {
  return config.EVENTS_REDIS_URL !== undefined ? 0 : DAY_MS;
}

/** With `EVENTS_FEATURES=shown`, the share of requests that log every candidate's features. */
const SHOWN_SAMPLE_RATE = 0.01;

/** How a sink buffers and batches (see {@link EventSinkOptions}). */
export type EventBuffering = Pick<
  EventSinkOptions,
  'bufferMax' | 'batchSize' | 'flushIntervalMs' | 'closeTimeoutMs'
>;

/**
 * How the server's sink buffers: room for 100,000 waiting events (then a request's events are
 * dropped and counted, so a slow or unreachable sink never grows memory), writes of up to 1000,
 * at least every 50 ms, and 2 s on close for the last ones.
 */
export const SINK_BUFFERING: EventBuffering = {
  bufferMax: 100_000,
  batchSize: 1000,
  flushIntervalMs: 50,
  closeTimeoutMs: 2000,
};

/**
 * The sink `EVENTS_SINK` names, buffering as {@link SINK_BUFFERING} unless `buffering` says otherwise;
 * its policy writes the pipelines' events with `json` (the server's choice, `FAST_PATHS`).
 */
export function createEventSink(
  config: Config,
  keys: RedisKeys,
  log?: SinkLog,
  cwd = process.cwd(),
  buffering: Partial<EventBuffering> = {},
  json: EventJson = FAST_EVENT_JSON,
): EventSink {
  let writer: EventWriter;
  if (config.EVENTS_SINK === 'redis') {
    // Beside the index, the stream is a small guest: a quarter of maxmemory, a day of requests (no
    // request or user id kept longer). A Redis of its own is the stream's, kept for training.
    const ownRedis = config.EVENTS_REDIS_URL !== undefined;
    const caps = {
      maxBytes: config.EVENTS_STREAM_MAX_BYTES,
      maxAgeMs: streamMaxAgeMs(config),
      maxmemoryShare: ownRedis ? 1 : 0.25,
    };
    let stream: RedisStreamWriter | undefined;
    // Read Redis's maxmemory once connected (and after each reconnection): the budget is said at start.
    const redis = eventRedisOf(config, log, () => void stream?.refresh());
    stream = new RedisStreamWriter(redis, keys.events(), caps, {
      onAgeTrimFailure: (error) =>
        log?.warn(
          `The event Redis refuses XTRIM MINID (${error instanceof Error ? error.message : String(error)}): ` +
            'it is older than 6.2, so entries are not trimmed after a day; the byte budget still applies',
        ),
      onBudget: (budget) => {
        const sentence = budgetSentence(budget, caps.maxBytes, caps.maxmemoryShare);
        // Said when the cap does not fit in maxmemory (or Redis is already near it); else a note.
        if (budget.limit === 'share' || budget.limit === 'room')
          log?.warn(`Event budget: ${sentence}. Past it the stream is trimmed, then events are dropped`);
        else log?.info(`Event budget: ${sentence}`);
      },
    });
    writer = stream;
  } else {
    const file = eventsFileOf(config);
    writer = file === undefined ? new NullEventWriter() : new FileEventWriter(resolve(cwd, file));
  }
  return new EventSink({
    writer,
    policy:
      config.EVENTS_SINK === 'off'
        ? new EventPolicy([], 0, Math.random, false, json)
        : new EventPolicy(
            config.EVENTS_KINDS,
            config.EVENTS_FEATURES === 'all' ? 1 : config.EVENTS_FEATURES === 'shown' ? SHOWN_SAMPLE_RATE : 0,
            Math.random,
            config.EVENTS_FEATURES !== 'off',
            json,
          ),
    ...SINK_BUFFERING,
    ...buffering,
    ...(log === undefined
      ? {}
      : {
          onWriteFailure: (error: unknown) =>
            log.warn(
              error instanceof EventBudgetFullError
                ? `The event stream has no room within its memory budget (${error.reason}): events are ` +
                    'dropped and counted in rankd_events_dropped_total{reason="over_budget"}, never an index or ' +
                    'feature write refused, until there is room. Said once until events are written again.'
                : error instanceof RedisOutOfMemoryError
                  ? 'The event Redis is out of memory and refuses the stream (its cap already applied): ' +
                    'events are dropped and counted in rankd_events_dropped_total{reason="redis_oom"} until ' +
                    'it has room. Raise its maxmemory, set EVENTS_REDIS_URL to a Redis of its own, or lower ' +
                    'EVENTS_STREAM_MAX_BYTES (docs/guides/deploy.md). Said once until events are written again.'
                  : `Writing events failed (${error instanceof Error ? error.message : String(error)}); ` +
                    'their events are dropped and counted',
            ),
          onWriteRecovery: (dropped: number) =>
            log.info(`Events are written again; ${dropped} were dropped while writes failed`),
        }),
  });
}
