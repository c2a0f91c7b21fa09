/**
 * A Redis Cluster (3 masters + 3 replicas, `cluster-node-timeout` 2000 ms, started here whatever
 * RANKD_TEST_REDIS says) whose master hangs rather than dies, then whose masters all refuse queries.
 *
 * A master is SIGSTOPped (its connections stay open, nothing answers) while a client ranks and
 * gets, one request after the other. Its replica is promoted after the node timeout and an
 * election, while the old master is still stopped. rankd must stop sending it commands once one
 * has timed out (only the commands already in flight wait for REDIS_COMMAND_TIMEOUT_MS: counted
 * with `rankd_redis_errors_total{kind="timeout"}`, no timing asserted), follow the promotion by
 * itself (rankings and gets served in full again while the old master is still stopped), and log
 * what happened: the node does not answer (quoting the cluster's own cluster-node-timeout), then
 * that a failover happened, and never that the node served its slots again.
 *
 * Then every master refuses queries (`CLUSTERDOWN`: a slot is unassigned on every node, as when a
 * failed master's slots have no master yet): rankings, gets and /readyz answer 503 rather than a
 * 200 made of nothing, the log says so once, and all is served again once the slot is assigned.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { createClient } from 'redis';
import { defineApp } from '../src/index.js';
import { hashSlot } from '../src/redis/hash-slot.js';
import { RedisKeys } from '../src/redis/keys.js';
import { buildServer, DEGRADED_HEADER } from '../src/server.js';
import { ProductClicks, RankByClicks } from './helpers/clicks-ranking.js';
import { find, parsePrometheus } from './helpers/prometheus.js';
import { asTestRedis, startTestCluster, type TestCluster } from './helpers/redis-cluster.js';
import { testConfig } from './helpers/server.js';

const NODE_TIMEOUT_MS = 2000;
/** Longest the scenarios may take before the test fails: far above the node timeout plus an election. */
const BOUND_MS = 2 * NODE_TIMEOUT_MS + 20_000;
/** Full answers in a row, after the promotion, that count as "served in full again". */
const FULL_ROUNDS = 5;

const IDS = Array.from({ length: 60 }, (_, i) => `p${i}`);
const CLUSTER_KEYS = new RedisKeys('default', '1', 'cluster');

const app = defineApp({
  name: 'cluster-hung-master',
  featureViews: [ProductClicks],
  pipelines: [RankByClicks],
});

const logLines: string[] = [];
let cluster: TestCluster;
let server: FastifyInstance;

before(async () => {
  cluster = await startTestCluster({ nodeTimeoutMs: NODE_TIMEOUT_MS });
  server = await buildServer({
    // No event stream: the only Redis commands are the requests' own, so the timeouts counted are theirs.
    config: testConfig(asTestRedis(cluster), {
      LOG_LEVEL: 'info',
      EXPOSE_REDIS_ADDRESS: 'true',
      EVENTS_SINK: 'off',
    }),
    app,
    logStream: { write: (line: string) => void logLines.push(String(JSON.parse(line).msg)) },
  });
  assert.ok(await server.rankd.redis.waitUntilReady(5000));
  await upload();
});

after(async () => {
  await server?.close();
  await cluster?.stop();
});

async function post(url: string, payload: unknown) {
  const res = await server.inject({ method: 'POST', url, payload: payload as object });
  // biome-ignore lint/suspicious/noExplicitAny: response bodies are arbitrary JSON that tests assert field by field
  return { status: res.statusCode, body: res.json() as any, degraded: res.headers[DEGRADED_HEADER] };
}

async function upload(): Promise<void> {
  const entities = await post('/api/v1/entities/upload', {
    entity_type: 'product',
    entities: IDS.map((product_id) => ({ product_id })),
  });
  assert.equal(entities.status, 200, JSON.stringify(entities.body));
  const rows = await post('/api/v1/features/upload', {
    feature_view: 'product_stats',
    rows: IDS.map((entity_id, i) => ({ entity_id, clicks: i + 1 })),
  });
  assert.equal(rows.status, 200, JSON.stringify(rows.body));
}

const rank = () =>
  post('/api/v1/ranking', {
    request_id: 'r',
    candidates: IDS.map((product_id) => ({ product_id })),
    user_page_size: 100,
  });
const getAll = () => post('/api/v1/entities/get', { entity_type: 'product', entity_ids: IDS });

