/**
 * The entry of a GBDT scoring thread (see parallel-pool.ts). It gets one model's trees, in shared
 * memory, once, as `workerData`; then each message is a job whose chunks it helps take. The
 * thread that finishes a job's last chunk says so with the job's id. It keeps no state per job,
 * so a job it reads late (all its chunks taken already) costs it one atomic add.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { type FlatLayout, kernelLayout } from './flat-layout.js';
import { type ParallelJob, workOn } from './parallel-job.js';

/** What the pool passes as `workerData`. */
export interface ParallelWorkerData {
  readonly layout: FlatLayout;
}

const port = parentPort;
if (port === null) throw new Error('parallel-worker.js runs as a worker thread, not as a program');
// The kernels read plain copies of the per-step arrays, as on the calling thread (see kernelLayout).
const layout = kernelLayout((workerData as ParallelWorkerData).layout);

port.on('message', (job: ParallelJob) => {
  if (workOn(layout, job).finishedLast) port.postMessage(job.id);
});
