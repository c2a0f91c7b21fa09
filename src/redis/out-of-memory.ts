import { ErrorReply } from 'redis';

/**
 * Whether a node-redis failure is Redis refusing a command for memory (`OOM command not allowed
 * when used memory > 'maxmemory'.`). Inside MULTI the refusal comes back for the queued command
 * (node-redis rejects `exec()` with it), so a refused transaction is recognised too.
 */
export function isOutOfMemoryReply(error: unknown): boolean {
  return error instanceof ErrorReply && error.message.startsWith('OOM ');
}

/** What `INFO memory` says about one Redis node, as far as refusing writes goes. */
export interface MemoryReport {
  /** Memory Redis counts against `maxmemory` (`used_memory` − `mem_not_counted_for_evict`), bytes. */
  readonly used: number;
  /** `maxmemory`, bytes; 0 when unlimited. */
  readonly max: number;
  /** `maxmemory_policy`. */
  readonly policy: string;
}

/** Reads the fields of {@link MemoryReport} from the text of `INFO memory`; undefined when absent. */
export function parseMemoryInfo(info: string): MemoryReport | undefined {
  const field = (name: string) => new RegExp(`^${name}:(.*)$`, 'm').exec(info)?.[1]?.trim();
  const used = Number(field('used_memory'));
  const max = Number(field('maxmemory'));
  if (!Number.isFinite(used) || !Number.isFinite(max)) return undefined;
  const notCounted = Number(field('mem_not_counted_for_evict') ?? 0);
  return {
    used: used - (Number.isFinite(notCounted) ? notCounted : 0),
    max,
    policy: field('maxmemory_policy') ?? 'noeviction',
  };
}

/**
 * Whether a node in this state refuses writes: past `maxmemory` (Redis compares the same figure,
 * strictly) with a policy that does not evict any key. `volatile-*` policies evict only keys with a
 * TTL, which index keys do not have, so they count as not evicting; `allkeys-*` always can.
 */
export function refusesWrites(report: MemoryReport): boolean {
  return report.max > 0 && report.used > report.max && !report.policy.startsWith('allkeys-');
}
