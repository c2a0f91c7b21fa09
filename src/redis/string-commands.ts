/** Commands on string keys: MGET (through the read cache when on), MSET, SET with expiry, DEL. */
import type { BatchGroup } from './batches.js';
import { joinKeys, type SplitKeys } from './keys.js';
import type { RedisLink } from './link.js';
import type { ReadCache } from './read-cache.js';
import { type AvailableValues, readGroups, type StoredValue, writeGroups } from './slot-batches.js';
import type { RedisCommand } from './transport.js';

/** Values of `keys`, in order, `null` where a key does not exist: `RedisConnection.mget`. */
export async function mget(
  link: RedisLink,
  keys: readonly string[] | SplitKeys,
  fromCache?: boolean[],
): Promise<StoredValue[]> {
  if (link.cache !== undefined && !isWhole(keys))
    return (await cachedRead(link, link.cache, keys, false, fromCache)).values;
  const whole = isWhole(keys) ? keys : joinKeys(keys);
  if (whole.length === 0) return [];
  return (await readWhole(link, whole, false)).values;
}

/** One MGET of `keys` on a single Redis; one per hash slot on a cluster (`leaveOut`: see {@link mgetAvailable}). */
async function readWhole(
  link: RedisLink,
  keys: readonly string[],
  leaveOut: boolean,
): Promise<AvailableValues> {
  // A single Redis takes the whole read as one MGET and answers in the keys' own order: its reply
  // is the result, with no groups to make nor places to map back.
  if (link.mode === 'single') {
    const send = () => link.transport.send(keys[0] as string, true, ['MGET', ...keys]);
    return { values: (await link.run(send, 'mget')) as StoredValue[], unread: undefined };
  }
  return readGroups(link, keys, leaveOut);
}

/** {@link mget} leaving out the keys of cluster masters that cannot answer: `RedisConnection.mgetAvailable`. */
export async function mgetAvailable(
  link: RedisLink,
  keys: readonly string[] | SplitKeys,
  fromCache?: boolean[],
): Promise<AvailableValues> {
  if (link.mode === 'single') return { values: await mget(link, keys, fromCache), unread: undefined };
  if (link.cache !== undefined && !isWhole(keys)) return cachedRead(link, link.cache, keys, true, fromCache);
  const whole = isWhole(keys) ? keys : joinKeys(keys);
  if (whole.length === 0) return { values: [], unread: undefined };
  return readWhole(link, whole, true);
}

/**
 * An MGET through the read cache (DR-020): the keys it holds are served from it, the others read
 * as the plain path reads them, in one MGET (per slot on a cluster), and offered to it.
 * `fromCache` (an explanation's): set true at the index of each value served from the cache.
 */
async function cachedRead(
  link: RedisLink,
  cache: ReadCache,
  keys: SplitKeys,
  leaveOut: boolean,
  fromCache: boolean[] | undefined,
): Promise<AvailableValues> {
  const { spaces, rests } = keys;
  if (rests.length === 0) return { values: [], unread: undefined };
  link.followMasters();
  const now = Date.now();
  let missingAt: number[] | undefined;
  let values: StoredValue[] = [];
  if (cache.enabled) {
    values = new Array<StoredValue>(rests.length);
    for (let i = 0; i < rests.length; i++) {
      const value = cache.get(spaces[i] as string, rests[i] as string, now);
      if (value !== undefined) {
        values[i] = value;
        if (fromCache !== undefined) fromCache[i] = true;
      } else if (missingAt === undefined) missingAt = [i];
      else missingAt.push(i);
    }
    const misses = missingAt?.length ?? 0;
    cache.stats.hits += rests.length - misses;
    cache.stats.misses += misses;
    if (missingAt === undefined) return { values, unread: undefined };
  }
  const at = missingAt;
  const toRead =
    at === undefined ? joinKeys(keys) : at.map((i) => (spaces[i] as string) + (rests[i] as string));
  const ticket = cache.begin();
  const read = await readWhole(link, toRead, leaveOut);
  const invalidated = cache.invalidatedSince(ticket);
  for (let j = 0; j < toRead.length; j++) {
    const value = read.values[j] ?? null;
    const i = at === undefined ? j : (at[j] as number);
    if (value !== null) cache.offer(spaces[i] as string, rests[i] as string, value, ticket, invalidated, now);
  }
  if (at === undefined) return read;
  for (let j = 0; j < at.length; j++) values[at[j] as number] = read.values[j] ?? null;
  const unread = read.unread;
  if (unread === undefined) return { values, unread: undefined };
  return { values, unread: { ...unread, indexes: unread.indexes.map((j) => at[j] as number) } };
}

