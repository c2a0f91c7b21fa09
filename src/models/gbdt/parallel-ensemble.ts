import { defaultModelThreads } from '../model-threads.js';
import {
  inputArray,
  inputBytes,
  type LayoutInput,
  type LayoutSums,
  shareLayout,
  stepsPerRow,
  sumsArray,
  sumsBytes,
} from './flat-layout.js';
import { jobDone, newControl, type ParallelJob, workOn } from './parallel-job.js';
import { ParallelPool } from './parallel-pool.js';
import type { TreeEnsemble } from './tree-ensemble.js';

type MaybePromise<T> = T | Promise<T>;

/**
 * Batches of fewer tree steps (rows × the sum of the trees' depths) than this are scored on the
 * calling thread alone. Posting a job and waking a worker costs tens of microseconds; at about
 * 1.5 ns per step this is ~0.4 ms of work, where splitting starts to pay on a loaded machine.
 */
export const DEFAULT_MIN_PARALLEL_STEPS = 250_000;

/** Chunks per thread: enough that a late or descheduled thread leaves its share to the others. */
const CHUNKS_PER_THREAD = 2;

/** Most idle batch buffers kept for reuse. */
const SPARE_BUFFERS = 4;

/** How a {@link ParallelEnsemble} splits batches. */
export interface ParallelEnsembleOptions {
  /** Threads that score a batch, the calling one included; 1 never splits. @defaultValue `defaultModelThreads()` */
  readonly threads?: number;
  /** Smallest batch split, in tree steps (see {@link DEFAULT_MIN_PARALLEL_STEPS}). */
  readonly minParallelSteps?: number;
  /** Told (once) when a worker fails and the model falls back to the calling thread. */
  readonly onFailure?: (reason: string) => void;
}

/** Counts of how batches were scored, for tests and benchmarks. */
export interface ParallelStats {
  /** Batches split between threads. */
  parallel: number;
  /** Batches scored on the calling thread alone (small, `threads: 1`, or after a failure). */
  single: number;
  /** Split batches scored again on the calling thread because a worker failed under them. */
  recomputed: number;
}

/** Shared input and sums of one batch in flight, kept for the next batch once it is done. */
interface BatchBuffers {
  readonly rows: number;
  readonly input: LayoutInput;
  readonly acc: LayoutSums;
}

/**
 * A {@link TreeEnsemble} whose big batches are split by rows between the calling thread and
 * worker threads, like onnxruntime's intra-op threads. Results are the single-threaded ones bit
 * for bit: a row is summed by one thread, its trees in order. The trees go to shared memory once,
 * when the first batch big enough is scored (a model that never sees one never starts a thread);
 * a batch's derived input and sums are shared memory too, so a batch sends no copies.
 *
 * The calling thread takes chunks like the workers, so a split batch costs its caller about
 * 1 / threads of the work and then a wait that does not block the event loop. A failed worker
 * stops the splitting: from then on every batch is scored on the calling thread (and a batch in
 * flight is scored again there), and `onFailure` is told why.
 */
export class ParallelEnsemble {
  readonly ensemble: TreeEnsemble;
  /** Threads used for a big batch, the calling one included. */
  readonly threads: number;
  readonly minParallelSteps: number;
  readonly stats: ParallelStats = { parallel: 0, single: 0, recomputed: 0 };
  readonly #stepsPerRow: number;
  readonly #onFailure: (reason: string) => void;
  #pool: ParallelPool | undefined;
  #closed = false;
  #spare: BatchBuffers[] = [];

  constructor(ensemble: TreeEnsemble, options: ParallelEnsembleOptions = {}) {
    const threads = options.threads ?? defaultModelThreads();
    if (!Number.isInteger(threads) || threads < 1) {
      throw new RangeError(`threads must be a whole number ≥ 1, not ${threads}`);
    }
    this.ensemble = ensemble;
    this.threads = threads;
    this.minParallelSteps = options.minParallelSteps ?? DEFAULT_MIN_PARALLEL_STEPS;
    this.#stepsPerRow = stepsPerRow(ensemble.flat);
    this.#onFailure = options.onFailure ?? (() => undefined);
  }

