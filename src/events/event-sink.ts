import { RedisOutOfMemoryError } from '../errors/index.js';
import { type EventRecord, recordOf, recordsOf } from './event-record.js';
import { EventBudgetFullError, type EventWriter } from './event-writer.js';
import type { EventPolicy, RankdEvent, RequestEvents } from './recorder.js';

/**
 * What a sink did since it started; `written + dropped + pending` is every event it was given.
 */
export interface EventSinkStats {
  /** Events written to the sink. */
  readonly written: number;
  /** Events lost: no room in the buffer, a failed batch, or not written by the end of the close wait. */
  readonly dropped: number;
  /** Writes that failed (their events are counted in `dropped`). */
  readonly failedBatches: number;
  /** Events waiting in the buffer. */
  readonly pending: number;
}

/**
 * Why events were dropped: `buffer_full` (the sink was slow or down, or closed), `redis_oom` (the
 * event Redis refused the batch for memory), `write_failed` (any other failed batch), `not_json`
 * (a custom event that is not JSON), `closing` (still waiting at the end of the close wait),
 * `over_budget` (no room within the stream's memory budget, once trimmed: see event-budget.ts).
 */
type DropReason = 'buffer_full' | 'redis_oom' | 'write_failed' | 'not_json' | 'closing' | 'over_budget';

/** Every {@link DropReason}, in the order metrics list them. */
export const DROP_REASONS: readonly DropReason[] = [
  'buffer_full',
  'redis_oom',
  'write_failed',
  'not_json',
  'closing',
  'over_budget',
];

/** How a sink buffers and batches. */
export interface EventSinkOptions {
  readonly writer: EventWriter;
  /** Which events requests send to it. */
  readonly policy: EventPolicy;
  /** Most events waiting; a request's events that do not fit are dropped. */
  readonly bufferMax: number;
  /** Most events per write (whole requests: a larger request is written alone); this many waiting triggers a write. */
  readonly batchSize: number;
  /** Waiting events are written at least this often, in ms. */
  readonly flushIntervalMs: number;
  /** Longest wait in `close()` for waiting events to be written, in ms. */
  readonly closeTimeoutMs: number;
  /**
   * Told when writes start failing (once per episode, not per batch: again only after a batch was
   * written).
   */
  readonly onWriteFailure?: (error: unknown) => void;
  /** Told when writes succeed again after failing, with the events dropped meanwhile. */
  readonly onWriteRecovery?: (dropped: number) => void;
}

/**
 * Takes events off the request path: a request hands its events over after its response is sent
 * (`enqueue` serialises them into one record and appends it to a bounded buffer: strings, not
 * objects that would live on into the old generation), and a background flusher writes records in
 * batches — when `batchSize` events are waiting, and every `flushIntervalMs` — one batch at a time.
 * A slow or unreachable sink makes the buffer fill, then new events are dropped and counted:
 * memory stays bounded and no request ever waits for, or fails because of, the sink.
 *
 * @example
 * ```ts
 * import { buildServer, type EventSink } from 'rankd/server';
 * import app from './pipelines/main.js';
 *
 * const server = await buildServer({ app });
 * const sink: EventSink = server.rankd.events;
 * await sink.flush(); // writes what is waiting, e.g. before a test reads the stream
 * console.log(sink.stats());
 * ```
 */
