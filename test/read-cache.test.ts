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
import { hashSlot } from '../src/redis/hash-slot.js';
import { READ_CACHE_TTL_MS, ReadCache } from '../src/redis/read-cache.js';
import { seededRandom } from '../src/training/random.js';
import { ProductClicks } from './helpers/clicks-ranking.js';
import { RawRedis } from './helpers/raw-redis.js';
import { asTestRedis, startTestCluster, type TestCluster } from './helpers/redis-cluster.js';
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
  const features = await ok(server, '/api/v1/features/get', {
    feature_view: 'product_stats',
    entity_ids: ids,
  });
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
        await direct.features.write(ProductClicks, [
          { ids: [id], values: { clicks }, eventTimestampMs: Date.now() },
        ]);
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

  test('explain says what of each candidate came from the read cache; the metrics count it', async () => {
    await uploadVersion(a, 'explained', 1);
    await writeClicks(a, 'explained', 5);
    await delivered(a);
    const explained = async () => {
      const body = await ok(a, '/api/v1/ranking', {
        request_id: 'explain',
        candidates: [{ product_id: 'explained' }, { product_id: 'not-stored' }],
        explain: true,
      });
      return Object.fromEntries(
        body.ranked_candidates.map((c: { candidate_id: string; explanation: { read_cache: unknown } }) => [
          c.candidate_id,
          c.explanation.read_cache,
        ]),
      );
    };
    // The first read is let through the doorkeeper, the second stored, the third served.
    assert.deepEqual(await explained(), {
      explained: { entity: false, views: [] },
      'not-stored': { entity: false, views: [] },
    });
    await explained();
    assert.deepEqual(await explained(), {
      explained: { entity: true, views: ['product_stats'] },
      'not-stored': { entity: false, views: [] },
    });
    const metrics = (await a.inject({ method: 'GET', url: '/metrics' })).body;
    const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(metrics)?.[1]);
    const { stats } = cacheOf(a);
    assert.ok(value('rankd_read_cache_hits_total') >= 2, metrics);
    assert.ok(value('rankd_read_cache_hits_total') <= stats.hits);
    assert.ok(value('rankd_read_cache_misses_total') > 0);
    assert.ok(value('rankd_read_cache_bytes') > 0);
    assert.ok(value('rankd_read_cache_entries') >= 2);
    assert.equal(value('rankd_read_cache_serving'), 1);
  });
});

