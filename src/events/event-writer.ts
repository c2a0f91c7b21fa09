import { type FileHandle, open } from 'node:fs/promises';
import { EventSinkUnavailableError } from '../errors/index.js';
import type { RedisConnection } from '../redis/connection.js';
import { type EventRecord, recordFields, recordJson } from './event-record.js';

/** Where event records end up: a Redis stream, a file, or nowhere. */
export interface EventWriter {
  readonly kind: 'redis' | 'file' | 'off';
  /** Whether a write can be tried now; while not, the sink keeps records in its buffer. */
  ready(): boolean;
  /** Writes records, all of them or none. */
  write(records: readonly EventRecord[]): Promise<void>;
  close(): Promise<void>;
}

/**
 * Appends to the `{PROJECT_NAME}:events` stream, one entry per record (a request's events). Owns
 * its connection, so event batches never queue behind (or in front of) a request's reads on the
 * server's connection.
 *
 * `EVENTS_STREAM_MAXLEN` counts events, which is what bounds Redis memory, while MAXLEN counts
 * entries; the cap is converted with the mean number of events per record written so far.
 */
export class RedisStreamWriter implements EventWriter {
  readonly kind = 'redis';
  readonly #redis: RedisConnection;
  readonly #key: string;
  readonly #maxEvents: number;
  #records = 0;
  #events = 0;

  constructor(redis: RedisConnection, key: string, maxEvents: number) {
    this.#redis = redis;
    this.#key = key;
    this.#maxEvents = maxEvents;
    redis.connect();
  }

  ready(): boolean {
    return this.#redis.isReady;
  }

  async write(records: readonly EventRecord[]): Promise<void> {
    if (records.length === 0) return;
    for (const record of records) this.#events += record.count;
    this.#records += records.length;
    const maxEntries = Math.max(1, Math.ceil((this.#maxEvents * this.#records) / this.#events));
    await this.#redis.appendToStream(this.#key, records.map(recordFields), maxEntries);
  }

  close(): Promise<void> {
    return this.#redis.close();
  }
}

/** Appends records as JSON Lines to a file (`EVENTS_SINK=file`), opened on first write. */
export class FileEventWriter implements EventWriter {
  readonly kind = 'file';
  readonly #path: string;
  #handle: Promise<FileHandle> | undefined;

  constructor(path: string) {
    this.#path = path;
  }

  ready(): boolean {
    return true;
  }

  async write(records: readonly EventRecord[]): Promise<void> {
    if (records.length === 0) return;
    try {
      this.#handle ??= open(this.#path, 'a');
      // One write per batch: whole lines, never interleaved with another batch's.
      await (await this.#handle).write(`${records.map(recordJson).join('\n')}\n`);
    } catch (error) {
      // Reopened on the next batch: the file may have been moved away or the disk freed since.
      const broken = this.#handle;
      this.#handle = undefined;
      broken?.then((h) => h.close()).catch(() => undefined);
      throw new EventSinkUnavailableError(`the event file ${this.#path}`, error);
    }
  }

  async close(): Promise<void> {
    const handle = this.#handle;
    this.#handle = undefined;
    if (handle) await (await handle).close();
  }
}

/** `EVENTS_SINK=off`: accepts everything, keeps nothing. */
export class NullEventWriter implements EventWriter {
  readonly kind = 'off';
  ready(): boolean {
    return true;
  }
  async write(): Promise<void> {}
  async close(): Promise<void> {}
}
