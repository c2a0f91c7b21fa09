/**
 * The read cache (`READ_CACHE_MB`, docs/reference/feature-store.md#read-cache): once a write is
 * acknowledged and its invalidation delivered (`syncInvalidations`, a PING round trip on each
 * tracking connection, never a sleep), no read returns the old value, whoever wrote: this process,
 * another rankd process, or a client straight on Redis. Random interleavings of writes and reads
 * from two servers on one Redis (a cluster under `npm run test:cluster`) and a direct client; then
 * what drops the cache: a killed tracking connection, FLUSHALL, a Redis restart, another
 * PROJECT_NAME or INDEX_VERSION; and the cache's own bounds (bytes, doorkeeper, TTL, a write racing
 * a read).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { createStores, type Stores } from '../src/app/create-stores.js';
import {
  defineApp,
  defineModel,
  defineRankingPipeline,
  getFeature,
  ProductEntity,
  type RankdApp,
} from '../src/index.js';
import { READ_CACHE_TTL_MS, ReadCache } from '../src/redis/read-cache.js';
import { seededRandom } from '../src/training/random.js';
import { ProductClicks } from './helpers/clicks-ranking.js';
import { RawRedis } from './helpers/raw-redis.js';
import { startTestRedis, TEST_REDIS_MODE, type TestRedis } from './helpers/redis-server.js';
import { postJson, testConfig, testServer } from './helpers/server.js';

/** Products scored by their stored `version` (−1 when not in the index) × 1000 plus their stored clicks. */
const app: RankdApp = defineApp({
  name: 'read-cache',
  featureViews: [ProductClicks],
  pipelines: [
    defineRankingPipeline({
      name: 'Ranking',
      candidate: ProductEntity,
      model: defineModel({
        name: 'VersionAndClicks',
        features: ['product_stats:clicks'],
        score: (products) =>
          products.map(
            (p) =>
              Number((p as { version?: number }).version ?? -1) * 1000 +
              Number(getFeature(p, 'product_stats:clicks')),
          ),
      }),
    }),
  ],
});

const CACHE_ENV = { READ_CACHE_MB: '4' };