/** Drops `keys` from the read cache before a write of this process: its own reads see its writes. */
function invalidateLocally(link: RedisLink, keys: Iterable<string>): void {
  const cache = link.cache;
  if (cache !== undefined) for (const key of keys) cache.invalidate(key);
}

/** Sets every pair with MSET, atomically per hash slot: `RedisConnection.mset`. */
export async function mset(
  link: RedisLink,
  entries: ReadonlyArray<readonly [string, string | Buffer]>,
): Promise<void> {
  if (entries.length === 0) return;
  if (link.cache !== undefined)
    invalidateLocally(
      link,
      entries.map(([key]) => key),
    );
  if (link.mode === 'single') {
    // One group, so one command built in one pass: an upload's MSET has thousands of arguments,
    // and every intermediate array of them is garbage to collect.
    const command = new Array<string | Buffer>(1 + 2 * entries.length);
    command[0] = 'MSET';
    for (let i = 0; i < entries.length; i++) {
      const [key, value] = entries[i] as readonly [string, string | Buffer];
      command[1 + 2 * i] = key;
      command[2 + 2 * i] = value;
    }
    await link.run(() => link.transport.send(entries[0]?.[0], false, command), 'mset');
    return;
  }
  await writeGroups(
    link,
    entries.map(([key]) => key),
    (group) => link.transport.send(group.keys[0], false, ['MSET', ...flatPairs(entries, group)]),
    'mset',
  );
}

/** Sets every entry, some with an expiry time, atomically per hash slot: `RedisConnection.setMany`. */
export async function setMany(
  link: RedisLink,
  entries: ReadonlyArray<readonly [string, string | Buffer, number | undefined]>,
): Promise<void> {
  if (entries.length === 0) return;
  if (entries.every(([, , expiresAt]) => expiresAt === undefined)) {
    await mset(
      link,
      entries.map(([key, value]) => [key, value] as const),
    );
    return;
  }
  if (link.cache !== undefined)
    invalidateLocally(
      link,
      entries.map(([key]) => key),
    );
  await writeGroups(
    link,
    entries.map(([key]) => key),
    (group) =>
      link.transport.transaction(
        group.keys[0] as string,
        group.indexes.map((index) => {
          const [key, value, expiresAt] = entries[index] as (typeof entries)[number];
          return expiresAt === undefined
            ? ['SET', key, value]
            : ['SET', key, value, 'PXAT', String(Math.ceil(expiresAt))];
        }),
      ),
    'multi_set',
  );
}

/** Deletes `keys` atomically per hash slot, saying which existed: `RedisConnection.deleteEach`. */
export async function deleteEach(link: RedisLink, keys: readonly string[]): Promise<number[]> {
  if (keys.length === 0) return [];
  invalidateLocally(link, keys);
  const existed = new Array<number>(keys.length).fill(0);
  await writeGroups(
    link,
    keys,
    async (group) => {
      const replies = await link.transport.transaction(
        group.keys[0] as string,
        group.keys.map((key) => ['DEL', key]),
      );
      group.indexes.forEach((index, i) => {
        existed[index] = Number(replies[i]);
      });
    },
    'multi_del',
  );
  return existed;
}

/** `[key, value, key, value, ...]` of the entries of one group, for MSET. */
function flatPairs(
  entries: ReadonlyArray<readonly [string, string | Buffer]>,
  group: BatchGroup,
): RedisCommand {
  const flat: Array<string | Buffer> = [];
  for (const index of group.indexes) {
    const [key, value] = entries[index] as readonly [string, string | Buffer];
    flat.push(key, value);
  }
  return flat;
}

/** Whether `keys` are whole key strings rather than {@link SplitKeys}. */
function isWhole(keys: readonly string[] | SplitKeys): keys is readonly string[] {
  return Array.isArray(keys);
}