describe('what drops the cache', () => {
  let redis: TestRedis;
  let server: FastifyInstance;
  let raw: RawRedis;

  before(async () => {
    // Persistent, so that a restart keeps the data and only the cache's own state is at stake.
    redis =
      TEST_REDIS_MODE === 'single' ? await startTestRedis({ persistent: true }) : await startTestRedis();
    server = await testServer(redis, { app, env: CACHE_ENV });
    raw = await RawRedis.connect(redis);
    await serving(server);
  });

  after(async () => {
    await server?.close();
    await raw?.close();
    await redis?.stop();
  });

  /** Uploads `id` at `version` and reads it until the cache serves it (a hit counted). */
  async function cached(id: string, version: number): Promise<void> {
    await uploadVersion(server, id, version);
    await delivered(server);
    const hits = cacheOf(server).stats.hits;
    for (let i = 0; i < 3; i++) assert.equal((await readAll(server, [id]))[0]?.entity?.version, version);
    assert.ok(cacheOf(server).stats.hits > hits, 'read from the cache');
  }

  /** Writes `id` at `version` straight on Redis (nothing through rankd). */
  async function writeDirectly(id: string, version: number): Promise<void> {
    const key = raw.keys.entity('product', id);
    await (await raw.nodeForKey(key)).set(key, JSON.stringify({ product_id: id, version }));
  }

  const versionOf = async (id: string) => (await readAll(server, [id]))[0]?.entity?.version;

  test('a lost tracking connection (CLIENT KILL) drops the cache; what was written meanwhile is read once it tracks again', async () => {
    await cached('lost', 1);
    const flushes = cacheOf(server).stats.flushes;
    for (const node of await raw.nodes()) {
      const clients = String(await node.sendCommand(['CLIENT', 'LIST'])).split('\n');
      // The tracking connections: flag t (tracking), B (broadcast).
      for (const line of clients.filter((l) => /flags=\S*t\S*B/.test(l)))
        await node.sendCommand(['CLIENT', 'KILL', 'ID', /id=(\d+)/.exec(line)?.[1] ?? '']);
    }
    // Written while no connection tracks: no invalidation is ever sent for it.
    await writeDirectly('lost', 2);
    await until('the loss is seen and tracking is back', () => {
      const cache = cacheOf(server);
      return cache.stats.flushes > flushes && cache.enabled;
    });
    assert.equal(await versionOf('lost'), 2);
  });

  test('FLUSHALL empties the cache: what it removed reads as missing', async () => {
    await cached('flushed', 1);
    for (const node of await raw.nodes()) await node.flushAll();
    await delivered(server);
    assert.equal(await versionOf('flushed'), undefined);
  });

  test('a Redis restart drops the cache: a value written before the cache tracks again is read', async (t) => {
    if (TEST_REDIS_MODE === 'cluster') return t.skip('a single Redis (the cluster: the failover test below)');
    await cached('restarted', 1);
    const flushes = cacheOf(server).stats.flushes;
    await redis.kill();
    await redis.restart();
    await writeDirectly('restarted', 2);
    await until('the restart is seen and tracking is back', async () => {
      const cache = cacheOf(server);
      return cache.stats.flushes > flushes && cache.enabled && server.rankd.redis.isReady;
    });
    assert.equal(await versionOf('restarted'), 2);
  });

  test('another PROJECT_NAME or INDEX_VERSION on the same Redis: each server reads its own keys, kept exact', async () => {
    const others = await Promise.all([
      testServer(redis, { app, env: { ...CACHE_ENV, INDEX_VERSION: '2' } }),
      testServer(redis, { app, env: { ...CACHE_ENV, PROJECT_NAME: 'other' } }),
    ]);
    try {
      await Promise.all(others.map(serving));
      await cached('shared-id', 1);
      for (const [i, other] of others.entries()) await uploadVersion(other, 'shared-id', 10 + i);
      await delivered(server, ...others);
      for (let round = 0; round < 3; round++) {
        assert.equal(await versionOf('shared-id'), 1);
        for (const [i, other] of others.entries())
          assert.equal((await readAll(other, ['shared-id']))[0]?.entity?.version, 10 + i);
      }
      await uploadVersion(server, 'shared-id', 2);
      await uploadVersion(others[0] as FastifyInstance, 'shared-id', 20);
      await delivered(server, ...others);
      assert.equal(await versionOf('shared-id'), 2);
      assert.equal((await readAll(others[0] as FastifyInstance, ['shared-id']))[0]?.entity?.version, 20);
      assert.equal((await readAll(others[1] as FastifyInstance, ['shared-id']))[0]?.entity?.version, 11);
    } finally {
      await Promise.all(others.map((other) => other.close()));
    }
  });

  test('READ_CACHE_MB=0 (the default): no cache, no tracking connection', async () => {
    const plain = await testServer(redis, { app });
    try {
      assert.equal(plain.rankd.redis.readCache, undefined);
      await plain.rankd.redis.syncInvalidations();
    } finally {
      await plain.close();
    }
  });
});

describe('a Redis Cluster failover', () => {
  let cluster: TestCluster;
  let server: FastifyInstance;
  let raw: RawRedis;

  before(async () => {
    cluster = await startTestCluster({ nodeTimeoutMs: 2000 });
    server = await testServer(asTestRedis(cluster), { app, env: CACHE_ENV });
    raw = await RawRedis.connect(asTestRedis(cluster));
    await serving(server);
  });

  after(async () => {
    await server?.close();
    await raw?.close();
    await cluster?.stop();
  });

  test('the cache follows the new master: writes to it after the failover are seen', async () => {
    const victim = Math.min(...(await cluster.masterPorts()));
    // An id whose key lives on the master that will be killed.
    let id = '';
    for (let n = 0; id === ''; n++) {
      const slot = hashSlot(raw.keys.entity('product', `fo${n}`));
      if ((await cluster.masterOfSlot(slot)) === victim) id = `fo${n}`;
    }
    const key = raw.keys.entity('product', id);
    const versionOf = async () => (await readAll(server, [id]))[0]?.entity?.version;
    await uploadVersion(server, id, 1);
    for (let i = 0; i < 3; i++) assert.equal(await versionOf(), 1);
    const hits = cacheOf(server).stats.hits;
    assert.equal(await versionOf(), 1);
    assert.ok(cacheOf(server).stats.hits > hits, 'read from the cache before the failover');
    await cluster.killMaster();
    // Served again once the replica has taken the slots over (the upload's ack: it holds the value).
    await until('the replica serves the slots', async () => {
      const res = await postJson(server, '/api/v1/entities/get', {
        entity_type: 'product',
        entity_ids: [id],
      });
      return res.status === 200 && res.body.entities[id] !== undefined;
    });
    for (const version of [2, 3]) {
      // The direct client learns the new master as it can (its first tries may go to the dead one).
      await until('the direct write is acknowledged', async () => {
        try {
          await (await raw.nodeForKey(key)).set(key, JSON.stringify({ product_id: id, version }));
          return true;
        } catch {
          return false;
        }
      });
      await until('the cache tracks the new master', () => cacheOf(server).enabled);
      await delivered(server);
      for (let i = 0; i < 3; i++) assert.equal(await versionOf(), version);
    }
  });
});

