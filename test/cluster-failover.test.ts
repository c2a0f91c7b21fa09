/**
 * Node failures on a Redis Cluster (3 masters + 3 replicas, started here whatever
 * RANKD_TEST_REDIS says). First, a master that refuses writes: every upload and delete that spans
 * it answers 503 RANKD_PARTIAL_WRITE naming exactly the ids written and not written.
 *
 * Then a master dies (SIGKILL) while three clients rank, get and upload. Its replica takes over
 * after `cluster-node-timeout` (2 s here; `RANKD_TEST_CLUSTER_NODE_TIMEOUT_MS` sets another, e.g.
 * 15000 for Redis's default) and an election; rankd must notice by itself (its client refreshes
 * the slot map) and serve in full again. Meanwhile every ranking answers 200, degraded (the
 * `x-rankd-degraded` header) while the master's slots cannot be read; gets answer 200 with the
 * dead master's ids in `unavailable_ids`; both answer 503 only while no master serves at all (the
 * `CLUSTERDOWN` between the node marked failed and its replica promoted: an answer built from
 * nothing would pass for one); uploads fail only with 503s that name the node or say that no
 * master serves (an upload cut in half says exactly which ids were written); nothing acknowledged
 * is lost; the log says which node took the slots over; and the killed node, restarted, rejoins
 * as a replica.
 * Prints the windows measured; asserts only that rankd recovered within a generous bound.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { defineApp, defineFeatureView, Feature, ProductEntity, UserEntity } from '../src/index.js';
import { buildServer, DEGRADED_HEADER } from '../src/server.js';
import { ProductClicks, RankByClicks } from './helpers/clicks-ranking.js';
import { RawRedis } from './helpers/raw-redis.js';
import { asTestRedis, startTestCluster, type TestCluster } from './helpers/redis-cluster.js';
import { testConfig } from './helpers/server.js';

/** `cluster-node-timeout` of the test cluster, ms: short in CI; 15000 measures Redis's default. */
const NODE_TIMEOUT_MS = Number(process.env.RANKD_TEST_CLUSTER_NODE_TIMEOUT_MS ?? 2000);
/** Longest a failover may take before the test fails: far above the node timeout plus an election. */
const RECOVERY_BOUND_MS = 2 * NODE_TIMEOUT_MS + 20_000;
/** A request still unanswered after this is a hang (REDIS_COMMAND_TIMEOUT_MS is 1 s here). */
const HANG_MS = 10_000;
/** Consecutive full answers, for each client, that count as "serving in full again". */
const HEALTHY_ROUNDS = 10;

const IDS = Array.from({ length: 200 }, (_, i) => `f${i}`);

const ProductUser = defineFeatureView({
  name: 'product_user',
  entity: [ProductEntity, UserEntity],
  features: { clicks: Feature.integer({ default: 0 }) },
});
const app = defineApp({
  name: 'cluster-failover',
  featureViews: [ProductClicks, ProductUser],
  pipelines: [RankByClicks],
});

/** The server's log lines (their messages), to find what it said about the failover. */
const logLines: string[] = [];

let cluster: TestCluster;
let server: FastifyInstance;
let raw: RawRedis;

before(async () => {
  cluster = await startTestCluster({ nodeTimeoutMs: NODE_TIMEOUT_MS });
  server = await buildServer({
    // EXPOSE_REDIS_ADDRESS: the 503s below are checked for naming the node (hidden by default).
    config: testConfig(asTestRedis(cluster), { LOG_LEVEL: 'info', EXPOSE_REDIS_ADDRESS: 'true' }),
    app,
    logStream: { write: (line: string) => void logLines.push(String(JSON.parse(line).msg)) },
  });
  assert.ok(await server.rankd.redis.waitUntilReady(5000));
  raw = await RawRedis.connect(asTestRedis(cluster));
});

after(async () => {
  await server?.close();
  await raw?.close();
  await cluster?.stop();
});

/** A 503 saying that no master serves keys (every master refuses: CLUSTERDOWN), with cluster advice. */
function isNoMasterServes(res: {
  status: number;
  body: { detail?: unknown; error_code?: unknown };
}): boolean {
  return (
    res.status === 503 &&
    res.body.error_code === 'RANKD_REDIS_UNAVAILABLE' &&
    /^No master of the Redis Cluster serves keys now: .*cluster-node-timeout/.test(String(res.body.detail))
  );
}

/** One request, or `hang` when it is not answered within {@link HANG_MS}. */
async function call(url: string, body: unknown) {
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<'hang'>((resolve) => {
    timer = setTimeout(() => resolve('hang'), HANG_MS);
  });
  const answer = server.inject({ method: 'POST', url, payload: body as object }).then((res) => ({
    status: res.statusCode,
    // biome-ignore lint/suspicious/noExplicitAny: response bodies are arbitrary JSON that tests assert field by field
    body: res.json() as any,
    degraded: res.headers[DEGRADED_HEADER],
  }));
  try {
    return await Promise.race([answer, hang]);
  } finally {
    clearTimeout(timer);
  }
}

