import { Worker } from 'node:worker_threads';
import { InFlightRequests } from './in-flight-requests.js';

/** What the watchdog thread is started with (its `workerData`). */
export interface WatchdogThreadData {
  /** One BigInt64: `process.hrtime.bigint()` at the main thread's last beat. */
  readonly heartbeat: SharedArrayBuffer;
  /** The {@link InFlightRequests} buffer. */
  readonly requests: SharedArrayBuffer;
  readonly timeoutMs: number;
  /** How often the thread looks at the heartbeat. */
  readonly checkMs: number;
  /** The setting's name, for the log line. */
  readonly setting: string;
}

/** How a {@link LoopWatchdog} runs. */
interface LoopWatchdogOptions {
  /** Longest time the event loop may go without running before the process is ended, in ms (> 0). */
  timeoutMs: number;
  /** Requests listed in the fatal line at most (others are counted). @defaultValue `256` */
  slots?: number;
  /** Told when the watchdog thread fails (it then no longer watches; the server keeps serving). */
  onError?: (error: Error) => void;
}

/** The watchdog thread's module, next to this one: `.js` once built, `.ts` when run from source. */
const THREAD_MODULE = new URL(
  import.meta.url.endsWith('.ts') ? './loop-watchdog-thread.ts' : './loop-watchdog-thread.js',
  import.meta.url,
);

/**
 * Ends the process when its event loop stops running, which nothing inside the loop can do:
 * timers, signal handlers and `/healthcheck` all wait for it. The main thread writes a heartbeat
 * into shared memory from a timer; a `worker_threads` thread (`loop-watchdog-thread.ts`) checks
 * it and, when it is older than `timeoutMs`, writes one fatal log line to stderr naming the
 * requests in flight ({@link requests}, recorded by `installInFlightRecording`) and SIGKILLs the
 * process, so that a supervisor (the `--workers` primary, systemd, Kubernetes) starts a fresh one.
 * Costs a thread (a few MB) per process and a timer tick a few times a second.
 */
export class LoopWatchdog {
  /** Where the server records its requests in flight for the fatal line. */
  readonly requests: InFlightRequests;
  readonly #options: LoopWatchdogOptions;
  readonly #heartbeat = new SharedArrayBuffer(8);
  readonly #beat = new BigInt64Array(this.#heartbeat);
  readonly #beatMs: number;
  #timer: NodeJS.Timeout | undefined;
  #thread: Worker | undefined;

  constructor(options: LoopWatchdogOptions) {
    if (!(options.timeoutMs > 0)) throw new RangeError(`timeoutMs must be positive: ${options.timeoutMs}`);
    this.#options = options;
    this.requests = new InFlightRequests(options.slots);
    // Often enough that a beat is never much older than the loop's last turn; never more than
    // twice a second, which costs nothing.
    this.#beatMs = Math.max(10, Math.min(500, Math.floor(options.timeoutMs / 4)));
  }

  /**
   * Starts beating and watching; call once the server listens (loading models before that may
   * legitimately keep the loop busy for long). A second call does nothing.
   */
  start(): void {
    if (this.#timer !== undefined) return;
    this.#beatNow();
    this.#timer = setInterval(() => this.#beatNow(), this.#beatMs);
    // The watchdog never keeps a process alive that would otherwise exit.
    this.#timer.unref();
    const data: WatchdogThreadData = {
      heartbeat: this.#heartbeat,
      requests: this.requests.buffer,
      timeoutMs: this.#options.timeoutMs,
      checkMs: this.#beatMs,
      setting: 'SHUTDOWN_TIMEOUT_MS',
    };
    const thread = THREAD_MODULE.pathname.endsWith('.ts')
      ? // From source (tests, `npm start`): worker threads do not inherit tsx's loader on Node 20,
        // so the thread registers it itself. Built, the module is plain JavaScript.
        new Worker(
          `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((api) => api.tsImport(${JSON.stringify(THREAD_MODULE.href)}, ${JSON.stringify(import.meta.url)}))`,
          { eval: true, workerData: data },
        )
      : new Worker(THREAD_MODULE, { workerData: data });
    thread.unref();
    thread.on('error', (error: Error) => {
      this.#thread = undefined;
      this.#options.onError?.(error);
    });
    this.#thread = thread;
  }

  /** Stops watching (the server has closed); resolves once the thread is gone. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    const thread = this.#thread;
    this.#thread = undefined;
    await thread?.terminate();
  }

  #beatNow(): void {
    Atomics.store(this.#beat, 0, process.hrtime.bigint());
  }
}
