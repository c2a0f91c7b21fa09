import { performance } from 'node:perf_hooks';
import type { DriveResult } from './drive.js';

/**
 * Like {@link drive}, but for a duration instead of a number of calls: `concurrency` workers each
 * call `call(seq)` (seq = 0, 1, 2, … across all workers, in start order), starting the next call
 * when the previous one has answered, until `durationMs` have passed (closed loop, as a client
 * pool does). Calls still in flight at the deadline finish and count, so the wall time runs a
 * little past it. `latenciesMs[seq]` is call `seq`'s latency.
 *
 * The first failure stops every worker (a dead server would otherwise be hammered with fast
 * failures for the whole duration); then it throws with the count and the first reasons, so a
 * benchmark never quietly times errors.
 */
export async function driveFor(
  durationMs: number,
  concurrency: number,
  call: (seq: number) => Promise<void>,
): Promise<DriveResult> {
  const latenciesMs: number[] = [];
  const failures: string[] = [];
  let failed = 0;
  let next = 0;
  const started = performance.now();
  let deadline = started + durationMs;
  const worker = async () => {
    while (performance.now() < deadline) {
      const seq = next++;
      const callStarted = performance.now();
      try {
        await call(seq);
      } catch (error) {
        failed++;
        deadline = 0;
        if (failures.length < 3) failures.push(`call ${seq}: ${(error as Error).message}`);
      }
      latenciesMs[seq] = performance.now() - callStarted;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const wallMs = performance.now() - started;
  if (failed > 0) throw new Error(`${failed} of ${next} calls failed; first: ${failures.join(' | ')}`);
  return { latenciesMs, wallMs };
}
