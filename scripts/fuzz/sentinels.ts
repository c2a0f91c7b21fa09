/**
 * Sentinels: entities and feature rows written before the run under ids the fuzzer never sends
 * (they hold {@link SENTINEL_MARK}; caseAt rewrites that mark out of every request). Afterwards
 * they must be exactly as they were: byte for byte in Redis (every key whose name holds the mark),
 * and as read back over HTTP. A request that damages data it does not name shows up here.
 */
import { createClient, RESP_TYPES } from 'redis';
import { SENTINEL_MARK } from './cases.js';

const PRODUCT = `${SENTINEL_MARK}-product-1`;
const USER = `${SENTINEL_MARK}-user-1`;

/** What the sentinels were: HTTP reads by label, and Redis keys → value bytes (hex) when Redis is known. */
export interface SentinelSnapshot {
  http: Record<string, string>;
  redis?: Record<string, string>;
}

async function post(base: string, path: string, body: unknown): Promise<string> {
  const response = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`sentinels: ${path} answered ${response.status}: ${text}`);
  return text;
}

/** The reads whose answers must not change: each sentinel entity and feature row over HTTP. */
async function readOverHttp(base: string): Promise<Record<string, string>> {
  return {
    product: await post(base, '/api/v1/entities/get', { entity_type: 'product', entity_ids: [PRODUCT] }),
    user: await post(base, '/api/v1/entities/get', { entity_type: 'user', entity_ids: [USER] }),
    product_features: await post(base, '/api/v1/features/get', {
      features: ['product_stats:ctr_7d', 'product_stats:embedding', 'product_sales:units_30d'],
      entity_ids: [PRODUCT],
    }),
    user_features: await post(base, '/api/v1/features/get', {
      feature_view: 'user_profile',
      entity_ids: [USER],
    }),
  };
}

/** Every key holding the mark and its value's bytes, read with a plain client (strings only: rankd writes no other type there). */
async function readRedis(url: string): Promise<Record<string, string>> {
  const client = createClient({ url });
  client.on('error', () => undefined);
  await client.connect();
  try {
    const keys: string[] = [];
    let cursor = '0';
    do {
      const reply = await client.scan(cursor, { MATCH: `*${SENTINEL_MARK}*`, COUNT: 1000 });
      cursor = String(reply.cursor);
      keys.push(...reply.keys.map(String));
    } while (cursor !== '0');
    const buffers = client.withTypeMapping({ [RESP_TYPES.BLOB_STRING]: Buffer });
    const values: Record<string, string> = {};
    for (const key of keys.sort()) {
      const value = (await buffers.get(key)) as Buffer | null;
      values[key] = value === null ? '(not a string)' : value.toString('hex');
    }
    return values;
  } finally {
    await client.close();
  }
}

/** Writes the sentinels through the API and records what they are. */
export async function writeSentinels(base: string, redisUrl: string | undefined): Promise<SentinelSnapshot> {
  await post(base, '/api/v1/entities/upload', {
    entity_type: 'product',
    entities: [
      {
        product_id: PRODUCT,
        brand: 'Sentinel & Co',
        price: 12.5,
        categories: ['home'],
        title: 'blue candle',
      },
    ],
  });
  await post(base, '/api/v1/entities/upload', {
    entity_type: 'user',
    entities: [{ user_id: USER, tier: 'gold' }],
  });
  // A fixed recent time: a row expires at event time + TTL (30 days), long after the run.
  const eventTimestamp = new Date(Date.now() - 3_600_000).toISOString();
  await post(base, '/api/v1/features/upload', {
    feature_view: 'product_stats',
    rows: [
      {
        entity_id: PRODUCT,
        ctr_7d: 0.25,
        purchase_past_15_days: 7,
        embedding: [1, 0, 0, 0, 0, 0, 0, 0.5],
        event_timestamp: eventTimestamp,
      },
    ],
  });
  await post(base, '/api/v1/features/upload', {
    feature_view: 'product_sales',
    rows: [{ entity_id: PRODUCT, units_30d: 42, revenue_30d: 99.5, event_timestamp: eventTimestamp }],
  });
  await post(base, '/api/v1/features/upload', {
    feature_view: 'user_profile',
    rows: [
      {
        entity_id: USER,
        price_sensitivity: 0.1,
        preferred_brand: 'Sentinel & Co',
        event_timestamp: eventTimestamp,
      },
    ],
  });
  const snapshot: SentinelSnapshot = { http: await readOverHttp(base) };
  if (redisUrl !== undefined) {
    snapshot.redis = await readRedis(redisUrl);
    // 2 entities and 3 rows: fewer keys found means the check would compare nothing.
    if (Object.keys(snapshot.redis).length < 5)
      throw new Error(
        `sentinels: only ${Object.keys(snapshot.redis).length} keys hold "${SENTINEL_MARK}" in Redis`,
      );
  }
  return snapshot;
}

/**
 * What changed since `before`: one line per difference. Over HTTP only when `httpToo` (the server
 * may have stopped answering); in Redis whenever the snapshot has it.
 */
export async function verifySentinels(
  base: string,
  redisUrl: string | undefined,
  before: SentinelSnapshot,
  httpToo: boolean,
): Promise<string[]> {
  const problems: string[] = [];
  if (before.redis !== undefined && redisUrl !== undefined) {
    const now = await readRedis(redisUrl);
    for (const [key, value] of Object.entries(before.redis)) {
      if (!(key in now)) problems.push(`Redis key ${key} is gone`);
      else if (now[key] !== value) problems.push(`Redis key ${key} changed: ${value} → ${now[key]}`);
    }
    for (const key of Object.keys(now))
      if (!(key in before.redis)) problems.push(`Redis key ${key} appeared`);
  }
  if (httpToo) {
    const now = await readOverHttp(base).catch(
      (error: Error) => ({ error: error.message }) as Record<string, string>,
    );
    for (const [label, text] of Object.entries(before.http))
      if (now[label] !== text)
        problems.push(`HTTP read of ${label} changed: ${text} → ${now[label] ?? JSON.stringify(now)}`);
  }
  return problems;
}
