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
import { chunkRowsOf, jobDone, newControl, type ParallelJob, reclaimLate, workOn } from './parallel-job.js';
import { ParallelPool } from './parallel-pool.js';
import type { TreeEnsemble } from './tree-ensemble.js';

type MaybePromise<T> = T | Promise<T>;

/**
 * Batches of fewer tree steps (rows × the sum of the trees' depths) than this are scored on the
 * calling thread alone: ~0.4 ms of work at ~1.5 ns a step. Measured on 2 cores (100 trees of depth
 * 6, 2 threads): 60 k steps broke even (0.10 ms either way, +55% CPU split); 240 k took 0.29 ms
 * split instead of 0.40 ms, for 14% more CPU; the saving grows from there.
 */
export const DEFAULT_MIN_PARALLEL_STEPS = 250_000;

/** Chunks per thread: enough that a late or descheduled thread leaves its share to the others. */
const CHUNKS_PER_THREAD = 2;

/**
 * Least time the calling thread waits, once its chunks are done, for a worker still holding one
 * before scoring that chunk itself. The wait is at least the time the caller took per chunk: a
 * worker that woke a little late is up to a chunk behind; one later still was likely descheduled.
 */
const MIN_LATE_MS = 1;

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
  /**
   * Split batches in which the calling thread scored again chunks a worker had taken but not
   * finished in time: the worker was late (descheduled by other work) or died.
   */
  reclaimed: number;
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
 * 1 / threads of the work and then a wait that does not block the event loop. A worker that holds
 * a chunk well past the time the caller took per chunk (descheduled by other work) or dies under
 * it does not hold the batch: the caller scores that chunk itself. A failed worker also stops the
 * splitting: from then on every batch is scored on the calling thread, and `onFailure` is told why.
 */
export class ParallelEnsemble {
  readonly ensemble: TreeEnsemble;
  /** Threads used for a big batch, the calling one included. */
  readonly threads: number;
  readonly minParallelSteps: number;
  readonly stats: ParallelStats = { parallel: 0, single: 0, reclaimed: 0 };
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
    const chunkCount = Math.ceil(rows / chunkRows);
    const job: ParallelJob = {
      id: pool.nextId(),
      control: newControl(chunkCount),
      input: buffers.input,
      acc: buffers.acc,
      width: ensemble.inputWidth,
      rows,
      chunkRows,
      chunks: chunkCount,
    };
    this.stats.parallel++;
    pool.post(job);
    const started = performance.now();
    const { taken } = workOn(ensemble.kernel, job);
    // Done already when this thread finished the last chunk: no need to wait a turn of the event loop.
    if (jobDone(job)) return this.#finish(job, buffers);
    const perChunkMs = taken > 0 ? (performance.now() - started) / taken : 0;
    return pool.wait(job, Math.max(MIN_LATE_MS, Math.ceil(perChunkMs))).then((outcome) => {
      if (outcome === 'done') return this.#finish(job, buffers);
      // A worker is late, or died, holding a chunk: this thread scores what is unfinished.
      this.stats.reclaimed++;
      const own = sumsArray(ensemble.flat, rows);
      ensemble.startSums(own, rows);
      return this.#finish(job, buffers, reclaimLate(ensemble.kernel, job, own), own);
    });
  }

  /**
   * The margins of a finished job: its sums, but the rows of `claimed` chunks from `own` (the
   * caller's). Its buffers are reused unless a chunk was claimed: the late worker may still be
   * writing into them.
   */
  #finish(job: ParallelJob, buffers: BatchBuffers, claimed: readonly number[] = [], own?: LayoutSums) {
    const rows = job.rows;
    let sums = buffers.acc;
    if (claimed.length > 0 && own !== undefined) {
      sums = sumsArray(this.ensemble.flat, rows);
      sums.set(buffers.acc.subarray(0, rows));
      for (const chunk of claimed) {
        const [start, end] = chunkRowsOf(job, chunk);
        sums.set(own.subarray(start, end), start);
      }
    }
    const result = new Float64Array(rows);
    this.ensemble.finishBatch(sums, rows, result);
    if (claimed.length === 0 && this.#spare.length < SPARE_BUFFERS) this.#spare.push(buffers);
    return result;
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