const upload = (version: number) =>
  call('/api/v1/entities/upload', {
    entity_type: 'product',
    entities: IDS.map((product_id) => ({ product_id, version })),
  });
const statusOf = async (res: ReturnType<typeof call>) => {
  const answer = await res;
  return answer === 'hang' ? answer : answer.status;
};
const getAll = () => call('/api/v1/entities/get', { entity_type: 'product', entity_ids: IDS });

/**
 * Makes one master (not the one holding the feature-layouts hash, which every feature upload
 * touches first) refuse writes, as a failing node would: with `min-replicas-to-write 2` and one
 * replica it answers NOREPLICAS. Deterministic, unlike racing a kill.
 */
async function withOneMasterRefusingWrites(work: () => Promise<void>): Promise<void> {
  const layouts = await raw.nodeForKey('default:feature-layouts');
  const nodes = await raw.nodes();
  const refusing = nodes.find((node) => node !== layouts) as (typeof nodes)[number];
  await refusing.sendCommand(['CONFIG', 'SET', 'min-replicas-to-write', '2']);
  try {
    await work();
  } finally {
    await refusing.sendCommand(['CONFIG', 'SET', 'min-replicas-to-write', '0']);
  }
}

/** Checks a RANKD_PARTIAL_WRITE answer: 503, and every id in exactly one of the two non-empty lists. */
function assertPartial(
  res: { status: number; body: { error_code: string; written_ids: unknown[]; failed_ids: unknown[] } },
  ids: unknown[],
): { written: string[]; failed: string[] } {
  assert.equal(res.status, 503, JSON.stringify(res.body));
  assert.equal(res.body.error_code, 'RANKD_PARTIAL_WRITE');
  const { written_ids, failed_ids } = res.body;
  assert.ok(written_ids.length > 0 && failed_ids.length > 0, 'some ids on each side');
  const key = (id: unknown) => JSON.stringify(id);
  assert.deepEqual([...written_ids, ...failed_ids].map(key).sort(), ids.map(key).sort());
  return { written: written_ids.map(key), failed: failed_ids.map(key) };
}

describe('partial writes: a master refuses writes', () => {
  test('entity upload: 503 RANKD_PARTIAL_WRITE; written_ids hold the new values, failed_ids the old', async () => {
    assert.equal(await statusOf(upload(1)), 200);
    await withOneMasterRefusingWrites(async () => {
      const res = await upload(2);
      const { written } = assertPartial(res as never, IDS);
      const stored = await getAll();
      assert.ok(stored !== 'hang');
      for (const id of IDS)
        assert.equal(stored.body.entities[id].version, written.includes(JSON.stringify(id)) ? 2 : 1, id);
    });
  });

  test('entity delete: the ids whose delete was confirmed are gone, the others still there', async () => {
    assert.equal(await statusOf(upload(3)), 200);
    await withOneMasterRefusingWrites(async () => {
      const res = await call('/api/entity/v1/entities/delete', { entity_type: 'product', entity_ids: IDS });
      assert.ok(res !== 'hang');
      const { written } = assertPartial(res, IDS);
      const stored = await getAll();
      assert.ok(stored !== 'hang');
      for (const id of IDS)
        assert.equal(id in stored.body.entities, !written.includes(JSON.stringify(id)), id);
    });
    assert.equal(await statusOf(upload(4)), 200);
  });

  test('feature rows, single and pair views: upload and delete report rows by id ([first, second] for pairs)', async () => {
    const pairs = IDS.map((id) => [id, 'u1']);
    await withOneMasterRefusingWrites(async () => {
      for (const [view, ids] of [
        ['product_stats', IDS],
        ['product_user', pairs],
      ] as const) {
        const rows = ids.map((entity_id) => ({ entity_id, clicks: 7 }));
        const up = await call('/api/v1/features/upload', { feature_view: view, rows });
        assert.ok(up !== 'hang');
        const { written } = assertPartial(up, [...ids]);
        const read = await call('/api/v1/features/get', { feature_view: view, entity_ids: ids });
        assert.ok(read !== 'hang' && read.status === 200, JSON.stringify(read));
        for (const [i, row] of (read.body.results as Array<{ values: Record<string, number> }>).entries()) {
          const wasWritten = written.includes(JSON.stringify(ids[i]));
          assert.equal(row.values[`${view}:clicks`], wasWritten ? 7 : 0, JSON.stringify(ids[i]));
        }
        const del = await call('/api/v1/features/delete', { feature_view: view, entity_ids: ids });
        assert.ok(del !== 'hang');
        assertPartial(del, [...ids]);
      }
    });
  });
});