async function timeouts(): Promise<number> {
  const res = await server.inject({ method: 'GET', url: '/metrics' });
  return (
    find(parsePrometheus(res.body).samples, 'rankd_redis_errors_total', { kind: 'timeout' })[0]?.value ?? 0
  );
}

/** A 503 saying that no master serves keys, with the advice quoting the cluster's node timeout. */
function assertNoMasterServes(
  res: { status: number; body: { detail?: unknown; error_code?: unknown } },
  what: string,
) {
  assert.equal(res.status, 503, `${what}: ${JSON.stringify(res.body)}`);
  assert.equal(res.body.error_code, 'RANKD_REDIS_UNAVAILABLE', what);
  assert.match(String(res.body.detail), /^No master of the Redis Cluster serves keys now: /, what);
  assert.match(String(res.body.detail), /cluster-node-timeout \(2000 ms on this cluster\)/, what);
}

const since = (from: number) => logLines.slice(from);

test('a master that hangs is routed around: only the commands in flight wait for the timeout, the promotion is followed while it still hangs, and the log says a failover happened', async () => {
  const slot = hashSlot(CLUSTER_KEYS.entity('product', 'p0'));
  const victim = await cluster.masterOfSlot(slot);
  const victimSlots = await cluster.slotsOf(victim);
  const replica = await cluster.replicaOf(victim);
  const from = logLines.length;
  const timeoutsBefore = await timeouts();
  const outcomes = new Map<string, number>();
  const count = (what: string) => outcomes.set(what, (outcomes.get(what) ?? 0) + 1);
  const started = Date.now();
  let requests = 0;

  cluster.pause(victim);
  try {
    let promoted = false;
    let full = 0;
    while (full < FULL_ROUNDS) {
      assert.ok(
        Date.now() - started < BOUND_MS,
        `served in full again within ${BOUND_MS} ms while the old master still hangs: ` +
          `${JSON.stringify(Object.fromEntries(outcomes))}\n${since(from).join('\n')}`,
      );
      promoted ||= (await cluster.roleOf(replica)) === 'master';
      const ranked = await rank();
      const got = await getAll();
      requests += 2;
      count(`ranking ${ranked.status}${ranked.degraded === undefined ? '' : ' degraded'}`);
      count(`get ${got.status}${got.body.unavailable_ids === undefined ? '' : ' partial'}`);
      // While the node hangs: served degraded, or 503 while every master refuses (around the promotion).
      if (ranked.status === 200) assert.equal(ranked.body.ranked_candidates.length, IDS.length);
      else assertNoMasterServes(ranked, 'ranking');
      if (got.status !== 200) assertNoMasterServes(got, 'get');
      const inFull =
        ranked.status === 200 &&
        ranked.degraded === undefined &&
        got.status === 200 &&
        got.body.unavailable_ids === undefined;
      full = promoted && inFull ? full + 1 : 0;
    }
    // Still stopped: what serves the slots now is the promoted replica.
    assert.equal(await cluster.masterOfSlot(slot), replica);
    const waited = (await timeouts()) - timeoutsBefore;
    // A ranking's entity and feature reads overlap: at most both were in flight when the node hung.
    assert.ok(
      waited <= 2,
      `${waited} commands waited for the timeout over ${requests} requests: only those in flight when the node hung may`,
    );

    const lost = since(from).filter((line) => line.startsWith(`Redis Cluster: node 127.0.0.1:${victim} `));
    assert.equal(lost.length, 1, since(from).join('\n'));
    assert.ok(lost[0]?.includes(`(master of slots ${victimSlots}) does not answer`), lost[0]);
    assert.match(lost[0] as string, /cluster-node-timeout \(2000 ms on this cluster\)/);
    assert.doesNotMatch(lost[0] as string, /15 s/);
    const failover = since(from).find((line) =>
      line.startsWith(`Redis Cluster: slots ${victimSlots} are served`),
    );
    assert.ok(failover !== undefined, since(from).join('\n'));
    assert.ok(
      failover.includes(
        `served by 127.0.0.1:${replica} now, no longer by 127.0.0.1:${victim}: a failover happened`,
      ),
      failover,
    );
  } finally {
    cluster.resume(victim);
  }

  // Woken up, the old master rejoins as a replica; the log still says nothing untrue.
  for (;;) {
    const role = await cluster.roleOf(victim).catch(() => undefined);
    if (role === 'replica') break;
    assert.ok(Date.now() - started < 2 * BOUND_MS, `the old master rejoins as a replica (ROLE: ${role})`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const ranked = await rank();
  assert.ok(ranked.status === 200 && ranked.degraded === undefined, JSON.stringify(ranked));
  const lines = since(from);
  assert.ok(!lines.some((line) => /no failover|serves its slots again/.test(line)), lines.join('\n'));
  // The promoted replica was never reported lost or unreachable.
  assert.ok(
    !lines.some((line) => line.startsWith(`Redis Cluster: node 127.0.0.1:${replica} `)),
    lines.join('\n'),
  );
  console.log(
    `answers while the master hung: ${JSON.stringify(Object.fromEntries(outcomes))}\n${lines.join('\n')}`,
  );
});

/** Runs `command` on the node on `port`. */
async function onNode(port: number, command: string[]): Promise<string> {
  const client = createClient({ socket: { host: '127.0.0.1', port } });
  await client.connect();
  try {
    return String(await client.sendCommand(command));
  } finally {
    await client.close();
  }
}

/** Polls until every node's CLUSTER INFO says `cluster_state:<state>`, redoing `step` each time (a harness wait). */
async function untilState(state: 'ok' | 'fail', step: () => Promise<unknown>): Promise<void> {
  const deadline = Date.now() + BOUND_MS;
  for (;;) {
    await step();
    const infos = await Promise.all(cluster.ports.map((port) => onNode(port, ['CLUSTER', 'INFO'])));
    if (infos.every((info) => info.includes(`cluster_state:${state}`))) return;
    if (Date.now() > deadline) throw new Error(`test cluster: cluster_state is not ${state} everywhere`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

test('every master refusing queries (CLUSTERDOWN): rankings, gets and /readyz answer 503, the log says so once; then all is served again', async () => {
  await upload();
  const slot = 0;
  const owner = await cluster.masterOfSlot(slot);
  const from = logLines.length;
  // No node claims the slot any more, on any node (a replica's view would teach the others back).
  await untilState('fail', () =>
    Promise.all(
      cluster.ports.map((port) => onNode(port, ['CLUSTER', 'DELSLOTS', String(slot)]).catch(() => '')),
    ),
  );
  try {
    assertNoMasterServes(await rank(), 'ranking');
    const ranked = await rank();
    assert.match(String(ranked.body.detail), /every master refuses queries \(CLUSTERDOWN/);
    assert.equal(ranked.degraded, undefined);
    assertNoMasterServes(await getAll(), 'entities/get');
    assertNoMasterServes(
      await post('/api/v1/features/get', { feature_view: 'product_stats', entity_ids: IDS }),
      'features/get',
    );
    const ready = await server.inject({ method: 'GET', url: '/readyz' });
    assertNoMasterServes({ status: ready.statusCode, body: ready.json() }, '/readyz');

    const refusing = since(from).filter((line) =>
      line.startsWith('Redis Cluster: the cluster refuses every query'),
    );
    assert.equal(refusing.length, 1, since(from).join('\n'));
    assert.match(refusing[0] as string, /CLUSTERDOWN/);
    assert.match(refusing[0] as string, /cluster-node-timeout \(2000 ms on this cluster\)/);
    // The masters refuse because of the cluster's state: none of them is reported lost.
    assert.ok(!since(from).some((line) => line.startsWith('Redis Cluster: node ')), since(from).join('\n'));
  } finally {
    await untilState('ok', () => onNode(owner, ['CLUSTER', 'ADDSLOTS', String(slot)]).catch(() => ''));
  }
  const deadline = Date.now() + BOUND_MS;
  for (;;) {
    const ranked = await rank();
    if (ranked.status === 200 && ranked.degraded === undefined) break;
    assert.ok(Date.now() < deadline, `served in full again: ${JSON.stringify(ranked)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const ready = await server.inject({ method: 'GET', url: '/readyz' });
  assert.equal(ready.statusCode, 200, ready.body);
  for (;;) {
    if (since(from).some((line) => line.startsWith('Redis Cluster: the cluster serves queries again'))) break;
    assert.ok(Date.now() < deadline, since(from).join('\n'));
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  console.log(since(from).join('\n'));
});
