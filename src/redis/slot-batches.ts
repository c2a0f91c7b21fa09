/** Batches split by hash slot, all groups sent at once: a write's partial failure, a read's unread keys. */
import {
  ClusterNodeUnavailableError,
  type RedisUnavailableError,
  type UnavailableNode,
} from '../errors/index.js';
import { type BatchGroup, groupKeys, RedisPartialWriteError } from './batches.js';
import type { ClusterTransport } from './cluster-transport.js';
import type { RedisLink } from './link.js';
import { redisErrorKind } from './observer.js';
import { unreadOf } from './outage-accounting.js';
import type { UnreadKeys } from './outages.js';

/** Value as stored: Redis bulk strings come back as Buffers so that binary (LZ4) values survive. */
export type StoredValue = Buffer | null;

/** The values of a read that may leave out the keys of cluster nodes that cannot answer. */
export interface AvailableValues {
  /** In the keys' order; `null` where a key does not exist or was not read. */
  readonly values: StoredValue[];
  /** The keys not read and the nodes that did not serve them; undefined when every key was read. */
  readonly unread: UnreadKeys | undefined;
}

/** The groups of `keys` that may each travel in one command: one slot's on a cluster, all of them on a single Redis. */
export function groupsOf(link: RedisLink, keys: readonly string[]): BatchGroup[] {
  // A single Redis takes the whole batch in one command: no slot to compute, nothing to split.
  if (link.mode === 'single') return keys.length === 0 ? [] : [{ indexes: keys.map((_key, i) => i), keys }];
  return groupKeys(keys, (key) => link.transport.groupOf(key));
}

/**
 * Runs `write` once per hash-slot group of `keys`, all groups at once. One group (always, on a
 * single Redis) fails as a whole. With several, a failure of some but not all throws a
 * {@link RedisPartialWriteError} saying, per key, whether its write was confirmed, and naming the
 * cluster nodes that failed.
 */
export async function writeGroups(
  link: RedisLink,
  keys: readonly string[],
  write: (group: BatchGroup) => Promise<unknown>,
  command: string,
): Promise<void> {
  const groups = groupsOf(link, keys);
  const outcomes = await Promise.allSettled(
    groups.map((group) => link.run(() => write(group), command, true, group.keys[0])),
  );
  const failure = outcomes.find((outcome) => outcome.status === 'rejected');
  if (failure === undefined) return;
  const failedNodes = new Map<string, UnavailableNode>();
  for (const outcome of outcomes) {
    if (outcome.status === 'rejected' && outcome.reason instanceof ClusterNodeUnavailableError)
      for (const node of outcome.reason.nodes) failedNodes.set(node.node, node);
  }
  if (outcomes.every((outcome) => outcome.status === 'rejected')) {
    // Several nodes failed the whole write: one error naming them all, not the first one only.
    if (failedNodes.size > 1 && outcomes.every((o) => o.reason instanceof ClusterNodeUnavailableError))
      throw new ClusterNodeUnavailableError(
        link.address,
        [...failedNodes.values()],
        failure.reason.cause,
        link.cluster?.advice,
      );
    throw failure.reason;
  }
  const applied = new Array<boolean>(keys.length).fill(false);
  outcomes.forEach((outcome, g) => {
    if (outcome.status === 'fulfilled')
      for (const index of (groups[g] as BatchGroup).indexes) applied[index] = true;
  });
  const reason = failure.reason as RedisUnavailableError;
  throw new RedisPartialWriteError(
    link.address,
    applied,
    reason.cause ?? reason,
    [...failedNodes.values()],
    link.cluster?.advice,
  );
}

/**
 * A cluster read: one MGET per hash-slot group, all sent in the same tick (node-redis pipelines
 * those of one node), under one deadline. Unlike `Promise.all`, one failed group does not end the
 * read: every group's answer is kept, so a read can say exactly which keys it could not read.
 * Failed groups are then either thrown (`leaveOut` false) or left out and named in `unread`.
 */
export async function readGroups(
  link: RedisLink,
  keys: readonly string[],
  leaveOut: boolean,
): Promise<AvailableValues> {
  link.connect();
  const observer = link.observer;
  const start = observer === undefined ? 0 : performance.now();
  // The map the groups are routed by: a failure is the node's it was sent to, whatever happens next.
  const map = (link.cluster as ClusterTransport).slotMap;
  const groups = groupsOf(link, keys);
  const replies = new Array<StoredValue[] | undefined>(groups.length);
  let errors: unknown[] | undefined;
  let settled = false;
  const all = new Promise<void>((resolve) => {
    let left = groups.length;
    for (let g = 0; g < groups.length; g++) {
      const group = groups[g] as BatchGroup;
      link.transport.send(group.keys[0], true, ['MGET', ...group.keys]).then(
        (reply) => {
          if (!settled) replies[g] = reply as StoredValue[];
          if (--left === 0) resolve();
        },
        (error: unknown) => {
          if (!settled) {
            errors ??= new Array<unknown>(groups.length);
            errors[g] = error;
          }
          if (--left === 0) resolve();
        },
      );
    }
  });
  try {
    await link.deadlines.within(all);
  } catch (timeout) {
    // The groups still unanswered at the deadline are the ones that timed out; the others' answers stand.
    errors ??= new Array<unknown>(groups.length);
    for (let g = 0; g < groups.length; g++)
      if (replies[g] === undefined && errors[g] === undefined) errors[g] = timeout;
  }
  settled = true;
  observer?.commandDone('mget', (performance.now() - start) / 1000);
  const values = new Array<StoredValue>(keys.length).fill(null);
  let failed: number[] | undefined;
  for (let g = 0; g < groups.length; g++) {
    const reply = replies[g];
    if (reply === undefined) {
      failed ??= [];
      failed.push(g);
      continue;
    }
    const indexes = (groups[g] as BatchGroup).indexes;
    for (let i = 0; i < indexes.length; i++) values[indexes[i] as number] = reply[i] ?? null;
  }
  if (failed === undefined) return { values, unread: undefined };
  const groupErrors = errors as unknown[];
  observer?.commandFailed('mget', redisErrorKind(groupErrors[failed[0] as number]));
  const unread = unreadOf(link, groups, failed, groupErrors, map);
  if (!leaveOut) {
    const nodes = unread.outages.map(({ node, slots, reason }) => ({ node, slots, reason }));
    throw new ClusterNodeUnavailableError(
      link.address,
      nodes,
      groupErrors[failed[0] as number],
      (link.cluster as ClusterTransport).advice,
    );
  }
  return { values, unread };
}
