import { addTrees, type FlatLayout, type LayoutInput, type LayoutSums } from './flat-layout.js';

/** Index in {@link ParallelJob.control} of the next chunk to take. */
const NEXT = 0;
/** Index in {@link ParallelJob.control} of the count of chunks finished. */
const DONE = 1;

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
   * `[next chunk, chunks done]`, in a SharedArrayBuffer of the job's own: a worker that reads a
   * job's message late finds its chunks all taken, never another job's.
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

/** A job's shared control words, none taken and none done. */
export function newControl(): Int32Array {
  return new Int32Array(new SharedArrayBuffer(2 * Int32Array.BYTES_PER_ELEMENT));
}

/**
 * Takes chunks of `job` and adds every tree to their rows until no chunk is left. Returns whether
 * this thread finished the job's last chunk: that thread, and only it, reports the job done.
 * Each row is summed by one thread, tree after tree in order: the split changes no bit of it.
 */
export function workOn(layout: FlatLayout, job: ParallelJob): boolean {
  const { control, width, chunkRows } = job;
  let finishedLast = false;
  for (;;) {
    const chunk = Atomics.add(control, NEXT, 1);
    if (chunk >= job.chunks) return finishedLast;
    const start = chunk * chunkRows;
    const rows = Math.min(chunkRows, job.rows - start);
    addTrees(
      layout,
      job.input.subarray(start * width, (start + rows) * width),
      width,
      rows,
      job.acc.subarray(start, start + rows),
    );
    // Atomics.add orders the sums written above before the count: whoever reads the count as
    // complete reads the sums complete too.
    if (Atomics.add(control, DONE, 1) + 1 === job.chunks) finishedLast = true;
  }
}

/** Whether every chunk of `job` is finished. */
export function jobDone(job: ParallelJob): boolean {
  return Atomics.load(job.control, DONE) === job.chunks;
}
