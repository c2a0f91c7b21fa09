import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';
import type { FlatLayout } from './flat-layout.js';
import { jobDone, type ParallelJob } from './parallel-job.js';
import type { ParallelWorkerData } from './parallel-worker.js';

/**
 * Starts a thread running the worker entry next to this module: the compiled `.js` in dist/, or,
 * when rankd runs from its TypeScript source (tests, benchmarks), the `.ts` source through tsx's
 * `tsImport`. On Node 20 a worker does not get the loader hooks `--import tsx` gave the process,
 * so the `.ts` entry is imported through tsx explicitly.
 */
function startWorker(options: WorkerOptions): Worker {
  const compiled = new URL('./parallel-worker.js', import.meta.url);
  if (existsSync(fileURLToPath(compiled))) return new Worker(compiled, options);
  const source = new URL('./parallel-worker.ts', import.meta.url).href;
  const tsx = import.meta.resolve('tsx/esm/api');
  const bootstrap =
    `import(${JSON.stringify(tsx)})` +
    `.then(({ tsImport }) => tsImport(${JSON.stringify(source)}, ${JSON.stringify(import.meta.url)}))`;
  return new Worker(bootstrap, { ...options, eval: true });
}

/** How a {@link ParallelPool} is started. */
export interface ParallelPoolOptions {
  /** Worker threads to start (the calling thread works too, so one fewer than the threads used). */
  readonly workers: number;
  /** The model's trees, already in shared memory (`shareLayout`): sent to each worker once. */
  readonly layout: FlatLayout;
  /** Told once, with why, when a worker fails or exits on its own: the pool takes no more jobs. */
  readonly onFailure: (reason: string) => void;
}

/**
 * How a wait for a job ends: `done`, every chunk finished; `failed`, the pool failed or closed
 * first (some chunk may never finish: the caller scores the batch itself); `late`, the given time
 * passed first (the caller may score the unfinished chunks itself).
 */
export type JobOutcome = 'done' | 'failed' | 'late';

/** A job the calling thread waits for, and how to tell it the outcome. */
interface Pending {
  readonly job: ParallelJob;
  readonly settle: (outcome: JobOutcome) => void;
}

/**
 * Worker threads that help score one loaded model's batches. A job is posted to every worker;
 * each takes chunks while some are left (see `workOn`), the calling thread too. The workers never
 * keep the process alive: they are unref'd, and ref'd only while the calling thread awaits a job
 * (else a script awaiting its scores could exit under it).
 *
 * A worker that fails or exits unasked fails the pool: the others are stopped, the jobs not yet
 * finished are answered `failed` (the caller then scores the unfinished chunks itself) and the
 * pool takes no more jobs. A failure is never a hang: a chunk taken by a thread that died is never
 * finished, so its job is answered by the exit, not by the count of finished chunks.
 */
export class ParallelPool {
  readonly #workers: Worker[];
  readonly #onFailure: (reason: string) => void;
  /**
   * The jobs being waited for: an array, searched by id (a handful at most), not a Map: a Map's
   * entries keep the waiting request reachable past their removal, and every request then outlives
   * the young generation (docs/benchmarks.md, "Deadlines in a list, not a Set").
   */
  readonly #pending: Pending[] = [];
  #state: 'open' | 'failed' | 'closed' = 'open';
  #closed: Promise<void> | undefined;
  #nextId = 1;

  constructor(options: ParallelPoolOptions) {
    this.#onFailure = options.onFailure;
    const workerData: ParallelWorkerData = { layout: options.layout };
    this.#workers = Array.from({ length: options.workers }, (_, i) => {
      const worker = startWorker({ workerData, name: `rankd-gbdt-${i + 1}` });
      worker.on('message', (id: number) => this.#settle(id, 'done'));
      worker.on('error', (error) => this.#fail(`a scoring thread failed: ${error.message}`));
      worker.on('messageerror', (error) =>
        this.#fail(`a scoring thread sent a bad message: ${error.message}`),
      );
      worker.on('exit', (code) => this.#fail(`a scoring thread exited (code ${code})`));
      // After the listeners: adding a 'message' listener refs the worker's port again.
      worker.unref();
      return worker;
    });
  }

  /** Whether jobs may be posted: not failed, not closed. */
  get open(): boolean {
    return this.#state === 'open';
  }

  /** The worker threads; tests stop one to check what a failure does. */
  get workers(): readonly Worker[] {
    return this.#workers;
  }

  /** A new job id. */
  nextId(): number {
    const id = this.#nextId;
    this.#nextId = id === 0x3fffffff ? 1 : id + 1;
    return id;
  }

  /** Sends `job` to every worker; the caller then takes chunks itself and calls {@link wait}. */
  post(job: ParallelJob): void {
    for (const worker of this.#workers) worker.postMessage(job);
  }

  /**
   * Waits for `job` (see {@link JobOutcome}); `lateAfterMs` bounds the wait. Call it right after
   * taking chunks, in the same synchronous run: the "done" message cannot be handled before.
   */
  wait(job: ParallelJob, lateAfterMs?: number): Promise<JobOutcome> {
    if (jobDone(job)) return Promise.resolve('done');
    if (this.#state !== 'open') return Promise.resolve('failed');
    return new Promise((resolve) => {
      // Ref'd while the caller awaits: nothing else may keep the event loop alive meanwhile.
      if (this.#pending.length === 0) for (const worker of this.#workers) worker.ref();
      const timer =
        lateAfterMs === undefined ? undefined : setTimeout(() => this.#settle(job.id, 'late'), lateAfterMs);
      this.#pending.push({
        job,
        settle: (outcome) => {
          clearTimeout(timer);
          resolve(outcome);
        },
      });
    });
  }

  #settle(id: number, outcome: JobOutcome): void {
    const index = this.#pending.findIndex((pending) => pending.job.id === id);
    const pending = this.#pending[index];
    // A job the caller saw finished itself has no entry: its "done" message is expected, and ignored.
    if (pending === undefined) return;
    this.#pending.splice(index, 1);
    if (this.#pending.length === 0) for (const worker of this.#workers) worker.unref();
    pending.settle(outcome === 'late' && jobDone(pending.job) ? 'done' : outcome);
  }

  /** Answers every waiting job: done if its chunks all finished, else failed. */
  #settleAll(): void {
    for (const { job } of [...this.#pending]) this.#settle(job.id, jobDone(job) ? 'done' : 'failed');
  }

  #fail(reason: string): void {
    if (this.#state !== 'open') return;
    this.#state = 'failed';
    this.#settleAll();
    this.#onFailure(reason);
    this.#stopWorkers();
  }

  #stopWorkers(): Promise<void> {
    this.#closed ??= Promise.all(
      // terminate() of a worker that has exited already resolves at once; it never rejects here.
      this.#workers.map((worker) => worker.terminate().catch(() => undefined)),
    ).then(() => undefined);
    return this.#closed;
  }

  /** Stops the workers; jobs still waiting are answered `failed` unless all their chunks are finished. */
  close(): Promise<void> {
    if (this.#state === 'open') this.#state = 'closed';
    this.#settleAll();
    return this.#stopWorkers();
  }
}
