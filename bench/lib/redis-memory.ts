/** The two commands these measurements need, as any node-redis client has them. */
export interface RedisInfo {
  info(section: string): Promise<string>;
  sendCommand(args: string[]): Promise<unknown>;
}

/** `used_memory` from `INFO memory`: what Redis has allocated, in bytes. */
export async function usedMemory(client: RedisInfo): Promise<number> {
  const info = await client.info('memory');
  const match = /^used_memory:(\d+)/m.exec(info);
  if (!match) throw new Error('INFO memory has no used_memory');
  return Number(match[1]);
}

/**
 * The mean of `MEMORY USAGE <key> SAMPLES 0` over `keys`: the bytes Redis attributes to one key
 * (its value, its key string and their allocation overheads), without the shared hash tables.
 */
export async function meanMemoryUsage(client: RedisInfo, keys: readonly string[]): Promise<number> {
  let total = 0;
  for (const key of keys) {
    const bytes = (await client.sendCommand(['MEMORY', 'USAGE', key, 'SAMPLES', '0'])) as number | null;
    if (bytes === null) throw new Error(`MEMORY USAGE: no key ${key}`);
    total += bytes;
  }
  return total / keys.length;
}

/** What one kind of data costs in Redis, measured both ways. */
export interface MemoryCost {
  /** `used_memory` after minus before, per item: includes the keyspace's hash tables (and TTL table). */
  bytesPerItemInfo: number;
  /** Mean `MEMORY USAGE` of sampled keys. */
  bytesPerItemSampled: number;
  /** `used_memory` growth per 100,000 items, in MB (2^20 bytes). */
  mbPer100k: number;
  /** The same per million, in MB: what sizing needs. */
  mbPerMillion: number;
}

/** Measures what `write` adds to Redis: `items` of them, `sampleKeys` of which are read with MEMORY USAGE. */
export async function measureMemory(
  client: RedisInfo,
  items: number,
  sampleKeys: readonly string[],
  write: () => Promise<void>,
): Promise<MemoryCost> {
  const before = await usedMemory(client);
  await write();
  const after = await usedMemory(client);
  const perItem = (after - before) / items;
  return {
    bytesPerItemInfo: Math.round(perItem),
    bytesPerItemSampled: Math.round(await meanMemoryUsage(client, sampleKeys)),
    mbPer100k: Math.round(((perItem * 100_000) / 2 ** 20) * 10) / 10,
    mbPerMillion: Math.round((perItem * 1_000_000) / 2 ** 20),
  };
}
