/** Figures of one measured phase: a number of equal calls, each carrying `itemsPerCall` items. */
export interface PhaseStats {
  calls: number;
  items: number;
  wallMs: number;
  /** Items over the phase's wall time (all calls in flight together), not over summed latencies. */
  itemsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  meanMs: number;
}

/**
 * The `p`th percentile by nearest rank: always a latency that was actually observed, which keeps
 * p99 of 100 calls honest (the 99th slowest) instead of interpolating between two calls.
 */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1] as number;
}

/** Summarises per-call latencies (ms) and the phase's wall time. */
export function summarise(latenciesMs: readonly number[], wallMs: number, itemsPerCall: number): PhaseStats {
  const sorted = [...latenciesMs].sort((a, b) => a - b);
  const items = sorted.length * itemsPerCall;
  const sum = sorted.reduce((total, value) => total + value, 0);
  return {
    calls: sorted.length,
    items,
    wallMs: round(wallMs),
    itemsPerSec: Math.round((items / wallMs) * 1000),
    p50Ms: round(percentile(sorted, 50)),
    p99Ms: round(percentile(sorted, 99)),
    maxMs: round(sorted.at(-1) ?? Number.NaN),
    meanMs: round(sum / Math.max(1, sorted.length)),
  };
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}

/** The median of `values` (mean of the middle two when even). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  if (sorted.length === 0) return Number.NaN;
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}
