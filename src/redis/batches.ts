import {
  PartialWriteError,
  RedisUnavailableError,
  type UnavailableNode,
  type WrittenId,
} from '../errors/index.js';

/** Positions of a batch's items that may travel in one command (same hash slot). */
export interface BatchGroup {
  /** Indexes into the batch, in batch order. */
  readonly indexes: readonly number[];
  /** Their keys, in the same order. */
  readonly keys: readonly string[];
}

/**
 * Splits `keys` into groups by `groupOf` (the hash slot), keeping batch order inside each group
 * so that a later duplicate key still wins. On a single Redis every key is in group 0: one group.
 */
export function groupKeys(keys: readonly string[], groupOf: (key: string) => number): BatchGroup[] {
  const groups = new Map<number, { indexes: number[]; keys: string[] }>();
  keys.forEach((key, index) => {
    const id = groupOf(key);
    let group = groups.get(id);
    if (group === undefined) {
      group = { indexes: [], keys: [] };
      groups.set(id, group);
    }
    group.indexes.push(index);
    group.keys.push(key);
  });
  return [...groups.values()];
}

/**
 * A batched write of which some groups were confirmed and others failed (only possible on a
 * cluster, where a batch spans nodes). A 503 like any Redis failure if it escaped, but the stores
 * turn it into a {@link PartialWriteError} naming the ids, with {@link toPartialWriteError}.
 */
export class RedisPartialWriteError extends RedisUnavailableError {
  /** Per batch item: whether its write was confirmed. */
  readonly applied: readonly boolean[];
  /** The masters whose writes failed for an outage, when known. */
  readonly nodes: readonly UnavailableNode[];
  /** What to do, quoting the cluster's own `cluster-node-timeout` when known. */
  readonly advice: string | undefined;

  constructor(
    address: string,
    applied: readonly boolean[],
    cause: unknown,
    nodes: readonly UnavailableNode[] = [],
    advice?: string,
  ) {
    super(address, cause, true);
    this.applied = applied;
    this.nodes = nodes;
    this.advice = advice;
  }
}

/**
 * `error` as the caller should see it: a {@link RedisPartialWriteError} becomes a
 * {@link PartialWriteError} listing `ids[i]` (the id of batch item i) as written or failed, each
 * id once in batch order; any other error is returned unchanged.
 */
export function toPartialWriteError(error: unknown, ids: readonly WrittenId[]): unknown {
  if (!(error instanceof RedisPartialWriteError)) return error;
  const written = new Map<string, WrittenId>();
  const failed = new Map<string, WrittenId>();
  ids.forEach((id, i) => {
    const key = typeof id === 'string' ? id : JSON.stringify(id);
    // An id listed twice has one key, so one slot and one outcome; its first place orders it.
    (error.applied[i] ? written : failed).set(key, id);
  });
  return new PartialWriteError(
    [...written.values()],
    [...failed.values()],
    error.cause,
    error.address,
    error.nodes,
    error.advice,
  );
}
