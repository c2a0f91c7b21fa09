import { performance } from 'node:perf_hooks';

/** Per-call latencies (ms, in call order) and the wall time of the whole run. */
export interface DriveResult {
  latenciesMs: number[];
  wallMs: number;
}

/**
 * Runs `call(0..count-1)` with at most `concurrency` in flight (closed loop: each worker starts its
 * next call when the previous one has answered, as a client pool does). Every call runs even when
 * some fail, so the failure count is exact; then, if any failed, it throws listing how many and
 * the first few reasons: a benchmark must never quietly time errors.
 */
export async function drive(
  count: number,
  concurrency: number,
  call: (index: number) => Promise<void>,
): Promise<DriveResult> {
  const latenciesMs = new Array<number>(count).fill(0);
  const failures: string[] = [];
  let failed = 0;
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const index = next++;
      const started = performance.now();
      try {
        await call(index);
      } catch (error) {
        failed++;
        if (failures.length < 3) failures.push(`call ${index}: ${(error as Error).message}`);
      }
      latenciesMs[index] = performance.now() - started;
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  const wallMs = performance.now() - started;
  if (failed > 0) throw new Error(`${failed} of ${count} calls failed; first: ${failures.join(' | ')}`);
  return { latenciesMs, wallMs };
}
