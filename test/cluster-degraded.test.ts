/**
 * Degraded reads on a Redis Cluster (3 masters + 3 replicas, started here whatever RANKD_TEST_REDIS
 * says) while one master cannot answer. `cluster-node-timeout` is 60 s, so the master stays out
 * (paused with SIGSTOP, or killed) without a failover for as long as the tests need.
 *
 * With the defaults, a ranking answers 200: the candidates on the out master are ranked with the
 * fields the request sent and their features at their defaults; the `x-rankd-degraded` header (and,
 * with `include_events`, the body) says so; gets answer what they can and list the rest in
 * `unavailable_ids`; metrics count it; writes stay strict. With `onUnreachableShard: 'fail'` and
 * `GETS_ON_UNREACHABLE_SHARD=fail` the same requests answer 503 naming the node's slots. The
 * log names the node and its slots, with cluster advice, then says when it serves again; responses
 * name the node only with `EXPOSE_REDIS_ADDRESS=true` (the degrading server), else `<address>`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { ClientOfflineError, createClient, ErrorReply, TimeoutError } from 'redis';
import { CLUSTER_FAILOVER_ADVICE, clusterFailoverAdvice } from '../src/errors/catalogue.js';
import {
  defineApp,
  defineEntity,
  defineFeatureView,
  defineModel,
  defineRankingPipeline,
  defineSingleEntityPipeline,
  Feature,
  getFeature,
  ProductEntity,
  type RankdApp,
  Type,
} from '../src/index.js';
import { RedisConnection } from '../src/redis/connection.js';
import { hashSlot } from '../src/redis/hash-slot.js';
import { RedisKeys } from '../src/redis/keys.js';
import { outageCause } from '../src/redis/outages.js';
import {
  buildServer,
  ClusterDownError,
  ClusterNodeUnavailableError,
  DEGRADED_HEADER,
  NOT_IN_INDEX_HEADER,
  PartialWriteError,
} from '../src/server.js';
import { find, parsePrometheus } from './helpers/prometheus.js';
import { asTestRedis, startTestCluster, type TestCluster } from './helpers/redis-cluster.js';
import { startTestRedis, type TestRedis } from './helpers/redis-server.js';
import { testConfig } from './helpers/server.js';

/** A helper that waits on a condition: a broken setup, not a timed assertion. */
const WAIT_MS = 30_000;

const Brand = defineEntity({ name: 'brand', fields: { name: Type.String({ default: '' }) } });
const Product = ProductEntity.extend({
  fields: {
    boost: Type.Number({ default: 0 }),
    brand_id: Type.Union([Type.String(), Type.Null()], { default: null }),
  },
  references: { brand_id: { entity: Brand, as: 'brand' } },
});
const ProductStats = defineFeatureView({
  name: 'product_stats',
  entity: Product,
  features: { clicks: Feature.integer({ default: 0 }) },
});
/** Score = stored clicks + the product's boost: both read as 0 when the product's master is out. */
const ClicksModel = defineModel({
  name: 'ClicksModel',
  entity: Product,
  features: ['product_stats:clicks'],
  score: (products) =>
    products.map((p) => Number(getFeature(p, 'product_stats:clicks')) + Number(p.boost ?? 0)),
});
const Ranking = (onUnreachableShard?: 'degrade' | 'fail') =>
  defineRankingPipeline({
    name: 'Ranking',
    candidate: Product,
    model: ClicksModel,
    ...(onUnreachableShard === undefined ? {} : { onUnreachableShard }),
  });
const Score = defineSingleEntityPipeline({
  name: 'Score',
  path: '/score',
  entity: Product,
  model: ClicksModel,
});

/** The keys rankd uses on this cluster (the cluster layout, whatever RANKD_TEST_REDIS says). */
const CLUSTER_KEYS = new RedisKeys('default', '1', 'cluster');

const IDS = Array.from({ length: 40 }, (_, i) => `p${i}`);
/** Stored: boost 100 and clicks i + 1, so a product read in full scores i + 101. */
const storedScore = (id: string) => Number(id.slice(1)) + 101;

