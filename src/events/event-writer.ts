import { type FileHandle, open } from 'node:fs/promises';
import { ErrorReply } from '@redis/client';
import { EventSinkUnavailableError, RedisOutOfMemoryError, RedisUnavailableError } from '../errors/index.js';
import type { RedisConnection } from '../redis/connection.js';
import { budgetSentence, type EventBudget, eventBudget } from './event-budget.js';
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

/** The event stream's budget (`EVENTS_STREAM_MAX_BYTES`), and what bounds it beside the index. */
interface StreamCaps {
  /** About how many bytes of Redis memory the stream may take; 0 = no byte cap. */
  readonly maxBytes: number;
  /** Entries older than this, in ms, are trimmed; 0 = no age cap. */
  readonly maxAgeMs: number;
  /** Share of its Redis's `maxmemory` the stream may take. */
  readonly maxmemoryShare: number;
}

/** What a stream writer tells its owner (the server logs it). */
interface StreamWriterEvents {
  /** The Redis refuses `XTRIM MINID` (older than 6.2): the age cap is off. */
  onAgeTrimFailure?(error: unknown): void;
  /** The budget was read for the first time, or Redis's `maxmemory` or what bounds the stream changed. */
  onBudget?(budget: EventBudget): void;
}

/**
 * Events refused because the stream has no room within its budget (its share of `maxmemory`, or
 * what the index leaves): the stream was trimmed first. Feedback answers 503 with it; the sink
 * counts a batch's events as dropped `over_budget`.
 */
export class EventBudgetFullError extends EventSinkUnavailableError {
  constructor(
    /** Why there is no room, in a sentence: what bounds the stream. */
    readonly reason: string,
  ) {
    super('the event stream', new Error(`no room within its memory budget: ${reason}`));
  }
}

/** Entries written between two measurements of the stream's bytes, at most (or {@link MEASURE_EVERY_MS}). */
const MEASURE_EVERY_ENTRIES = 1000;
/** Longest time between two measurements of the stream's bytes and its Redis's memory. */
const MEASURE_EVERY_MS = 10_000;
/** `MAXLEN ~` when nothing bounds the stream (no byte cap and no `maxmemory`). */
const UNBOUNDED_ENTRIES = Number.MAX_SAFE_INTEGER;
/** Shortest time between two age trims: `XTRIM MINID ~` only removes whole nodes anyway. */
const AGE_TRIM_EVERY_MS = 1000;
/**
 * Redis bytes per character of an entry's field values, before the first measurement: listpack
 * and node overhead on top of the text, 1.06 (all default kinds) to 1.19 (IMPRESSION and MODEL
 * only) measured with `MEMORY USAGE` on the template's entries; rounded up, so the guess errs low.
 */
const ESTIMATED_OVERHEAD = 1.25;

/**
 * Appends to the `{PROJECT_NAME}:events` stream, one entry per record (a request's events). Owns
 * its connection, so event batches never queue behind (or in front of) a request's reads on the
 * server's connection.
 *
 * One budget: the byte budget (see {@link eventBudget}: the byte cap, the share of `maxmemory`,
 * and what the index leaves) is converted to entries with the stream's measured bytes per entry
 * (`MEMORY USAGE` ÷ `XLEN`, read with `INFO memory` when the connection is ready, before the first
 * write, then every 1000 entries or 10 s), XADD's `MAXLEN ~`. Beside the index, entries older
 * than a day go too: an `XTRIM MINID ~` at most once a second.
 *
 * A budget too small for one entry (Redis near its `maxmemory` with other data) trims the stream
 * and refuses the batch ({@link EventBudgetFullError}); it is read again before each write until
 * there is room. A Redis out of memory refuses XADD, the very command that would trim the stream,
 * but runs XTRIM (it frees memory): the stream is trimmed to its cap, and the batch tried again once
 * if that removed anything; else the {@link RedisOutOfMemoryError} goes to the sink, which drops
 * the batch.
 */
export class RedisStreamWriter implements EventWriter {
  readonly kind = 'redis';
  readonly #redis: RedisConnection;
  readonly #key: string;
  readonly #caps: StreamCaps;
  readonly #listeners: StreamWriterEvents;
  #records = 0;
  /** Characters of the field values written, for the estimate before a measurement. */
  #chars = 0;
  #bytesPerEntry: number | undefined;
  #entriesSinceMeasure = 0;
  #measuredAt = 0;
  #ageTrimmedAt = 0;
  #ageTrimBroken = false;
  #budget: EventBudget;
  /** The last write found no room: the budget is read again before the next. */
  #full = false;
  /** Whether `INFO memory` has been read once (the first reading is always reported). */
  #memoryKnown = false;

  constructor(redis: RedisConnection, key: string, caps: StreamCaps, events: StreamWriterEvents = {}) {
    this.#redis = redis;
    this.#key = key;
    this.#caps = caps;
    this.#listeners = events;
    this.#budget = eventBudget(caps.maxBytes, caps.maxmemoryShare, undefined, 0);
    redis.connect();
  }

  ready(): boolean {
    return this.#redis.isReady;
  }

  /** The byte budget as last read. */
  get budget(): EventBudget {
    return this.#budget;
  }

