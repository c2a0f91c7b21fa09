import { ErrorReply } from '@redis/client';

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
 * Whether a node in this state refuses writes: `noeviction` and within 1% of `maxmemory` (Redis
 * refuses a write when its memory, the write's own bytes included, passes the limit). The margin
 * is what makes the answer stable: a Redis that refused a write drops back just under the limit
 * once the refused command's bytes are freed, and any upload of a few hundred entities needs more
 * than that last 1%. Other policies evict to make room (`volatile-*` when keys with a TTL are left),
 * so their being at the limit says nothing; their refusals still answer RANKD_REDIS_OUT_OF_MEMORY.
 */
export function refusesWrites(report: MemoryReport): boolean {
  return report.max > 0 && report.policy === 'noeviction' && report.used >= report.max - report.max / 100;
}