/** Collects a server's log lines, parsed. */
class LogLines {
  readonly lines: Array<{ level: number; msg: string }> = [];
  write(line: string): void {
    this.lines.push(JSON.parse(line));
  }
  /** Resolves with the first line (from `from` on) that `wanted` accepts; fails after {@link WAIT_MS}. */
  async until(wanted: (msg: string) => boolean, from = 0): Promise<{ level: number; msg: string }> {
    const deadline = Date.now() + WAIT_MS;
    for (;;) {
      // The main connection's lines: the event stream's connection reports the same nodes in its own.
      const line = this.lines.slice(from).find((l) => l.msg.startsWith('Redis Cluster: ') && wanted(l.msg));
      if (line !== undefined) return line;
      if (Date.now() > deadline) throw new Error(`no such log line; lines: ${JSON.stringify(this.lines)}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

let cluster: TestCluster;
/** Defaults but EXPOSE_REDIS_ADDRESS=true: ranking degrades, gets answer partially; its log lines are kept. */
let degrading: FastifyInstance;
const logs = new LogLines();
/** `onUnreachableShard: 'fail'` for the app, `GETS_ON_UNREACHABLE_SHARD=fail`; addresses hidden (the default). */
let failing: FastifyInstance;
/** The master that holds some products (and their rows), and them. */
let victim: number;
let victimSlots: string;
let onVictim: Set<string>;
/** A brand on the victim, referenced by a product elsewhere: hydrated a level deeper. */
let brandOnVictim: string;
let productElsewhere: string;
const BRANDS = Array.from({ length: 20 }, (_, i) => `b${i}`);

async function server(app: RankdApp, env: Record<string, string>, logStream?: LogLines) {
  const built = await buildServer({
    // A paused node is noticed at the command timeout: short, so the file stays quick.
    config: testConfig(asTestRedis(cluster), { REDIS_COMMAND_TIMEOUT_MS: '400', ...env }),
    app,
    ...(logStream === undefined ? {} : { logStream }),
  });
  assert.ok(await built.rankd.redis.waitUntilReady(5000));
  return built;
}

async function post(target: FastifyInstance, url: string, payload: unknown) {
  const res = await target.inject({ method: 'POST', url, payload: payload as object });
  return {
    status: res.statusCode,
    body: res.json(),
    degraded: res.headers[DEGRADED_HEADER],
    notInIndex: res.headers[NOT_IN_INDEX_HEADER],
  };
}

const rank = (target: FastifyInstance, extra: Record<string, unknown> = {}, ids = IDS) =>
  post(target, '/api/v1/ranking', {
    request_id: 'r1',
    candidates: ids.map((product_id) => ({ product_id })),
    user_page_size: 100,
    ...extra,
  });

before(async () => {
  cluster = await startTestCluster({ nodeTimeoutMs: 60_000 });
  degrading = await server(
    defineApp({ name: 'degrading', featureViews: [ProductStats], pipelines: [Ranking(), Score] }),
    { LOG_LEVEL: 'info', EXPOSE_REDIS_ADDRESS: 'true' },
    logs,
  );
  failing = await server(
    defineApp({
      name: 'failing',
      featureViews: [ProductStats],
      pipelines: [Ranking(), Score],
      onUnreachableShard: 'fail',
    }),
    { GETS_ON_UNREACHABLE_SHARD: 'fail' },
  );
  await upload();
  // The master of the first product's slot: it holds some products, not all (three masters).
  victim = await cluster.masterOfSlot(hashSlot(CLUSTER_KEYS.entity('product', 'p0')));
  victimSlots = await cluster.slotsOf(victim);
  const owners = await Promise.all(
    IDS.map((id) => cluster.masterOfSlot(hashSlot(CLUSTER_KEYS.entity('product', id)))),
  );
  onVictim = new Set(IDS.filter((_id, i) => owners[i] === victim));
  assert.ok(onVictim.size > 0 && onVictim.size < IDS.length, 'the victim holds some products, not all');
  const ranges = victimSlots.split(',').map((range) => range.split('-').map(Number));
  const onVictimSlot = (key: string) => {
    const slot = hashSlot(key);
    return ranges.some(([from = -1, to = from]) => slot >= from && slot <= to);
  };
  brandOnVictim = BRANDS.find((id) => onVictimSlot(CLUSTER_KEYS.entity('brand', id))) as string;
  assert.ok(brandOnVictim !== undefined, 'a brand on the victim');
  productElsewhere = IDS.find((id) => !onVictim.has(id)) as string;
});

after(async () => {
  await degrading?.close();
  await failing?.close();
  await cluster?.stop();
});

/** Uploads every product (boost 100) and its row (clicks i + 1), and the brands: the state each test starts from. */
async function upload(): Promise<void> {
  const brands = await post(degrading, '/api/v1/entities/upload', {
    entity_type: 'brand',
    entities: BRANDS.map((brand_id) => ({ brand_id, name: brand_id })),
  });
  assert.equal(brands.status, 200, JSON.stringify(brands.body));
  const up = await post(degrading, '/api/v1/entities/upload', {
    entity_type: 'product',
    entities: IDS.map((product_id) => ({ product_id, boost: 100 })),
  });
  assert.equal(up.status, 200, JSON.stringify(up.body));
  const rows = await post(degrading, '/api/v1/features/upload', {
    feature_view: 'product_stats',
    rows: IDS.map((entity_id) => ({ entity_id, clicks: Number(entity_id.slice(1)) + 1 })),
  });
  assert.equal(rows.status, 200, JSON.stringify(rows.body));
}

/** Waits until `target` ranks everything in full again (the node serves again). */
async function untilServedInFull(target: FastifyInstance): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const res = await rank(target);
    if (res.status === 200 && res.degraded === undefined) return;
    if (Date.now() > deadline) throw new Error(`still degraded: ${JSON.stringify(res)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The checks every outage shares, whatever its cause. */
async function checkDegradedAnswers(cause: 'timeout' | 'offline' | 'cluster_down'): Promise<void> {
  const address = `127.0.0.1:${victim}`;
  const out = onVictim.size;

  // Ranking: 200, the victim's candidates ranked with what the request sent (p0 sends a boost).
  const ranked = await rank(degrading, {
    include_events: true,
    candidates: IDS.map((product_id) => (product_id === 'p0' ? { product_id, boost: 7 } : { product_id })),
  });
  assert.equal(ranked.status, 200, JSON.stringify(ranked.body));
  assert.equal(ranked.degraded, `entities=${out}; features=${out}`);
  // Not read is not "not in the index": only the degraded header counts them.
  assert.equal(ranked.notInIndex, undefined);
  const scores = Object.fromEntries(
    (ranked.body.ranked_candidates as Array<{ candidate_id: string; ranked_score: number }>).map((c) => [
      c.candidate_id,
      c.ranked_score,
    ]),
  );
  for (const id of IDS) {
    const expected = !onVictim.has(id) ? storedScore(id) : id === 'p0' ? 7 : 0;
    assert.equal(scores[id], expected, id);
  }
  const { degraded } = ranked.body;
  assert.equal(degraded.entities, out);
  assert.equal(degraded.features, out);
  assert.equal(degraded.nodes.length, 1, JSON.stringify(degraded));
  assert.equal(degraded.nodes[0].node, address);
  assert.equal(degraded.nodes[0].slots, victimSlots);
  assert.equal(degraded.nodes[0].cause, cause);
  // An entity found through a reference (a level deeper) on the out master is not found either.
  const referenced = await rank(degrading, {
    candidates: [{ product_id: productElsewhere, brand_id: brandOnVictim }],
  });
  assert.equal(referenced.status, 200, JSON.stringify(referenced.body));
  assert.equal(referenced.degraded, 'entities=1; features=0');
  assert.equal(referenced.body.ranked_candidates[0].ranked_score, storedScore(productElsewhere));
  // Without include_events the body is the spec's: only the header says so.
  const plain = await rank(degrading);
  assert.equal(plain.degraded, `entities=${out}; features=${out}`);
  assert.deepEqual(Object.keys(plain.body), ['ranked_candidates']);

  // Gets: what the other masters hold, and the rest listed apart.
  const got = await post(degrading, '/api/v1/entities/get', { entity_type: 'product', entity_ids: IDS });
  assert.equal(got.status, 200, JSON.stringify(got.body));
  assert.deepEqual(got.body.unavailable_ids, [...onVictim]);
  assert.deepEqual(Object.keys(got.body.entities).sort(), IDS.filter((id) => !onVictim.has(id)).sort());
  assert.equal(got.degraded, `entities=${out}; features=0`);
  const rows = await post(degrading, '/api/v1/features/get', {
    feature_view: 'product_stats',
    entity_ids: IDS,
  });
  assert.equal(rows.status, 200, JSON.stringify(rows.body));
  assert.deepEqual(rows.body.unavailable_ids, [...onVictim]);
  assert.deepEqual(
    rows.body.results.map((r: { entity_id: string }) => r.entity_id),
    IDS.filter((id) => !onVictim.has(id)),
  );
  assert.equal(rows.degraded, `entities=0; features=${out}`);

  // A single-entity pipeline fails by default (a score from defaults would pass for a real one).
  const scored = await post(degrading, '/api/v1/score', { request_id: 's1', product: { product_id: 'p0' } });
  assertNodeNamed(scored, 'single-entity pipeline', true);

  // The failing server: 503 naming the node's slots (not its address: EXPOSE_REDIS_ADDRESS is
  // off), for ranking and gets alike.
  assertNodeNamed(await rank(failing), 'ranking (fail)', false);
  assertNodeNamed(
    await post(failing, '/api/v1/entities/get', { entity_type: 'product', entity_ids: IDS }),
    'entities/get (fail)',
    false,
  );
  assertNodeNamed(
    await post(failing, '/api/v1/features/get', { feature_view: 'product_stats', entity_ids: IDS }),
    'features/get (fail)',
    false,
  );

  // Writes stay strict: the victim's ids are not confirmed, and the answer names the node.
  const write = await post(degrading, '/api/v1/entities/upload', {
    entity_type: 'product',
    entities: IDS.map((product_id) => ({ product_id, boost: 100 })),
  });
  assert.equal(write.status, 503, JSON.stringify(write.body));
  assert.equal(write.body.error_code, 'RANKD_PARTIAL_WRITE');
  assert.deepEqual(write.body.failed_ids, [...onVictim]);
  assert.ok(
    String(write.body.detail).includes(`${address} (master of slots ${victimSlots}`),
    write.body.detail,
  );

  // ... and without EXPOSE_REDIS_ADDRESS, names its slots but not its address.
  const hiddenWrite = await post(failing, '/api/v1/entities/upload', {
    entity_type: 'product',
    entities: IDS.map((product_id) => ({ product_id, boost: 100 })),
  });
  assert.equal(hiddenWrite.status, 503, JSON.stringify(hiddenWrite.body));
  assert.equal(hiddenWrite.body.error_code, 'RANKD_PARTIAL_WRITE');
  assert.ok(
    String(hiddenWrite.body.detail).includes(`<address> (master of slots ${victimSlots}`),
    hiddenWrite.body.detail,
  );
  assert.ok(!String(hiddenWrite.body.detail).includes('127.0.0.1'), hiddenWrite.body.detail);

  // /readyz stays ready (every rankd sees the same outage) and lists the node.
  const ready = await degrading.inject({ method: 'GET', url: '/readyz' });
  assert.equal(ready.statusCode, 200, ready.body);
  assert.deepEqual(
    ready.json().unreachable_nodes.map((n: { node: string; slots: string }) => [n.node, n.slots]),
    [[address, victimSlots]],
  );
  // Without EXPOSE_REDIS_ADDRESS: the node's slots, not its address, and no `redis` field.
  const hiddenReady = await failing.inject({ method: 'GET', url: '/readyz' });
  assert.equal(hiddenReady.statusCode, 200, hiddenReady.body);
  const hidden = hiddenReady.json();
  assert.equal(hidden.redis, undefined);
  assert.deepEqual(
    hidden.unreachable_nodes.map((n: { node: string; slots: string }) => [n.node, n.slots]),
    [['<address>', victimSlots]],
  );
  assert.ok(!hiddenReady.body.includes('127.0.0.1'), hiddenReady.body);
}

/** A 503 RANKD_REDIS_UNAVAILABLE that names the victim and its slots, with cluster advice. */
function assertNodeNamed(
  res: { status: number; body: { detail?: unknown; error_code?: unknown } },
  what: string,
  exposed: boolean,
) {
  assert.equal(res.status, 503, `${what}: ${JSON.stringify(res.body)}`);
  assert.equal(res.body.error_code, 'RANKD_REDIS_UNAVAILABLE', what);
  const detail = String(res.body.detail);
  const node = exposed ? `127.0.0.1:${victim}` : '<address>';
  assert.ok(detail.includes(`node ${node} (master of slots ${victimSlots}:`), `${what}: ${detail}`);
  if (!exposed) assert.ok(!detail.includes('127.0.0.1'), `${what}: ${detail}`);
  assert.match(detail, /failover/, what);
  assert.match(detail, /cluster-node-timeout/, what);
  assert.match(detail, /CLUSTER INFO/, what);
  assert.doesNotMatch(detail, /rankd redis/, what);
  // Only the failed node: not the seed list with the healthy ones.
  for (const port of cluster.ports)
    if (port !== victim)
      assert.ok(!detail.includes(`127.0.0.1:${port}`), `${what} names only the victim: ${detail}`);
}

describe('a master that hangs (SIGSTOP: no answer)', () => {
  test('ranking degrades, gets are partial, the fail setting answers 503 naming the node; then all is back', async () => {
    const from = logs.lines.length;
    cluster.pause(victim);
    try {
      await checkDegradedAnswers('timeout');
      const lost = await logs.until((msg) => msg.includes(`node 127.0.0.1:${victim}`), from);
      assert.ok(lost.level >= 40, 'a warning');
      assert.ok(lost.msg.startsWith('Redis Cluster: '), lost.msg);
      assert.ok(lost.msg.includes(`(master of slots ${victimSlots})`), lost.msg);
      assert.match(lost.msg, /does not answer/);
      assert.match(lost.msg, /failover is probably in progress/);
      assert.match(lost.msg, /cluster-node-timeout/);
      assert.doesNotMatch(lost.msg, /rankd redis/);
      assert.equal(
        logs.lines
          .slice(from)
          .filter((l) => l.msg.startsWith(`Redis Cluster: node 127.0.0.1:${victim} (master`)).length,
        1,
        'one line per outage, not one per request',
      );
    } finally {
      cluster.resume(victim);
    }
    const back = await logs.until((msg) => msg.includes('serves its slots again'), from);
    assert.ok(back.msg.includes(`node 127.0.0.1:${victim} (master of slots ${victimSlots})`), back.msg);
    console.log(
      logs.lines
        .slice(from)
        .map((l) => l.msg)
        .join('\n'),
    );
    await untilServedInFull(degrading);
    await untilServedInFull(failing);
    await upload();
  });

  test('metrics count degraded requests by route and cause, and the entities and rows read as not found', async () => {
    const res = await degrading.inject({ method: 'GET', url: '/metrics' });
    const { samples } = parsePrometheus(res.body);
    const requests = (route: string) =>
      find(samples, 'rankd_degraded_requests_total', { route, cause: 'timeout' })[0]?.value ?? 0;
    // Three rankings (one only for its referenced brand), one entities/get and one features/get above.
    assert.equal(requests('/api/v1/ranking'), 3);
    assert.equal(requests('/api/v1/entities/get'), 1);
    assert.equal(requests('/api/v1/features/get'), 1);
    const reads = (kind: string) =>
      find(samples, 'rankd_degraded_reads_total', { kind, cause: 'timeout' })[0]?.value ?? 0;
    assert.equal(reads('entity'), 3 * onVictim.size + 1);
    assert.equal(reads('feature_row'), 3 * onVictim.size);
    assert.equal(
      find(samples, 'rankd_degraded_reads_total', { kind: 'entity', cause: 'offline' })[0]?.value,
      0,
    );
  });
});

describe('a master that is down (SIGKILL: connections refused)', () => {
  test('the same answers with cause offline; the node restarted serves again, and the log says so', async () => {
    const from = logs.lines.length;
    await cluster.killNode(victim);
    try {
      const lost = await logs.until((msg) => msg.includes(`node 127.0.0.1:${victim}`), from);
      assert.match(lost.msg, /cannot be reached/);
      assert.ok(lost.msg.includes(`(master of slots ${victimSlots})`), lost.msg);
      await checkDegradedAnswers('offline');
    } finally {
      await cluster.restartNode(victim);
    }
    const back = await logs.until((msg) => msg.includes('serves its slots again'), from);
    assert.ok(back.msg.includes(`127.0.0.1:${victim}`), back.msg);
    await untilServedInFull(degrading);
    // Restarted without persistence: it came back empty.
    await upload();
    const ranked = await rank(degrading);
    assert.equal(ranked.degraded, undefined);
    for (const c of ranked.body.ranked_candidates) assert.equal(c.ranked_score, storedScore(c.candidate_id));
  });
});

describe('a command that names no key, sent for a key (the event stream reads INFO memory of its node)', () => {
  test("goes to the key's master: the memory read is that node's, and a master down elsewhere is not reported as it", async () => {
    // A stream on another master than the victim; its node alone gets a maxmemory, to tell whose INFO was read.
    const owners = await Promise.all(
      Array.from({ length: 12 }, (_, i) => `events-${i}`).map(async (key) => ({
        key,
        port: await cluster.masterOfSlot(hashSlot(key)),
      })),
    );
    const { key, port: holder } = owners.find(({ port }) => port !== victim) as (typeof owners)[number];
    const MAXMEMORY = 987_654_321;
    const node = createClient({ url: `redis://127.0.0.1:${holder}` });
    await node.connect();
    await node.configSet('maxmemory', String(MAXMEMORY));
    const lost: string[] = [];
    const redis = new RedisConnection({
      url: asTestRedis(cluster).url,
      clusterNodes: cluster.nodes.split(','),
      connectTimeoutMs: 500,
      commandTimeoutMs: 1000,
      onStateChange: (event, detail) => {
        if (event === 'lost') lost.push(detail);
      },
    });
    redis.connect();
    try {
      assert.ok(await redis.waitUntilReady(5000));
      // Left to node-redis, INFO would go to each master in turn: six reads would reach every master twice.
      for (let i = 0; i < 6; i++) assert.equal((await redis.streamSize(key)).memory?.max, MAXMEMORY);
      await cluster.killNode(victim);
      try {
        for (let i = 0; i < 6; i++) assert.equal((await redis.streamSize(key)).memory?.max, MAXMEMORY);
        assert.deepEqual(
          lost.filter((line) => line.includes(`node 127.0.0.1:${holder} `)),
          [],
        );
      } finally {
        await cluster.restartNode(victim);
      }
    } finally {
      await node.configSet('maxmemory', '0');
      await node.close();
      await redis.close();
    }
    // Restarted without persistence: it came back empty.
    await untilServedInFull(degrading);
    await upload();
  });
});

describe('settings and messages', () => {
  test('the policy: the pipeline wins over the app, the app over the kind (ranking degrades, single-entity fails)', () => {
    const policies = (options: Parameters<typeof defineApp>[0]) =>
      defineApp({ featureViews: [ProductStats], ...options }).pipelines.map(
        (p) => `${p.pipeline.name}:${p.onUnreachableShard}`,
      );
    assert.deepEqual(policies({ pipelines: [Ranking(), Score] }), ['Ranking:degrade', 'Score:fail']);
    assert.deepEqual(policies({ pipelines: [Ranking(), Score], onUnreachableShard: 'fail' }), [
      'Ranking:fail',
      'Score:fail',
    ]);
    assert.deepEqual(policies({ pipelines: [Ranking(), Score], onUnreachableShard: 'degrade' }), [
      'Ranking:degrade',
      'Score:degrade',
    ]);
    assert.deepEqual(policies({ pipelines: [Ranking('degrade')], onUnreachableShard: 'fail' }), [
      'Ranking:degrade',
    ]);
    assert.throws(
      () => defineApp({ onUnreachableShard: 'ignore' as never }),
      /onUnreachableShard is "ignore"; use 'degrade' or 'fail'/,
    );
  });

  test('only outages of a node degrade: a refused command or a bug is no outage', () => {
    assert.equal(outageCause(new ClientOfflineError()), 'offline');
    assert.equal(outageCause(new Error('connect ECONNREFUSED 127.0.0.1:7000')), 'offline');
    assert.equal(outageCause(new TimeoutError('no answer within 400 ms')), 'timeout');
    assert.equal(outageCause(new ErrorReply('CLUSTERDOWN The cluster is down')), 'cluster_down');
    assert.equal(
      outageCause(new ErrorReply('TRYAGAIN Multiple keys request during rehashing of slot')),
      'cluster_down',
    );
    assert.equal(outageCause(new ErrorReply('MASTERDOWN Link with MASTER is down')), 'cluster_down');
    assert.equal(outageCause(new ErrorReply('LOADING Redis is loading the dataset in memory')), 'busy');
    assert.equal(
      outageCause(new ErrorReply('WRONGTYPE Operation against a key holding the wrong kind of value')),
      undefined,
    );
    assert.equal(
      outageCause(new ErrorReply("NOPERM this user has no permissions to run the 'mget' command")),
      undefined,
    );
    assert.equal(outageCause(new ErrorReply('OOM command not allowed')), undefined);
    assert.equal(outageCause(new TypeError('x is not a function')), undefined);
    assert.equal(outageCause('a string'), undefined);
  });

  test('errors name the failed nodes and their slots and give cluster advice', () => {
    const one = new ClusterNodeUnavailableError('10.0.0.1:7000,10.0.0.2:7000', [
      { node: '10.0.0.3:7000', slots: '0-5460', reason: 'The client is offline' },
    ]);
    assert.equal(one.code, 'RANKD_REDIS_UNAVAILABLE');
    assert.equal(one.statusCode, 503);
    assert.match(
      one.message,
      /^The Redis Cluster node 10\.0\.0\.3:7000 \(master of slots 0-5460: The client is offline\) is not available\. A failover is probably in progress/,
    );
    assert.doesNotMatch(one.message, /10\.0\.0\.1/);
    const two = new ClusterNodeUnavailableError('seeds', [
      { node: 'a:1', slots: '0-99', reason: 'x' },
      { node: 'b:2', slots: '100-199', reason: 'y' },
    ]);
    assert.match(
      two.message,
      /^The Redis Cluster nodes a:1 \(master of slots 0-99: x\) and b:2 \(master of slots 100-199: y\) are not available/,
    );
    // Responses (the public message) name the slots, not the addresses.
    assert.match(
      String(one.publicMessage),
      /^The Redis Cluster node <address> \(master of slots 0-5460: The client is offline\) is not available\. A failover/,
    );
    assert.doesNotMatch(String(one.publicMessage), /10\.0\.0\./);
    assert.match(
      String(two.publicMessage),
      /^The Redis Cluster nodes <address> \(master of slots 0-99: x\) and <address>/,
    );
    const partial = new PartialWriteError(
      ['p1'],
      ['p2'],
      new Error('The client is offline'),
      '10.0.0.1:7000,10.0.0.2:7000',
      [{ node: 'b:2', slots: '100-199', reason: 'connect ECONNREFUSED b:2' }],
    );
    assert.match(
      partial.message,
      /^The Redis Cluster node b:2 \(master of slots 100-199: connect ECONNREFUSED b:2\) failed during the write: 1 written/,
    );
    assert.match(partial.message, /cluster-node-timeout/);
    assert.match(
      String(partial.publicMessage),
      /^The Redis Cluster node <address> \(master of slots 100-199: connect ECONNREFUSED <address>\) failed during the write: 1 written/,
    );
    assert.match(String(partial.publicMessage), /cluster-node-timeout/);
    // No master serving: addresses only in the log's message; the advice quotes the node timeout when known.
    const down = new ClusterDownError(
      '10.0.0.1:7000,10.0.0.2:7000',
      'no master serves (10.0.0.3:7000: no answer within 400 ms)',
      clusterFailoverAdvice(5000),
    );
    assert.equal(down.code, 'RANKD_REDIS_UNAVAILABLE');
    assert.equal(down.statusCode, 503);
    assert.match(
      down.message,
      /^No master of the Redis Cluster serves keys now: no master serves \(10\.0\.0\.3:7000: /,
    );
    assert.match(down.message, /cluster-node-timeout \(5000 ms on this cluster\)/);
    assert.match(
      String(down.publicMessage),
      /^No master of the Redis Cluster serves keys now: no master serves \(<address>: /,
    );
    assert.doesNotMatch(String(down.publicMessage), /10\.0\.0\./);
    assert.match(CLUSTER_FAILOVER_ADVICE, /cluster-node-timeout \(Redis's default: 15 s\)/);
  });
});

describe('a single Redis (not a cluster)', () => {
  let single: TestRedis;
  let target: FastifyInstance;
  before(async () => {
    // persistent: a single Redis even when RANKD_TEST_REDIS=cluster.
    single = await startTestRedis({ persistent: true });
    target = await buildServer({
      config: testConfig(single),
      app: defineApp({ featureViews: [ProductStats], pipelines: [Ranking()] }),
    });
    assert.ok(await target.rankd.redis.waitUntilReady(5000));
  });
  after(async () => {
    await target?.close();
    await single?.stop();
  });

  test('Redis down is still a 503 for a degrading ranking, with the single-Redis advice', async () => {
    await single.kill();
    const res = await rank(target);
    assert.equal(res.status, 503, JSON.stringify(res.body));
    assert.equal(res.body.error_code, 'RANKD_REDIS_UNAVAILABLE');
    assert.match(res.body.detail, /rankd redis/);
    assert.equal(res.degraded, undefined);
  });
});