describe('the cache itself', () => {
  // Keys of these tests are a two-character space (`p:` is tracked, `q:` not) and the rest.
  const ticketAndOffer = (cache: ReadCache, key: string, value: string, now = 0) => {
    const ticket = cache.begin();
    cache.offer(
      key.slice(0, 2),
      key.slice(2),
      Buffer.from(value),
      ticket,
      cache.invalidatedSince(ticket),
      now,
    );
  };

  test('a key is stored on its second read (the doorkeeper), as a copy of the bytes read', () => {
    const cache = new ReadCache(1 << 20, ['p:']);
    cache.enable();
    const read = Buffer.from('abc');
    cache.offer('p:', '1', read, cache.begin(), undefined, 0);
    assert.equal(cache.get('p:', '1', 0), undefined);
    cache.offer('p:', '1', read, cache.begin(), undefined, 0);
    read.write('xyz');
    assert.equal(cache.get('p:', '1', 0)?.toString(), 'abc');
  });

  test('nothing outside the tracked prefixes, nothing while disabled, nothing read across a flush', () => {
    const cache = new ReadCache(1 << 20, ['p:']);
    for (let i = 0; i < 2; i++) ticketAndOffer(cache, 'p:off', 'v');
    assert.equal(cache.get('p:', 'off', 0), undefined);
    cache.enable();
    for (let i = 0; i < 2; i++) ticketAndOffer(cache, 'q:1', 'v');
    assert.equal(cache.get('q:', '1', 0), undefined);
    ticketAndOffer(cache, 'p:1', 'v');
    const ticket = cache.begin();
    cache.flush();
    cache.offer('p:', '1', Buffer.from('old'), ticket, cache.invalidatedSince(ticket), 0);
    assert.equal(cache.get('p:', '1', 0), undefined);
  });

  test('a value whose key was invalidated while its read was out is not stored; others are', () => {
    const cache = new ReadCache(1 << 20, ['p:']);
    cache.enable();
    for (const key of ['p:1', 'p:2']) ticketAndOffer(cache, key, 'seen');
    cache.invalidate('p:1');
    cache.invalidate('p:2');
    const ticket = cache.begin();
    cache.invalidate('p:1');
    const invalidated = cache.invalidatedSince(ticket);
    for (const key of ['p:1', 'p:2'])
      cache.offer('p:', key.slice(2), Buffer.from('old'), ticket, invalidated, 0);
    assert.equal(cache.get('p:', '1', 0), undefined);
    assert.equal(cache.get('p:', '2', 0)?.toString(), 'old');
    // Past what is remembered, a read stores nothing at all.
    const early = cache.begin();
    for (let i = 0; i < 5000; i++) cache.invalidate(`p:x${i}`);
    assert.equal(cache.invalidatedSince(early), 'all');
  });

  test('bounded by bytes; entries read lately outlive those never read again; the TTL ends any entry', () => {
    const capacity = 64 * 1024;
    const cache = new ReadCache(capacity, ['p:']);
    cache.enable();
    const value = 'x'.repeat(300);
    for (let i = 0; i < 2; i++) ticketAndOffer(cache, 'p:hot', value);
    for (let n = 0; n < 2000; n++) {
      for (let i = 0; i < 2; i++) ticketAndOffer(cache, `p:${n}`, value);
      assert.ok(cache.bytes <= capacity, `${cache.bytes} bytes`);
      assert.ok(cache.get('p:', 'hot', 0), `the hot key, after ${n} others`);
    }
    assert.ok(cache.stats.evictions > 0);
    assert.equal(cache.get('p:', 'hot', READ_CACHE_TTL_MS - 1)?.toString(), value);
    assert.equal(cache.get('p:', 'hot', READ_CACHE_TTL_MS), undefined);
  });
});
