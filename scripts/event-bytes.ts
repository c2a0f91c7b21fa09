/**
 * `npm run build && node --import tsx scripts/event-bytes.ts [requests]`: how many bytes of Redis
 * memory the event stream takes per ranking request, for sizing a Redis (docs/guides/deploy.md). The
 * template app (from `dist/`, as `rankd run` serves it) ranks the spec's request shape — 24 of the
 * template's products for the query "candle", a page of 8 — `requests` times (2000 by default)
 * into a fresh test `redis-server`, with the default event kinds and with IMPRESSION and MODEL,
 * each with `EVENTS_FEATURES=shown` (FEATURE_ROWS, and every candidate's FEATURE events in 1% of
 * requests) and `off`, and prints `MEMORY USAGE <stream> SAMPLES 0` ÷ `XLEN`. No byte cap applies.
 */
import { readFileSync } from 'node:fs';
import { createClient } from 'redis';
import { startTestRedis } from '../test/helpers/redis-server.js';

const { loadApp } = await import('../dist/cli/load-app.js');
const { buildServer } = await import('../dist/http/build-server.js');
const { loadConfig } = await import('../dist/config/index.js');

const REQUESTS = Number(process.argv[2] ?? 2000);
const CASES = [
  { name: 'default kinds, EVENTS_FEATURES=shown (the default)', env: {} },
  { name: 'default kinds, EVENTS_FEATURES=off', env: { EVENTS_FEATURES: 'off' } },
  { name: 'IMPRESSION,MODEL, EVENTS_FEATURES=shown', env: { EVENTS_KINDS: 'IMPRESSION,MODEL' } },
  { name: 'IMPRESSION,MODEL only', env: { EVENTS_KINDS: 'IMPRESSION,MODEL', EVENTS_FEATURES: 'off' } },
];

const redis = await startTestRedis();
try {
  const app = await loadApp(new URL('../template/pipelines/main.ts', import.meta.url).pathname);
  const products = readFileSync(new URL('../template/data/products.jsonl', import.meta.url), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  for (const [i, { name, env }] of CASES.entries()) {
    const project = `bytes${i}`;
    const server = await buildServer({
      config: loadConfig({
        REDIS_URL: redis.url,
        LOG_LEVEL: 'silent',
        PROJECT_NAME: project,
        EVENTS_STREAM_MAX_BYTES: '0',
        ...env,
      }),
      eventBuffering: { flushIntervalMs: 60_000 },
      app,
    });
    if (!(await server.rankd.redis.waitUntilReady(5000))) throw new Error('Redis did not answer');
    const upload = await server.inject({
      method: 'POST',
      url: '/api/v1/entities/upload',
      payload: { entity_type: 'product', entities: products },
    });
    if (upload.statusCode !== 200) throw new Error(upload.body);
    for (let r = 0; r < REQUESTS; r++) {
      // 24 distinct products of the 60, a different set per request.
      const ids = new Set(Array.from({ length: 24 }, (_, c) => `p${((r * 7 + c * 13) % 60) + 1}`));
      const res = await server.inject({
        method: 'POST',
        url: '/api/v1/ranking',
        payload: {
          request_id: `req-${r}`,
          query: { query: 'candle' },
          candidates: [...ids].map((product_id) => ({ product_id })),
          user_page_size: 8,
        },
      });
      if (res.statusCode !== 200) throw new Error(res.body);
      if (r % 200 === 199) await server.rankd.events.flush();
    }
    await server.rankd.events.flush();
    const client = createClient({ url: redis.url });
    await client.connect();
    const key = `${project}:events`;
    const bytes = Number(await client.sendCommand(['MEMORY', 'USAGE', key, 'SAMPLES', '0']));
    const entries = await client.xLen(key);
    await client.close();
    const { written } = server.rankd.events.stats();
    await server.close();
    console.log(
      `${name}: ${entries} requests, ${(written / entries).toFixed(1)} events each, ` +
        `${Math.round(bytes / entries)} bytes of stream per request (${(bytes / 2 ** 20).toFixed(1)} MiB in all)`,
    );
  }
} finally {
  await redis.stop();
}