/** Resolves once `check` holds; a harness failure (not an assertion on time) after 20 s. */
async function until(what: string, check: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not after 20 s`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function cacheOf(server: FastifyInstance) {
  const cache = server.rankd.redis.readCache;
  assert.ok(cache, 'the server has a read cache');
  return cache;
}

/** Waits until `server`'s cache serves (every tracking connection tracks). */
async function serving(server: FastifyInstance): Promise<void> {
  await until('the read cache serves', () => cacheOf(server).enabled);
}

/** Every invalidation Redis sent before now has reached both servers' caches. */
async function delivered(...servers: FastifyInstance[]): Promise<void> {
  await Promise.all(servers.map((server) => server.rankd.redis.syncInvalidations()));
}

async function ok(server: FastifyInstance, url: string, body: unknown) {
  const res = await postJson(server, url, body);
  assert.equal(res.status, 200, `${url} ${JSON.stringify(body)} → ${JSON.stringify(res.body)}`);
  return res.body;
}

const uploadVersion = (server: FastifyInstance, id: string, version: number) =>
  ok(server, '/api/v1/entities/upload', { entity_type: 'product', entities: [{ product_id: id, version }] });
const deleteEntity = (server: FastifyInstance, id: string) =>
  ok(server, '/api/v1/entities/delete', { entity_type: 'product', entity_ids: [id] });
const writeClicks = (server: FastifyInstance, id: string, clicks: number) =>
  ok(server, '/api/v1/features/upload', { feature_view: 'product_stats', rows: [{ entity_id: id, clicks }] });

/** What a server reads now: each id's stored version (undefined: none) and clicks, three ways. */
async function readAll(server: FastifyInstance, ids: readonly string[]) {
  const got = await ok(server, '/api/v1/entities/get', { entity_type: 'product', entity_ids: ids });
  const features = await ok(server, '/api/v1/features/get', { feature_view: 'product_stats', entity_ids: ids });
  const ranked = await ok(server, '/api/v1/ranking', {
    request_id: 'r',
    candidates: ids.map((product_id) => ({ product_id })),
    user_page_size: ids.length,
  });
  const scores = new Map<string, number>(
    ranked.ranked_candidates.map((c: { candidate_id: string; ranked_score: number }) => [
      c.candidate_id,
      c.ranked_score,
    ]),
  );
  return ids.map((id, i) => ({
    id,
    entity: got.entities[id] as { version?: number } | undefined,
    clicks: features.results[i].values['product_stats:clicks'] as number,
    score: scores.get(id),
  }));
}

/** The expected reads of the model: versions and clicks of each id. */
class Model {
  readonly versions = new Map<string, number>();
  readonly clicks = new Map<string, number>();

  check(reads: Awaited<ReturnType<typeof readAll>>, what: string): void {
    for (const { id, entity, clicks, score } of reads) {
      const version = this.versions.get(id);
      const stored = this.clicks.get(id) ?? 0;
      const context = `${what}: ${id}`;
      assert.deepEqual(entity, version === undefined ? undefined : { product_id: id, version }, context);
      assert.equal(clicks, stored, context);
      assert.equal(score, (version ?? -1) * 1000 + stored, context);
    }
  }
}

describe('two rankd processes and a direct client on one Redis', () => {
  let redis: TestRedis;
  let a: FastifyInstance;
  let b: FastifyInstance;
  let raw: RawRedis;
  /** A writer straight on Redis with rankd's encodings but no cache: feature rows as another service writes them. */
  let direct: Stores;

  before(async () => {
    redis = await startTestRedis();
    a = await testServer(redis, { app, env: CACHE_ENV });
    b = await testServer(redis, { app, env: CACHE_ENV });
    raw = await RawRedis.connect(redis);
    direct = createStores(testConfig(redis));
    direct.redis.connect();
    await Promise.all([serving(a), serving(b), direct.redis.waitUntilReady(5000)]);
  });

  after(async () => {
    await a?.close();
    await b?.close();
    await raw?.close();
    await direct?.redis.close();
    await redis?.stop();
  });

  test('random interleavings: every read after an acknowledged write and its delivery sees the write', async () => {
    const ids = Array.from({ length: 6 }, (_, i) => `rc${i}`);
    const model = new Model();
    const next = seededRandom(20);
    const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)] as T;
    const entityKey = (id: string) => raw.keys.entity('product', id);
    const rowKey = (id: string) => raw.keys.featureRow('product_stats', [id], 'product');
    let version = 0;
    /** The writes, each of one id; each updates the model once acknowledged. */
    const operations: Array<(id: string) => Promise<unknown>> = [
      async (id) => {
        const v = ++version;
        await uploadVersion(pick([a, b]), id, v);
        model.versions.set(id, v);
      },
      async (id) => {
        await deleteEntity(pick([a, b]), id);
        model.versions.delete(id);
      },
      async (id) => {
        const clicks = ++version;
        await writeClicks(pick([a, b]), id, clicks);
        model.clicks.set(id, clicks);
      },
      async (id) => {
        const v = ++version;
        const key = entityKey(id);
        await (await raw.nodeForKey(key)).set(key, JSON.stringify({ product_id: id, version: v }));
        model.versions.set(id, v);
      },
      async (id) => {
        const key = entityKey(id);
        await (await raw.nodeForKey(key)).del(key);
        model.versions.delete(id);
      },
      async (id) => {
        const clicks = ++version;
        await direct.features.write(ProductClicks, [{ ids: [id], values: { clicks }, eventTimestampMs: Date.now() }]);
        model.clicks.set(id, clicks);
      },
      async (id) => {
        const key = rowKey(id);
        await (await raw.nodeForKey(key)).del(key);
        model.clicks.delete(id);
      },
    ];
    for (let step = 0; step < 60; step++) {
      // A few operations at once, reads among them: a read racing a write must not leave the old
      // value cached. to one id in the same step would make the model's order a guess, so
      // each step writes an id at most once.
      // value cached. Two writes of one id at once through different connections may reach Redis
      // in either order, so a step writes each id at most once.
      const free = [...ids];
      const batch: Array<Promise<unknown>> = [];
      for (let i = 1 + Math.floor(next() * 4); i > 0; i--) {
        if (next() < 0.4) batch.push(readAll(pick([a, b]), ids));
        else batch.push(pick(operations)(free.splice(Math.floor(next() * free.length), 1)[0] as string));
      }
      await Promise.all(batch);
      await delivered(a, b);
      model.check(await readAll(a, ids), `step ${step}, server a`);
      model.check(await readAll(b, ids), `step ${step}, server b`);
    }
    for (const server of [a, b]) {
      const { stats } = cacheOf(server);
      // Not vacuous: values were served from the cache, and writes took them out of it.
      assert.ok(stats.hits > 0, JSON.stringify(stats));
      assert.ok(stats.invalidations > 0, JSON.stringify(stats));
    }
  });
});
