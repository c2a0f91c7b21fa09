import { TimeoutError } from '@redis/client';

/** An operation in flight, linked to the ones started just before and after it. */
interface Pending {
  readonly at: number;
  readonly reject: (error: Error) => void;
  previous: Pending | undefined;
  next: Pending | undefined;
}

/**
 * Fails operations that outlive a fixed time. One timer serves every operation in flight rather
 * than a timer (or an `AbortSignal.timeout`) each, which made garbage per command (DR-008). Since every operation gets the same time,
 * operations expire in the order they started, so a sweep stops at the first one still in time.
 * An operation fails within `ms` plus one tick (an eighth of `ms`, at most 250 ms).
 *
 * The operations in flight are a linked list, not a `Set`: a `Set`'s entries kept every request
 * alive long enough to be promoted out of the young generation (DR-009).
 */
export class Deadlines {
  readonly #ms: number;
  readonly #tickMs: number;
  /** The oldest operation in flight: the first to expire. */
  #first: Pending | undefined;
  /** The newest operation in flight. */
  #last: Pending | undefined;
  #timer: NodeJS.Timeout | undefined;

  constructor(ms: number) {
    this.#ms = ms;
    this.#tickMs = Math.max(1, Math.min(250, Math.ceil(ms / 8)));
  }

  /** `operation`, or a `TimeoutError` once it has run too long (it may still settle later, unheard). */
  within<T>(operation: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const entry: Pending = {
        at: performance.now() + this.#ms,
        reject,
        previous: this.#last,
        next: undefined,
      };
      if (this.#last === undefined) this.#first = entry;
      else this.#last.next = entry;
      this.#last = entry;
      this.#timer ??= setTimeout(() => this.#sweep(), this.#tickMs);
      operation.then(
        (value) => {
          this.#settled(entry);
          resolve(value);
        },
        (error: unknown) => {
          this.#settled(entry);
          reject(error);
        },
      );
    });
  }

  /** Takes `entry` out of the list; nothing if it is out already (failed by a sweep, then settled). */
  #remove(entry: Pending): void {
    const { previous, next } = entry;
    if (previous !== undefined) previous.next = next;
    else if (this.#first === entry) this.#first = next;
    else return;
    if (next !== undefined) next.previous = previous;
    else this.#last = previous;
    entry.previous = undefined;
    entry.next = undefined;
  }

  #settled(entry: Pending): void {
    this.#remove(entry);
    // Nothing left to watch: no timer may keep the process alive (or tick) for nothing.
    if (this.#first === undefined && this.#timer !== undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
  }

  #sweep(): void {
    this.#timer = undefined;
    const now = performance.now();
    for (let entry = this.#first; entry !== undefined && entry.at <= now; entry = this.#first) {
      this.#remove(entry);
      entry.reject(new TimeoutError(`no answer within ${this.#ms} ms`));
    }
    if (this.#first !== undefined) this.#timer = setTimeout(() => this.#sweep(), this.#tickMs);
  }
}