  /** Whether a batch of `rows` rows would be split (when the workers are healthy). */
  splits(rows: number): boolean {
    return this.threads > 1 && rows > 8 && rows * this.#stepsPerRow >= this.minParallelSteps;
  }

  /** The worker threads, once started: tests stop one to check the fallback. */
  get pool(): ParallelPool | undefined {
    return this.#pool;
  }

  /** Starts the worker threads now rather than at the first big batch (benchmarks warm up with it). */
  start(): void {
    if (this.threads > 1 && !this.#closed) this.#startPool();
  }

  /** {@link TreeEnsemble.predict}, with big batches split between threads. */
  predict(matrix: Float64Array, rows: number, cols: number): MaybePromise<Float64Array> {
    const margins = this.predictMargin(matrix, rows, cols);
    return margins instanceof Promise
      ? margins.then((m) => this.ensemble.transformMargins(m, rows))
      : this.ensemble.transformMargins(margins, rows);
  }

  /** {@link TreeEnsemble.predictMargin}, with big batches split between threads. */
  predictMargin(matrix: Float64Array, rows: number, cols: number): MaybePromise<Float64Array> {
    const pool = this.splits(rows) && !this.#closed ? this.#startPool() : undefined;
    if (pool === undefined || !pool.open) {
      this.stats.single++;
      return this.ensemble.predictMargin(matrix, rows, cols);
    }
    const ensemble = this.ensemble;
    const buffers = this.#takeBuffers(rows);
    // Checks the batch (throwing before anything is posted) and fills the shared input.
    ensemble.startBatch(matrix, rows, cols, buffers.input, buffers.acc);
    const chunks = Math.min(Math.ceil(rows / 8), this.threads * CHUNKS_PER_THREAD);
    const chunkRows = Math.ceil(rows / chunks / 8) * 8;
    const job: ParallelJob = {
      id: pool.nextId(),
      control: newControl(),
      input: buffers.input,
      acc: buffers.acc,
      width: ensemble.inputWidth,
      rows,
      chunkRows,
      chunks: Math.ceil(rows / chunkRows),
    };
    this.stats.parallel++;
    pool.post(job);
    workOn(ensemble.flat, job);
    const finish = (completed: boolean): Float64Array => {
      if (!completed) {
        // A worker died holding a chunk, and may still be writing into these buffers: they are
        // dropped, and the caller's own rows scored again on this thread.
        this.stats.recomputed++;
        return ensemble.predictMargin(matrix, rows, cols);
      }
      const result = new Float64Array(rows);
      ensemble.finishBatch(buffers.acc, rows, result);
      if (this.#spare.length < SPARE_BUFFERS) this.#spare.push(buffers);
      return result;
    };
    // Done already when this thread finished the last chunk: no need to wait a turn of the event loop.
    return jobDone(job) ? finish(true) : pool.wait(job).then(finish);
  }

  #startPool(): ParallelPool {
    if (this.#pool === undefined) {
      this.#pool = new ParallelPool({
        workers: this.threads - 1,
        layout: shareLayout(this.ensemble.flat),
        onFailure: (reason) => {
          this.#spare = [];
          this.#onFailure(reason);
        },
      });
    }
    return this.#pool;
  }

  #takeBuffers(rows: number): BatchBuffers {
    const index = this.#spare.findIndex((buffers) => buffers.rows >= rows);
    if (index >= 0) return this.#spare.splice(index, 1)[0] as BatchBuffers;
    // Rounded up so that batches of slightly varying sizes reuse the same buffers.
    const capacity = Math.max(1024, 2 ** Math.ceil(Math.log2(rows)));
    const flat = this.ensemble.flat;
    const width = this.ensemble.inputWidth;
    return {
      rows: capacity,
      input: inputArray(flat, capacity * width, new SharedArrayBuffer(capacity * width * inputBytes(flat))),
      acc: sumsArray(flat, capacity, new SharedArrayBuffer(capacity * sumsBytes(flat))),
    };
  }

  /** Stops the worker threads; later batches are scored on the calling thread. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#spare = [];
    await this.#pool?.close();
  }
}
