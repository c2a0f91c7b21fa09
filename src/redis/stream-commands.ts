/** Commands on streams: XADD in one MULTI/EXEC, XTRIM, XRANGE, and a stream's size with its node's memory. */
import type { RedisLink } from './link.js';
import { type MemoryReport, parseMemoryInfo } from './out-of-memory.js';

/** Appends entries to stream `key`, capped at about `maxLength`, all or none: `RedisConnection.appendToStream`. */
export async function appendToStream(
  link: RedisLink,
  key: string,
  entries: ReadonlyArray<readonly string[]>,
  maxLength: number,
): Promise<void> {
  if (entries.length === 0) return;
  const cap = String(maxLength);
  await link.run(
    () =>
      link.transport.transaction(
        key,
        entries.map((fields) => ['XADD', key, 'MAXLEN', '~', cap, '*', ...fields]),
      ),
    'multi_xadd',
    true,
    key,
  );
}

/** XTRIM of stream `key`, whole nodes only; how many entries went: `RedisConnection.trimStream`. */
export async function trimStream(
  link: RedisLink,
  key: string,
  strategy: 'MAXLEN' | 'MINID',
  threshold: string,
): Promise<number> {
  return Number(
    await link.run(
      () => link.transport.send(key, false, ['XTRIM', key, strategy, '~', threshold]),
      'xtrim',
      true,
      key,
    ),
  );
}

/** Bytes and entries of stream `key`, with its node's `INFO memory`: `RedisConnection.streamSize`. */
export async function streamSize(
  link: RedisLink,
  key: string,
): Promise<{ bytes: number; entries: number; memory: MemoryReport | undefined }> {
  const [bytes, entries, info] = await link.run(
    () =>
      Promise.all([
        link.transport.send(key, true, ['MEMORY', 'USAGE', key, 'SAMPLES', '100']),
        link.transport.send(key, true, ['XLEN', key]),
        link.transport.sendToNodeOf(key, ['INFO', 'memory']),
      ]),
    'memory_usage',
    true,
    key,
  );
  return {
    bytes: Number(bytes ?? 0),
    entries: Number(entries ?? 0),
    memory: parseMemoryInfo(String(info)),
  };
}

/** Up to `count` entries of stream `key` from `start` to `end` (XRANGE): `RedisConnection.readStream`. */
export async function readStream(
  link: RedisLink,
  key: string,
  start: string,
  end: string,
  count: number,
): Promise<Array<{ id: string; fields: Record<string, string> }>> {
  const reply = (await link.run(
    () => link.transport.send(key, true, ['XRANGE', key, start, end, 'COUNT', String(count)]),
    'xrange',
    true,
    key,
  )) as Array<[Buffer | string, Array<Buffer | string>]> | null;
  return (reply ?? []).map(([id, flat]) => {
    // Field names are whatever the entry's writer chose: none may reach Object.prototype.
    const fields: Record<string, string> = Object.create(null);
    for (let i = 0; i + 1 < flat.length; i += 2) fields[String(flat[i])] = String(flat[i + 1]);
    return { id: String(id), fields };
  });
}
