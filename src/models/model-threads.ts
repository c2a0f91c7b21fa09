import { availableParallelism } from 'node:os';

/**
 * The most threads the default uses: a batch of a thousand rows split more ways gains little, and
 * a server scores several requests at once, each of which may split its batch.
 */
export const MAX_DEFAULT_MODEL_THREADS = 4;

/**
 * Threads a model scores one batch with when none are configured (`MODEL_THREADS`'s default):
 * one per core the process may use, at most {@link MAX_DEFAULT_MODEL_THREADS}.
 */
export function defaultModelThreads(): number {
  return Math.max(1, Math.min(availableParallelism(), MAX_DEFAULT_MODEL_THREADS));
}
