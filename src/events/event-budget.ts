import type { MemoryReport } from '../redis/out-of-memory.js';

/**
 * Share of `maxmemory` events leave to everything else however small the stream's budget: the
 * index's writes in flight and clients' buffers. Past `maxmemory × (1 − this)`, the stream gives
 * memory back (is trimmed) rather than let an upload be refused.
 */
const EVENTS_HEADROOM = 0.1;

/** What bounds the stream: its byte cap, its share of `maxmemory`, the room left in Redis, or nothing. */
type BudgetLimit = 'cap' | 'share' | 'room' | 'none';

/** The bytes the event stream may take in its Redis now, and why not more. */
export interface EventBudget {
  /** Bytes; `Infinity` when nothing bounds them (no byte cap and no `maxmemory`). */
  readonly bytes: number;
  readonly limit: BudgetLimit;
  /** The Redis's `maxmemory` (0: none, or not known). */
  readonly maxmemory: number;
}

/**
 * The stream's budget: the smallest of `EVENTS_STREAM_MAX_BYTES` (`capBytes`, 0 = none), `share`
 * of the Redis's `maxmemory`, and what Redis has left for it below `maxmemory` minus the
 * headroom once everything but the stream is counted (so the index always wins). Without a
 * `maxmemory` (or before it is read: `memory` undefined) the cap alone.
 */
export function eventBudget(
  capBytes: number,
  share: number,
  memory: MemoryReport | undefined,
  streamBytes: number,
): EventBudget {
  let bytes = capBytes > 0 ? capBytes : Number.POSITIVE_INFINITY;
  let limit: BudgetLimit = capBytes > 0 ? 'cap' : 'none';
  const maxmemory = memory?.max ?? 0;
  if (memory !== undefined && maxmemory > 0) {
    const shared = Math.floor(share * maxmemory);
    if (shared < bytes) {
      bytes = shared;
      limit = 'share';
    }
    const others = Math.max(0, memory.used - streamBytes);
    const room = Math.max(0, Math.floor(maxmemory * (1 - EVENTS_HEADROOM) - others));
    if (room < bytes) {
      bytes = room;
      limit = 'room';
    }
  }
  return { bytes, limit, maxmemory };
}

/** `12.5 MiB` */
function mebibytes(bytes: number): string {
  const mib = bytes / 1_048_576;
  return `${mib.toFixed(mib < 10 ? 2 : 1)} MiB`;
}

/** Why the stream keeps to `budget`, in a sentence for the log. */
export function budgetSentence(budget: EventBudget, capBytes: number, share: number): string {
  const max = mebibytes(budget.maxmemory);
  switch (budget.limit) {
    case 'share':
      return (
        `the event stream keeps to ${mebibytes(budget.bytes)}, ${Math.round(share * 100)}% of its Redis's maxmemory ` +
        `(${max}; ${share < 1 ? 'a Redis of its own, EVENTS_REDIS_URL, gets all of it' : 'its own Redis'})` +
        (capBytes > 0
          ? `: EVENTS_STREAM_MAX_BYTES (${mebibytes(capBytes)}) does not fit in it`
          : ': EVENTS_STREAM_MAX_BYTES is 0 (no byte cap)')
      );
    case 'room':
      return (
        `the event stream keeps to ${mebibytes(budget.bytes)}: what its Redis has left below ` +
        `${Math.round((1 - EVENTS_HEADROOM) * 100)}% of maxmemory (${max}) once the index and the rest are counted`
      );
    case 'cap':
      return `the event stream keeps to EVENTS_STREAM_MAX_BYTES (${mebibytes(budget.bytes)})`;
    case 'none':
      return 'the event stream has no byte budget (EVENTS_STREAM_MAX_BYTES=0 and its Redis has no maxmemory)';
  }
}
