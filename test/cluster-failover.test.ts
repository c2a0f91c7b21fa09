/**
 * Node failures on a Redis Cluster (3 masters + 3 replicas, started here whatever
 * RANKD_TEST_REDIS says). First, a master that refuses writes: every upload and delete that spans
 * it answers 503 RANKD_PARTIAL_WRITE naming exactly the ids written and not written.
 *
 * Then a master dies (SIGKILL) while rankd serves reads and uploads. Its replica
 * takes over after `cluster-node-timeout` (2 s) and an election; rankd must notice by itself
 * (its client refreshes the slot map) and serve again. Meanwhile every failure must be a 503 —
 * never a 500, never a hang — and an upload cut in half must say exactly which ids were written.
 * Prints how long requests failed; asserts only that rankd recovered within a generous bound.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { defineApp, defineFeatureView, Feature, ProductEntity, UserEntity } from '../src/index.js';
import { RawRedis } from './helpers/raw-redis.js';
import { asTestRedis, startTestCluster, type TestCluster } from './helpers/redis-cluster.js';
import { postJson, testServer } from './helpers/server.js';

/** Longest a failover may take before the test fails: far above the few seconds it takes. */
const RECOVERY_BOUND_MS = 30_000;
/** A request still unanswered after this is a hang (REDIS_COMMAND_TIMEOUT_MS is 1 s here). */
const HANG_MS = 10_000;
/** Consecutive successful rounds that count as "serving again". */
const HEALTHY_ROUNDS = 10;

const IDS = Array.from({ length: 200 }, (_, i) => `f${i}`);

const ProductStats = defineFeatureView({
  name: 'product_stats',
  entity: ProductEntity,
  features: { clicks: Feature.integer({ default: 0 }) },
});
const ProductUser = defineFeatureView({
  name: 'product_user',
  entity: [ProductEntity, UserEntity],
  features: { clicks: Feature.integer({ default: 0 }) },
});
const app = defineApp({ name: 'cluster-failover', featureViews: [ProductStats, ProductUser] });

let cluster: TestCluster;
let server: FastifyInstance;
let raw: RawRedis;

before(async () => {
  cluster = await startTestCluster();
  server = await testServer(asTestRedis(cluster), { app });
  raw = await RawRedis.connect(asTestRedis(cluster));
});

after(async () => {
  await server?.close();
  await raw?.close();
  await cluster?.stop();
});

/** One request, or `hang` when it is not answered within {@link HANG_MS}. */
async function call(url: string, body: unknown) {
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<'hang'>((resolve) => {
    timer = setTimeout(() => resolve('hang'), HANG_MS);
  });
  try {
    return await Promise.race([postJson(server, url, body), hang]);
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

test('a master is killed: requests fail with 503 (partial uploads say which ids), then rankd serves again by itself', async () => {
  /** Per id, the last version whose upload was confirmed: what must be read back at the end. */
  const confirmed = new Map<string, number>();
  let version = 100;
  const first = await upload(++version);
  assert.ok(first !== 'hang' && first.status === 200, 'the upload works before the kill');
  for (const id of IDS) confirmed.set(id, version);
  assert.equal((await cluster.masterPorts()).length, 3);

  const victim = await cluster.killMaster();
  const killedAt = Date.now();
  const statuses = new Map<string, number>();
  const count = (what: string) => statuses.set(what, (statuses.get(what) ?? 0) + 1);
  let lastFailureAt: number | undefined;
  let firstFailureAt: number | undefined;
  let healthy = 0;
  let partials = 0;

  while (healthy < HEALTHY_ROUNDS) {
    assert.ok(Date.now() - killedAt < RECOVERY_BOUND_MS, `rankd serves again within ${RECOVERY_BOUND_MS} ms`);
    const v = ++version;
    const [written, read] = [await upload(v), await getAll()];
    let ok = true;
    for (const [what, res] of [
      ['upload', written],
      ['get', read],
    ] as const) {
      assert.notEqual(res, 'hang', `${what} answered within ${HANG_MS} ms`);
      if (res === 'hang') continue;
      count(`${what} ${res.status} ${res.body?.error_code ?? ''}`.trim());
      if (res.status === 200) continue;
      ok = false;
      assert.equal(
        res.status,
        503,
        `${what} failed with 503, not ${res.status}: ${JSON.stringify(res.body)}`,
      );
      assert.match(res.body.error_code, /^RANKD_(REDIS_UNAVAILABLE|PARTIAL_WRITE)$/);
      if (res.body.error_code === 'RANKD_PARTIAL_WRITE') {
        partials++;
        const { written_ids, failed_ids } = res.body as { written_ids: string[]; failed_ids: string[] };
        // Every id exactly once, in one list or the other.
        assert.deepEqual([...written_ids, ...failed_ids].sort(), [...IDS].sort());
        assert.ok(written_ids.length > 0 && failed_ids.length > 0);
        for (const id of written_ids) confirmed.set(id, v);
      }
    }
    if (written !== 'hang' && written.status === 200) for (const id of IDS) confirmed.set(id, v);
    if (ok) healthy++;
    else {
      healthy = 0;
      firstFailureAt ??= Date.now();
      lastFailureAt = Date.now();
    }
    if (!ok) await new Promise((resolve) => setTimeout(resolve, 50));
  }

  // What was confirmed is there: each id holds the last version an answer said was written.
  const final = await getAll();
  assert.ok(final !== 'hang' && final.status === 200);
  for (const id of IDS) assert.equal(final.body.entities[id]?.version, confirmed.get(id), id);
  const ready = await server.inject({ method: 'GET', url: '/readyz' });
  assert.equal(ready.statusCode, 200, ready.body);
  assert.ok(!(await cluster.masterPorts()).includes(victim), 'a replica took over');

  const failing = lastFailureAt === undefined ? 0 : lastFailureAt - killedAt;
  console.log(
    `cluster failover: master on port ${victim} killed; requests failed for ${failing} ms after the kill ` +
      `(first failure after ${firstFailureAt === undefined ? '-' : firstFailureAt - killedAt} ms); ` +
      `${partials} partial uploads; answers: ${JSON.stringify(Object.fromEntries(statuses))}`,
  );
  assert.ok(lastFailureAt !== undefined, 'requests did fail while the master was down');
});
