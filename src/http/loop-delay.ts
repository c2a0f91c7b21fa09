import { type IntervalHistogram, monitorEventLoopDelay } from 'node:perf_hooks';

/** How often Node's timer looks at the loop, ms: its samples are this much plus the delay. */
const RESOLUTION_MS = 10;

/**
 * How late the event loop runs, window by window: Node's `monitorEventLoopDelay` (a native timer
 * every 10 ms, timing how late it fires), read and reset every `windowMs`. A request waiting for
 * the loop waits about this long at each of its turns (reading its body, each Redis reply,
 * writing its answer), so it is what a cheap request feels of expensive work.
 */
export class LoopDelay {
  readonly #histogram: IntervalHistogram;
  readonly #timer: NodeJS.Timeout;
  #recentMs = 0;

  /** `onWindow` is called after each window, with the delay just measured. */
  constructor(windowMs: number, onWindow?: (delayMs: number) => void) {
    this.#histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
    this.#histogram.enable();
    this.#timer = setInterval(() => {
      this.#recentMs = this.#histogram.count === 0 ? 0 : this.#histogram.max / 1e6 - RESOLUTION_MS;
      this.#histogram.reset();
      onWindow?.(this.#recentMs);
    }, windowMs);
    // Never what keeps a process alive.
    this.#timer.unref();
  }

  /**
   * The longest the loop made a timer wait during the last whole window, in ms (0 when the loop
   * was never late). The longest rather than a percentile: one 200 ms stall is what a request
   * arriving then waits, however short the loop's other turns were.
   */
  get recentMs(): number {
    return Math.max(0, this.#recentMs);
  }

  /** Stops sampling (the server is closing). */
  close(): void {
    clearInterval(this.#timer);
    this.#histogram.disable();
  }
}
