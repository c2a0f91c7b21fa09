import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import type { RedisConnection } from '../../redis/connection.js';
import { eventsOfRecord } from '../event-record.js';
import type { RankdEvent } from '../recorder.js';

/** An event with the time it reached the sink (ms since the epoch). */
export interface TimedEvent {
  readonly timeMs: number;
  readonly event: RankdEvent;
}

/** Where a source reports entries it cannot read (not JSON, no event), which are skipped. */
type OnUnreadable = (where: string) => void;

function parseLine(text: string): RankdEvent[] | undefined {
  try {
    const value = JSON.parse(text) as unknown;
    return typeof value === 'object' && value !== null
      ? eventsOfRecord(value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The events of stream `key` that reached it from `fromMs` to `toMs` (inclusive), in stream
 * order, read with XRANGE in pages of `pageSize` entries, each page starting after the last id
 * read: constant memory, whatever the stream's length.
 */
export async function* streamEvents(
  redis: RedisConnection,
  key: string,
  fromMs: number,
  toMs: number,
  options: { pageSize?: number; onUnreadable?: OnUnreadable } = {},
): AsyncGenerator<TimedEvent> {
  const pageSize = options.pageSize ?? 1000;
  let start = `${Math.max(0, Math.floor(fromMs))}-0`;
  // An end id without its sequence part means the last entry of that millisecond.
  const end = String(Math.floor(toMs));
  for (;;) {
    const page = await redis.readStream(key, start, end, pageSize);
    for (const { id, fields } of page) {
      const events = eventsOfRecord(fields);
      const timeMs = Number(id.slice(0, id.indexOf('-')));
      if (events === undefined) options.onUnreadable?.(`stream entry ${id}`);
      else for (const event of events) yield { timeMs, event };
    }
    if (page.length < pageSize) return;
    start = `(${page[page.length - 1]?.id}`;
  }
}

/**
 * The events of a JSON Lines file written by `EVENTS_SINK=file` (one record per line), in file
 * order, timed by their `event_timestamp` (the file has no arrival times); only those from
 * `fromMs` to `toMs`.
 */
export async function* fileEvents(
  path: string,
  fromMs: number,
  toMs: number,
  options: { onUnreadable?: OnUnreadable } = {},
): AsyncGenerator<TimedEvent> {
  const lines = createInterface({ input: createReadStream(path), crlfDelay: Number.POSITIVE_INFINITY });
  let number = 0;
  for await (const line of lines) {
    number += 1;
    if (line.trim().length === 0) continue;
    const events = parseLine(line);
    const timeMs = events?.[0] ? Date.parse(events[0].event_timestamp) : Number.NaN;
    if (events === undefined || Number.isNaN(timeMs)) options.onUnreadable?.(`line ${number}`);
    else if (timeMs >= fromMs && timeMs <= toMs) for (const event of events) yield { timeMs, event };
  }
}
