import { TimeoutError } from 'redis';

interface Pending {
  readonly at: number;
  readonly reject: (error: Error) => void;
}

/**
 * Fails operations that outlive a fixed time. One timer serves every operation in flight rather
 * than a timer (or an `AbortSignal.timeout`) each: on the request path that per-command timer was
 * a measurable share of a ranking request's CPU. Since every operation gets the same time,
 * operations expire in the order they started, so a sweep stops at the first one still in time.
 * An operation fails within `ms` plus one tick (an eighth of `ms`, at most 250 ms).
 */
export class Deadlines {
  readonly #ms: number;
  readonly #tickMs: number;
  /** In start order, which is also expiry order. */
  readonly #pending = new Set<Pending>();
  #timer: NodeJS.Timeout | undefined;

  constructor(ms: number) {
    this.#ms = ms;
    this.#tickMs = Math.max(1, Math.min(250, Math.ceil(ms / 8)));
  }

  /** `operation`, or a `TimeoutError` once it has run too long (it may still settle later, unheard). */
  within<T>(operation: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const entry: Pending = { at: performance.now() + this.#ms, reject };
      this.#pending.add(entry);
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

  #settled(entry: Pending): void {
    this.#pending.delete(entry);
    // Nothing left to watch: no timer may keep the process alive (or tick) for nothing.
    if (this.#pending.size === 0 && this.#timer !== undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
  }

  #sweep(): void {
    this.#timer = undefined;
    const now = performance.now();
    for (const entry of this.#pending) {
      if (entry.at > now) break;
      this.#pending.delete(entry);
      entry.reject(new TimeoutError(`no answer within ${this.#ms} ms`));
    }
    if (this.#pending.size > 0) this.#timer = setTimeout(() => this.#sweep(), this.#tickMs);
  }
}
