import { Worker } from 'node:worker_threads';

/**
 * How long {@link runInWorker} lets a worker run before calling it hung. Not a timed assertion:
 * far above what the work takes on a slow, shared machine; it only turns a loop that never ends
 * into a failure instead of a test run that never ends.
 */
export const HANG_GUARD_MS = 120_000;

/** What a worker module run by {@link runInWorker} posts back: its result, or why it failed. */
export type WorkerOutcome<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly error: string };

/**
 * Runs the TypeScript module `moduleUrl` in a worker thread with `data` as its `workerData`, and
 * resolves with the one message it posts (a {@link WorkerOutcome}). A synchronous loop that never
 * ends cannot be stopped from its own thread (node:test's per-test `timeout` is a timer, and timers
 * never fire then): in a worker it can, so the worker is terminated after {@link HANG_GUARD_MS} and
 * the promise rejects, saying so.
 */
export function runInWorker<T>(moduleUrl: URL, data: unknown, guardMs = HANG_GUARD_MS): Promise<T> {
  // tsx's loader is not inherited by worker threads on Node 20: the worker registers it itself.
  const source = `import('tsx/esm/api').then((api) => api.tsImport(${JSON.stringify(moduleUrl.href)}, ${JSON.stringify(import.meta.url)}))`;
  const worker = new Worker(source, { eval: true, workerData: data });
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(guard);
      void worker.terminate();
      outcome();
    };
    const guard = setTimeout(
      () =>
        settle(() => reject(new Error(`${moduleUrl.pathname} did not finish in ${guardMs} ms: it hangs`))),
      guardMs,
    );
    worker.on('message', (message: WorkerOutcome<T>) =>
      settle(() => (message.ok ? resolve(message.value) : reject(new Error(message.error)))),
    );
    worker.on('error', (error) => settle(() => reject(error)));
    worker.on('exit', (code) =>
      settle(() => reject(new Error(`the worker exited (${code}) without an answer`))),
    );
  });
}

/**
 * For the worker module's side: runs `work` and posts its outcome to the thread that started the
 * worker (see {@link runInWorker}); an error is posted with its stack and message (fast-check puts
 * the counterexample in it).
 */
export async function answerFromWorker<T>(work: () => Promise<T> | T): Promise<void> {
  const { parentPort } = await import('node:worker_threads');
  if (parentPort === null) throw new Error('answerFromWorker runs in a worker started by runInWorker');
  let outcome: WorkerOutcome<T>;
  try {
    outcome = { ok: true, value: await work() };
  } catch (error) {
    outcome = { ok: false, error: error instanceof Error ? (error.stack ?? error.message) : String(error) };
  }
  parentPort.postMessage(outcome);
}
