/** Commands on hashes: HSETNX, HGETALL, HMGET, strings in and out. */
import type { RedisLink } from './link.js';

/** HSETNX: sets a hash field unless it exists. */
export async function setFieldIfAbsent(
  link: RedisLink,
  key: string,
  field: string,
  value: string,
): Promise<void> {
  await link.run(() => link.transport.send(key, false, ['HSETNX', key, field, value]), 'hsetnx', true, key);
}

/** HGETALL as strings. */
export async function getAllFields(link: RedisLink, key: string): Promise<Record<string, string>> {
  const reply = (await link.run(
    () => link.transport.send(key, true, ['HGETALL', key]),
    'hgetall',
    true,
    key,
  )) as Array<Buffer> | Record<string, Buffer> | Map<Buffer, Buffer>;
  const out: Record<string, string> = Object.create(null);
  const pairs: Array<[unknown, unknown]> = Array.isArray(reply)
    ? reply.flatMap((v, i) => (i % 2 === 0 ? [[v, reply[i + 1]] as [unknown, unknown]] : []))
    : reply instanceof Map
      ? [...reply.entries()]
      : Object.entries(reply);
  for (const [field, value] of pairs) out[String(field)] = String(value);
  return out;
}

/** HMGET as strings; null where a field is missing. */
export async function getFields(
  link: RedisLink,
  key: string,
  fields: readonly string[],
): Promise<Array<string | null>> {
  const values = (await link.run(
    () => link.transport.send(key, true, ['HMGET', key, ...fields]),
    'hmget',
    true,
    key,
  )) as Array<Buffer | null>;
  return values.map((v) => (v === null ? null : v.toString('utf8')));
}