/** When, after the kill, answers of one kind were not full answers: first, last, how many. */
class Window {
  first: number | undefined;
  last: number | undefined;
  count = 0;
  mark(at: number): void {
    this.first ??= at;
    this.last = at;
    this.count++;
  }
  toString(): string {
    return this.count === 0 ? 'none' : `${this.count}, from ${this.first} to ${this.last} ms after the kill`;
  }
}

test('a master is killed under ranking, get and upload load: rankings stay 200 (degraded) while some master serves, uploads fail only with 503s naming the node, nothing acknowledged is lost, the node rejoins as a replica', async () => {
  /** Per id, the last version whose upload was confirmed: what must be read back at the end. */
  const confirmed = new Map<string, number>();
  let version = 100;
  const first = await upload(++version);
  assert.ok(first !== 'hang' && first.status === 200, 'the upload works before the kill');
  for (const id of IDS) confirmed.set(id, version);
  const rows = await call('/api/v1/features/upload', {
    feature_view: 'product_stats',
    rows: IDS.map((entity_id, i) => ({ entity_id, clicks: i + 1 })),
  });
  assert.ok(rows !== 'hang' && rows.status === 200, JSON.stringify(rows));
  const mastersBefore = await cluster.masterPorts();
  assert.equal(mastersBefore.length, 3);

  const victim = await cluster.killMaster();
  const killedAt = Date.now();
  const since = () => Date.now() - killedAt;
  const answers = new Map<string, number>();
  const count = (what: string) => answers.set(what, (answers.get(what) ?? 0) + 1);
  const degradedRankings = new Window();
  const partialGets = new Window();
  const failedUploads = new Window();
  const noMasterServes = new Window();
  let partials = 0;
  /** Per client: full answers in a row. Each loop runs until all three have HEALTHY_ROUNDS. */
  const streak = { ranking: 0, get: 0, upload: 0 };
  const recovered = () => Object.values(streak).every((n) => n >= HEALTHY_ROUNDS);
  const pause = () => new Promise((resolve) => setTimeout(resolve, 10));
  const bounded = () =>
    assert.ok(since() < RECOVERY_BOUND_MS, `rankd serves in full again within ${RECOVERY_BOUND_MS} ms`);

  /** Whether `res` is not a 200; then it must be the 503 of no master serving, and is counted so. */
  const whileNoMasterServes = (
    res: Exclude<Awaited<ReturnType<typeof call>>, 'hang'>,
    client: 'ranking' | 'get',
  ) => {
    if (res.status === 200) return false;
    assert.ok(
      isNoMasterServes(res),
      `a ${client} answers 200, or 503 while no master serves: ${JSON.stringify(res.body)}`,
    );
    noMasterServes.mark(since());
    streak[client] = 0;
    return true;
  };
  const rankingClient = async () => {
    const candidates = IDS.slice(0, 50).map((product_id) => ({ product_id }));
    while (!recovered()) {
      bounded();
      const res = await call('/api/v1/ranking', { request_id: 'r', candidates });
      assert.notEqual(res, 'hang', `ranking answered within ${HANG_MS} ms`);
      if (res === 'hang') return;
      count(`ranking ${res.status}${res.degraded === undefined ? '' : ' degraded'}`);
      if (whileNoMasterServes(res, 'ranking')) {
        await pause();
        continue;
      }
      assert.equal(res.body.ranked_candidates.length, 10);
      if (res.degraded === undefined) streak.ranking++;
      else {
        assert.match(String(res.degraded), /^entities=\d+; features=\d+$/);
        degradedRankings.mark(since());
        streak.ranking = 0;
      }
      await pause();
    }
  };
  const getClient = async () => {
    while (!recovered()) {
      bounded();
      const res = await getAll();
      assert.notEqual(res, 'hang', `get answered within ${HANG_MS} ms`);
      if (res === 'hang') return;
      count(`get ${res.status}${res.body.unavailable_ids === undefined ? '' : ' partial'}`);
      if (whileNoMasterServes(res, 'get')) {
        await pause();
        continue;
      }
      if (res.body.unavailable_ids === undefined) streak.get++;
      else {
        // What it left out is listed apart, and nothing else is missing.
        const listed = new Set([...Object.keys(res.body.entities), ...res.body.unavailable_ids]);
        assert.deepEqual([...listed].sort(), [...IDS].sort());
        assert.ok(res.degraded !== undefined, 'a partial get has the header');
        partialGets.mark(since());
        streak.get = 0;
      }
      await pause();
    }
  };
  const uploadClient = async () => {
    while (!recovered()) {
      bounded();
      const v = ++version;
      const res = await upload(v);
      assert.notEqual(res, 'hang', `upload answered within ${HANG_MS} ms`);
      if (res === 'hang') return;
      count(`upload ${res.status} ${res.body?.error_code ?? ''}`.trim());
      if (res.status === 200) {
        for (const id of IDS) confirmed.set(id, v);
        streak.upload++;
      } else {
        streak.upload = 0;
        failedUploads.mark(since());
        assert.equal(
          res.status,
          503,
          `an upload fails with 503, not ${res.status}: ${JSON.stringify(res.body)}`,
        );
        assert.match(res.body.error_code, /^RANKD_(REDIS_UNAVAILABLE|PARTIAL_WRITE)$/);
        // Clear: it names the failed node(s) and their slots, or says that no master serves, and says what to do.
        if (!isNoMasterServes(res))
          assert.match(res.body.detail, /The Redis Cluster nodes? 127\.0\.0\.1:\d+ \(master of slots /);
        assert.match(res.body.detail, /cluster-node-timeout/);
        if (res.body.error_code === 'RANKD_PARTIAL_WRITE') {
          partials++;
          const { written_ids, failed_ids } = res.body as { written_ids: string[]; failed_ids: string[] };
          // Every id exactly once, in one list or the other.
          assert.deepEqual([...written_ids, ...failed_ids].sort(), [...IDS].sort());
          assert.ok(written_ids.length > 0 && failed_ids.length > 0);
          for (const id of written_ids) confirmed.set(id, v);
        }
      }
      await pause();
    }
  };
  await Promise.all([rankingClient(), getClient(), uploadClient()]);
  const servedInFull = since();

  // What was confirmed is there: each id holds the last version an answer said was written.
  const final = await getAll();
  assert.ok(final !== 'hang' && final.status === 200 && final.body.unavailable_ids === undefined);
  for (const id of IDS) assert.equal(final.body.entities[id]?.version, confirmed.get(id), id);
  const mastersAfter = await cluster.masterPorts();
  assert.ok(!mastersAfter.includes(victim), 'a replica took over');
  const [successor] = mastersAfter.filter((port) => !mastersBefore.includes(port));
  assert.ok(successor !== undefined, 'a former replica is a master now');

  // The log named the dead master with its slots and cluster advice, then who took the slots over.
  const lost = logLines.find((line) =>
    line.startsWith(`Redis Cluster: node 127.0.0.1:${victim} (master of slots`),
  );
  assert.ok(lost !== undefined, logLines.join('\n'));
  assert.match(lost, /cluster-node-timeout/);
  assert.doesNotMatch(lost, /rankd redis/);
  const takeover = logLines.find(
    (line) => line.startsWith('Redis Cluster: slots ') && line.includes('failover'),
  );
  assert.ok(takeover !== undefined, logLines.join('\n'));
  assert.ok(
    takeover.includes(`served by 127.0.0.1:${successor} now, no longer by 127.0.0.1:${victim}`),
    takeover,
  );
  // Nothing untrue: the promoted replica is never reported lost, nor the dead master back by itself.
  assert.ok(
    !logLines.some((line) => line.startsWith(`Redis Cluster: node 127.0.0.1:${successor} `)),
    logLines.join('\n'),
  );
  assert.ok(!logLines.some((line) => /no failover|serves its slots again/.test(line)), logLines.join('\n'));
  const ready = await server.inject({ method: 'GET', url: '/readyz' });
  assert.equal(ready.statusCode, 200, ready.body);

  // The killed node, restarted, rejoins as a replica (of its successor) and the cluster is whole.
  await cluster.restartNode(victim);
  const restartedAt = Date.now();
  for (;;) {
    const role = await cluster.roleOf(victim).catch(() => undefined);
    if (role === 'replica') break;
    assert.ok(Date.now() - restartedAt < RECOVERY_BOUND_MS, `the node rejoins as a replica (ROLE: ${role})`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const rejoined = Date.now() - restartedAt;
  assert.deepEqual(await cluster.masterPorts(), mastersAfter);
  const after = await call('/api/v1/ranking', { request_id: 'r', candidates: [{ product_id: 'f1' }] });
  assert.ok(after !== 'hang' && after.status === 200 && after.degraded === undefined, JSON.stringify(after));

  console.log(
    `cluster failover (cluster-node-timeout ${NODE_TIMEOUT_MS} ms): master on port ${victim} killed, ` +
      `${successor} took over; all three clients answered in full again ${servedInFull} ms after the kill. ` +
      `Degraded rankings (200): ${degradedRankings}. Partial gets (200): ${partialGets}. ` +
      `Rankings and gets while no master served (503): ${noMasterServes}. ` +
      `Failed uploads (503): ${failedUploads}, ${partials} of them partial. ` +
      `Restarted, the old master was a replica ${rejoined} ms later. Answers: ${JSON.stringify(Object.fromEntries(answers))}`,
  );
  assert.ok(failedUploads.count > 0, 'uploads did fail while the master was down');
});