export class EventSink {
  readonly policy: EventPolicy;
  readonly #options: EventSinkOptions;
  readonly #writer: EventWriter;
  readonly #timer: NodeJS.Timeout;
  /** Waiting records, oldest first. */
  #records: EventRecord[] = [];
  #pending = 0;
  #written = 0;
  #dropped = 0;
  /** Drops by reason: six counters, not an entry per request. */
  readonly #droppedBy: Record<DropReason, number> = {
    buffer_full: 0,
    redis_oom: 0,
    write_failed: 0,
    not_json: 0,
    closing: 0,
    over_budget: 0,
  };
  /** Events dropped since writes started failing, for the recovery message. */
  #droppedWhileFailing = 0;
  #failedBatches = 0;
  #failing = false;
  #closed = false;
  #flushing: Promise<void> | undefined;
  #scheduled = false;

  constructor(options: EventSinkOptions) {
    this.#options = options;
    this.#writer = options.writer;
    this.policy = options.policy;
    this.#timer = setInterval(() => void this.#drain(), options.flushIntervalMs);
    // A sink must never keep a process alive by itself.
    this.#timer.unref();
  }

  /** `redis`, `file` or `off`. */
  get kind(): EventWriter['kind'] {
    return this.#writer.kind;
  }

  /**
   * Queues one request's events for writing; never waits, never throws. All or none: a request
   * whose events do not fit in the buffer loses them all, so no request is half logged.
   */
  enqueue(batch: RequestEvents): void {
    // An app's custom event that is not JSON (a BigInt, a cycle) is lost alone, not its request.
    if (batch.failed > 0) this.#drop('not_json', batch.failed);
    const size = batch.events.length;
    if (size === 0) return;
    if (this.#closed || this.#pending + size > this.#options.bufferMax) {
      this.#drop('buffer_full', size);
      return;
    }
    const record = recordOf(batch);
    if (record === undefined) return;
    this.#records.push(record);
    this.#pending += record.count;
    if (this.#pending >= this.#options.batchSize && !this.#scheduled && this.#flushing === undefined) {
      this.#scheduled = true;
      setImmediate(() => {
        this.#scheduled = false;
        void this.#drain();
      });
    }
  }

  /**
   * Writes events now, bypassing the buffer, and resolves once they are written (feedback: the
   * caller must know). Throws the writer's error (RedisUnavailableError, ...) when it fails.
   */
  async writeNow(events: readonly RankdEvent[]): Promise<number> {
    if (this.#writer.kind === 'off') return 0;
    const { records } = recordsOf(events);
    await this.#writer.write(records);
    const count = records.reduce((sum, r) => sum + r.count, 0);
    this.#written += count;
    return count;
  }

  /** Writes every waiting event now (as far as the sink takes them); for tests and tools. */
  async flush(): Promise<void> {
    while (this.#pending > 0 && this.#writer.ready()) {
      const before = this.#pending;
      await this.#drain();
      if (this.#pending >= before) break;
    }
    await this.#flushing;
  }

  /** Counters for metrics and tests. */
  stats(): EventSinkStats {
    return {
      written: this.#written,
      dropped: this.#dropped,
      failedBatches: this.#failedBatches,
      pending: this.#pending,
    };
  }

  /** Events dropped so far, by reason; they add up to `stats().dropped`. A copy. */
  droppedBy(): Record<DropReason, number> {
    return { ...this.#droppedBy };
  }

  /**
   * Stops the flusher, writes what is waiting (for at most `closeTimeoutMs`), counts the rest as
   * dropped, and closes the writer. Later events are dropped.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#timer);
    const deadline = Date.now() + this.#options.closeTimeoutMs;
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, Math.max(0, deadline - Date.now()));
    });
    const finished = (async () => {
      while (this.#pending > 0 && Date.now() < deadline) {
        if (this.#writer.ready()) await this.#drain();
        else await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    await Promise.race([finished, expired]);
    clearTimeout(timer);
    if (this.#pending > 0) this.#drop('closing', this.#pending);
    this.#pending = 0;
    this.#records = [];
    await this.#writer.close().catch(() => undefined);
  }

  /** Writes batches until nothing waits; one drain at a time, so batches keep their order. */
  #drain(): Promise<void> {
    if (this.#flushing !== undefined) return this.#flushing;
    if (this.#pending === 0 || !this.#writer.ready()) return Promise.resolve();
    this.#flushing = (async () => {
      try {
        while (this.#pending > 0 && this.#writer.ready()) {
          if (!(await this.#writeBatch(this.#take()))) break;
        }
      } finally {
        this.#flushing = undefined;
      }
    })();
    return this.#flushing;
  }

  async #writeBatch(batch: readonly EventRecord[]): Promise<boolean> {
    const count = batch.reduce((sum, r) => sum + r.count, 0);
    try {
      await this.#writer.write(batch);
      this.#written += count;
      if (this.#failing) this.#options.onWriteRecovery?.(this.#droppedWhileFailing);
      this.#failing = false;
      return true;
    } catch (error) {
      this.#failedBatches += 1;
      this.#drop(
        error instanceof RedisOutOfMemoryError
          ? 'redis_oom'
          : error instanceof EventBudgetFullError
            ? 'over_budget'
            : 'write_failed',
        count,
      );
      if (!this.#failing) {
        this.#droppedWhileFailing = count;
        this.#options.onWriteFailure?.(error);
      }
      this.#failing = true;
      return false;
    }
  }

  #drop(reason: DropReason, count: number): void {
    this.#dropped += count;
    this.#droppedBy[reason] += count;
    if (this.#failing) this.#droppedWhileFailing += count;
  }

  /** Takes waiting records, oldest first, up to `batchSize` events (at least one record). */
  #take(): EventRecord[] {
    let events = 0;
    let taken = 0;
    for (const record of this.#records) {
      if (taken > 0 && events + record.count > this.#options.batchSize) break;
      events += record.count;
      taken += 1;
    }
    this.#pending -= events;
    return this.#records.splice(0, taken);
  }
}