  /**
   * Reads the stream's size and its Redis's memory now (the server calls it once the connection is
   * ready: the budget is known, and said when the cap does not fit, before any event is written).
   */
  async refresh(): Promise<void> {
    await this.#measure(Date.now());
  }

  /** The `MAXLEN ~` of the next write: the byte budget in entries (0: none fits). */
  get maxEntries(): number {
    let cap = UNBOUNDED_ENTRIES;
    const perEntry =
      this.#bytesPerEntry ??
      (this.#records === 0 ? undefined : (ESTIMATED_OVERHEAD * this.#chars) / this.#records);
    const bytes = this.#budget.bytes;
    if (Number.isFinite(bytes) && perEntry !== undefined && perEntry > 0)
      cap = Math.min(cap, Math.floor(bytes / perEntry));
    return Math.max(0, cap);
  }

  async write(records: readonly EventRecord[]): Promise<void> {
    if (records.length === 0) return;
    const entries = records.map(recordFields);
    for (const fields of entries)
      for (let i = 1; i < fields.length; i += 2) this.#chars += (fields[i] as string).length;
    this.#records += records.length;
    if (this.#measuredAt === 0 || this.#full) await this.#measure(Date.now());
    const maxEntries = this.maxEntries;
    if (maxEntries < 1) {
      // No room for one entry: give back what the stream holds, then refuse (trimmed first, then dropped).
      this.#full = true;
      await this.#trim(0, Date.now());
      throw new EventBudgetFullError(
        budgetSentence(this.#budget, this.#caps.maxBytes, this.#caps.maxmemoryShare),
      );
    }
    this.#full = false;
    try {
      await this.#redis.appendToStream(this.#key, entries, maxEntries);
    } catch (error) {
      if (!(error instanceof RedisOutOfMemoryError)) throw error;
      // The stream may be what filled Redis (its cap not yet measured, or just lowered): XTRIM is
      // allowed when XADD is not. A stream already within its cap frees nothing: the batch is
      // dropped, and the budget read again before the next (the index may have taken the room).
      const freed = await this.#trim(maxEntries, Date.now());
      if (freed === 0) {
        this.#full = true;
        throw error;
      }
      await this.#redis.appendToStream(this.#key, entries, maxEntries);
    }
    this.#entriesSinceMeasure += records.length;
    const now = Date.now();
    if (this.#caps.maxAgeMs > 0 && !this.#ageTrimBroken && now - this.#ageTrimmedAt >= AGE_TRIM_EVERY_MS)
      await this.#trimByAge(now);
    if (
      this.#bytesPerEntry === undefined ||
      this.#entriesSinceMeasure >= Math.min(MEASURE_EVERY_ENTRIES, Math.ceil(maxEntries / 10)) ||
      now - this.#measuredAt >= MEASURE_EVERY_MS
    )
      await this.#measure(now);
  }

  close(): Promise<void> {
    return this.#redis.close();
  }

  /** Trims to `maxEntries` and by age; how many entries went. Failures count as nothing freed. */
  async #trim(maxEntries: number, now: number): Promise<number> {
    let freed = await this.#redis.trimStream(this.#key, 'MAXLEN', String(maxEntries)).catch(() => 0);
    if (this.#caps.maxAgeMs > 0 && !this.#ageTrimBroken) freed += await this.#trimByAge(now);
    return freed;
  }

  /** `XTRIM MINID ~ <now − age>`; a Redis older than 6.2 refuses MINID: the age cap is then off, said once. */
  async #trimByAge(now: number): Promise<number> {
    this.#ageTrimmedAt = now;
    try {
      return await this.#redis.trimStream(this.#key, 'MINID', String(Math.max(0, now - this.#caps.maxAgeMs)));
    } catch (error) {
      // Only the refusal of MINID itself (`ERR syntax error` before 6.2) turns the cap off; a
      // timeout or an outage is tried again on the next write.
      if (
        error instanceof RedisUnavailableError &&
        error.cause instanceof ErrorReply &&
        /syntax error/i.test(error.cause.message)
      ) {
        this.#ageTrimBroken = true;
        this.#listeners.onAgeTrimFailure?.(error.cause);
      }
      return 0;
    }
  }

  /**
   * Bytes per entry of the stream as Redis stores them (kept as they were when the stream is empty
   * or the read fails), and the byte budget from its Redis's memory; the owner is told when
   * `maxmemory`, or what bounds the stream, changed.
   */
  async #measure(now: number): Promise<void> {
    this.#measuredAt = now;
    this.#entriesSinceMeasure = 0;
    const size = await this.#redis.streamSize(this.#key).catch(() => undefined);
    if (size === undefined) return;
    if (size.entries > 0 && size.bytes > 0) this.#bytesPerEntry = size.bytes / size.entries;
    const before = this.#budget;
    const first = this.#memoryKnown === false;
    this.#memoryKnown = true;
    this.#budget = eventBudget(this.#caps.maxBytes, this.#caps.maxmemoryShare, size.memory, size.bytes);
    if (first || before.maxmemory !== this.#budget.maxmemory || before.limit !== this.#budget.limit)
      this.#listeners.onBudget?.(this.#budget);
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
