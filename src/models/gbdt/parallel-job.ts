import { addTrees, type KernelLayout, type LayoutInput, type LayoutSums } from './flat-layout.js';

/** Index in {@link ParallelJob.control} of the next chunk to take. */
const NEXT = 0;
/** Index in {@link ParallelJob.control} of the count of chunks finished. */
const DONE = 1;
/** Index in {@link ParallelJob.control} of chunk 0's state; chunk c's is at `STATES + c`. */
const STATES = 2;
/** A chunk not finished yet (free, or being scored by the thread that took it). */
const PENDING = 0;
/** A chunk whose sums in `acc` are final: the thread that took it finished it. */
const BY_TAKER = 1;
/** A chunk the calling thread scored again for itself, its taker being late: see {@link reclaimLate}. */
const BY_CALLER = 2;

/**
 * One batch split by rows into chunks that threads take one at a time, the calling thread among
 * them: a thread that is late (still waking, or descheduled by other work on the machine) simply
 * takes fewer, and one that never comes takes none. Everything in it is shared memory (a message
 * carrying it shares, not copies, the arrays), so it is sent to each worker as it is.
 */
export interface ParallelJob {
  /** Names the job in the "done" message of the thread that finishes its last chunk. */
  readonly id: number;
  /**
   * `[next chunk, chunks finished, state of each chunk…]` ({@link newControl}), in a
   * SharedArrayBuffer of the job's own: a worker that reads a job's message late finds its
   * chunks all taken, never another job's.
   */
  readonly control: Int32Array;
  /** Derived input rows (`rows` × `width`). */
  readonly input: LayoutInput;
  /** Per-row sums, started at the base score; each chunk adds every tree to its rows. */
  readonly acc: LayoutSums;
  readonly width: number;
  readonly rows: number;
  /** Rows per chunk, a multiple of 8 (the kernels' lockstep) except the last chunk's. */
  readonly chunkRows: number;
  readonly chunks: number;
}

/** A job's shared control words for `chunks` chunks: none taken, none finished. */
export function newControl(chunks: number): Int32Array {
  return new Int32Array(new SharedArrayBuffer((STATES + chunks) * Int32Array.BYTES_PER_ELEMENT));
}

/** Adds every tree to the rows of chunk `chunk` of `job`, in `acc` (whose row 0 is the job's row 0). */
function scoreChunk(layout: KernelLayout, job: ParallelJob, chunk: number, acc: LayoutSums): void {
  const { width, chunkRows } = job;
  const start = chunk * chunkRows;
  const end = Math.min(job.rows, start + chunkRows);
  addTrees(
    layout,
    job.input.subarray(start * width, end * width),
    width,
    end - start,
    acc.subarray(start, end),
  );
}

/**
 * Marks `chunk` finished by `by` unless another thread did first. Returns the count of chunks
 * finished after this call, or -1 when another thread had finished the chunk.
 */
function finish(job: ParallelJob, chunk: number, by: number): number {
  if (Atomics.compareExchange(job.control, STATES + chunk, PENDING, by) !== PENDING) return -1;
  // compareExchange and add order the sums written before them: whoever reads the count (or the
  // chunk's state) as finished reads those sums finished too.
  return Atomics.add(job.control, DONE, 1) + 1;
}

/**
 * Takes chunks of `job` and adds every tree to their rows, in `job.acc`, until no chunk is left.
 * Each row is summed by one thread, tree after tree in order: the split changes no bit of it.
 * Returns how many chunks this thread took and whether it finished the job's last one: that
 * thread, and only it, reports the job done.
 */
export function workOn(layout: KernelLayout, job: ParallelJob): { taken: number; finishedLast: boolean } {
  let taken = 0;
  let finishedLast = false;
  for (;;) {
    const chunk = Atomics.add(job.control, NEXT, 1);
    if (chunk >= job.chunks) return { taken, finishedLast };
    taken++;
    scoreChunk(layout, job, chunk, job.acc);
    if (finish(job, chunk, BY_TAKER) === job.chunks) finishedLast = true;
  }
}

/** Whether every chunk of `job` is finished. */
export function jobDone(job: ParallelJob): boolean {
  return Atomics.load(job.control, DONE) === job.chunks;
}

/**
 * For the calling thread, once every chunk is taken and some are still not finished: scores
 * each of those again into `own` (the caller's own sums, started at the base score, `job.rows`
 * long) and claims it, unless its taker finishes it first. A worker descheduled in the middle of
 * a chunk (other work on the machine) could otherwise hold the batch for a whole time slice.
 * Returns the chunks claimed: their rows' sums are in `own`, and their taker may still be writing
 * into `job.acc`, which must then not be reused. After it, the job is done.
 */
export function reclaimLate(layout: KernelLayout, job: ParallelJob, own: LayoutSums): number[] {
  const claimed: number[] = [];
  for (let chunk = 0; chunk < job.chunks; chunk++) {
    if (Atomics.load(job.control, STATES + chunk) !== PENDING) continue;
    scoreChunk(layout, job, chunk, own);
    if (finish(job, chunk, BY_CALLER) >= 0) claimed.push(chunk);
  }
  return claimed;
}

/** The rows of `job`'s chunk `chunk`: `[start, end)`. */
export function chunkRowsOf(job: ParallelJob, chunk: number): [number, number] {
  const start = chunk * job.chunkRows;
  return [start, Math.min(job.rows, start + job.chunkRows)];
}
