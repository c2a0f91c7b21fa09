/** What a failed operation means: out of memory, a cluster node's outage (reported once), Redis away, a bug. */
import {
  ClusterDownError,
  ClusterNodeUnavailableError,
  RedisOutOfMemoryError,
  RedisUnavailableError,
} from '../errors/index.js';
import type { BatchGroup } from './batches.js';
import type { SlotMap, SlotOwner } from './cluster-slot-map.js';
import type { ClusterTransport } from './cluster-transport.js';
import { hashSlot } from './hash-slot.js';
import { isRedisOutage } from './observer.js';
import { isOutOfMemoryReply } from './out-of-memory.js';
import {
  type NodeOutage,
  type OutageCause,
  outageCause,
  refusesWholeCluster,
  type UnreadKeys,
} from './outages.js';

/** Where a failure happened: the address users are shown, and the cluster transport when on a cluster. */
export interface FailureScope {
  readonly address: string;
  readonly cluster: ClusterTransport | undefined;
}

/**
 * What a failed operation is reported as: Redis out of memory, an outage (503: of one cluster
 * node, naming it and its slots, when `key` says which node and other masters are up; else of
 * Redis), or, for a bug or a command Redis rejects, the error itself (a 500).
 */
export function failureOf(scope: FailureScope, error: unknown, key?: string, map?: SlotMap): unknown {
  // Redis answered, and refused for memory: reconnecting would not help, making room would.
  if (isOutOfMemoryReply(error)) return new RedisOutOfMemoryError(error);
  // Only an outage is a 503: a bug or a command Redis rejects is reported as itself (a 500).
  if (!isRedisOutage(error)) return error;
  const cluster = scope.cluster;
  const cause = outageCause(error);
  if (cluster !== undefined && key !== undefined && cause !== undefined && cluster.hasConnectedMaster()) {
    const owner = cluster.ownerOfSlot(hashSlot(key), map);
    if (owner !== undefined) {
      const reason = messageOf(error);
      if (refusesWholeCluster(error)) {
        cluster.reportRefusal(reason, owner.address);
        return new ClusterDownError(scope.address, cluster.whyNoneServes(), cluster.advice, error);
      }
      cluster.reportOutage(owner, cause, reason);
      return new ClusterNodeUnavailableError(
        scope.address,
        [{ node: owner.address, slots: owner.slots, reason }],
        error,
        cluster.advice,
      );
    }
  }
  return new RedisUnavailableError(scope.address, error, cluster !== undefined);
}

/**
 * What the failed groups of a cluster read (routed by `map`) mean: the keys not read and the
 * nodes behind them, each reported to the transport (logged once per outage; a node saying the
 * whole cluster refuses queries is reported as the cluster's). Throws when the failure is not the
 * outage of some nodes: an error that is no outage (reported as itself, as {@link failureOf} does), the
 * whole cluster away (no master connected: a plain {@link RedisUnavailableError}), or nothing read
 * while no master serves (a {@link ClusterDownError}: a 503, not an answer made of nothing).
 */
export function unreadOf(
  scope: FailureScope,
  groups: readonly BatchGroup[],
  failed: readonly number[],
  errors: readonly unknown[],
  map: SlotMap,
): UnreadKeys {
  const cluster = scope.cluster as ClusterTransport;
  const byNode = new Map<
    string,
    { owner: SlotOwner; cause: OutageCause; error: unknown; reason: string; keys: number }
  >();
  const indexes: number[] = [];
  for (const g of failed) {
    const error = errors[g];
    const cause = outageCause(error);
    if (cause === undefined) throw failureOf(scope, error);
    const group = groups[g] as BatchGroup;
    const owner = cluster.ownerOfSlot(hashSlot(group.keys[0] as string), map);
    if (owner === undefined || !cluster.hasConnectedMaster()) throw failureOf(scope, error);
    const known = byNode.get(owner.address);
    if (known === undefined) {
      const reason = messageOf(error);
      byNode.set(owner.address, { owner, cause, error, reason, keys: group.indexes.length });
    } else known.keys += group.indexes.length;
    for (const index of group.indexes) indexes.push(index);
  }
  indexes.sort((a, b) => a - b);
  const outages: NodeOutage[] = [];
  for (const { owner, cause, error, reason, keys } of byNode.values()) {
    if (refusesWholeCluster(error)) cluster.reportRefusal(reason, owner.address);
    else cluster.reportOutage(owner, cause, reason);
    outages.push({ node: owner.address, slots: owner.slots, cause, reason, keys });
  }
  if (failed.length === groups.length && !cluster.hasServingMaster())
    throw new ClusterDownError(
      scope.address,
      cluster.whyNoneServes(),
      cluster.advice,
      errors[failed[0] as number],
    );
  return { indexes, outages };
}

/** What an error says, for a log line or a response's reason. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
