/**
 * `npm run bench -- failover`: a Redis Cluster master that hangs (SIGSTOP, not a crash) while four
 * clients rank, and what rankd makes of it. A 3 + 3 cluster with `cluster-node-timeout` 2000 ms
 * (`RANKD_BENCH_NODE_TIMEOUT_MS` sets another), rankd in process with its default
 * `REDIS_COMMAND_TIMEOUT_MS` (2000), 200 products and their feature rows; each ranking sends 24 of
 * them, so every ranking needs the hung master's slots.
 *
 * Phases: 3 s of normal load (the floor: p50, p99, requests/s), then the master is stopped, its
 * replica promoted by the cluster (seen by polling the replica's ROLE every 25 ms), and the master
 * resumed (SIGCONT) 20 s after the stop, then 5 s more. Two windows from the promotion: to the
 * last answer that failed or was degraded (served in full again), and to normal latency: answers
 * are grouped by when they end in slices of 500 ms, and a slice is normal when it has answers, all
 * 200s not degraded, with a p50 no higher than the floor's p99 (a lone slow answer on a shared
 * machine is noise, a slice of them is not); the window ends with the last slice before the
 * resume that is not. The table gives requests/s, p50 and the answers that failed or were
 * degraded in each phase.
 */
import { createClient } from 'redis';
import { loadConfig } from '../src/config/index.js';
import { defineApp } from '../src/index.js';
import { buildServer, DEGRADED_HEADER } from '../src/server.js';
import { ProductClicks, RankByClicks } from '../test/helpers/clicks-ranking.js';
import { startTestCluster } from '../test/helpers/redis-cluster.js';
import type { BenchContext } from './lib/benchmark.js';
import { announce, Cleanup, loadAverages } from './lib/run-setup.js';
import { percentile } from './lib/stats.js';
import { formatMs, formatTable } from './lib/table.js';

const CLIENTS = 4;
const PRODUCTS = 200;
const CANDIDATES = 24;
/** How long the master stays stopped, as in the reproduction this measures. */
const STOPPED_MS = 20_000;
const AFTER_MS = 5000;
const FLOOR_MS = 3000;
/** Answers are judged in slices of this many ms (by when they end). */
const SLICE_MS = 500;

const app = defineApp({ name: 'failover-bench', featureViews: [ProductClicks], pipelines: [RankByClicks] });

/** One answered ranking: when it started and ended (ms since the stop), and whether it was normal. */
interface Answer {
  start: number;
  end: number;
  status: number;
  degraded: boolean;
}

interface PhaseFigures {
  phase: string;
  answers: number;
  requestsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  notServed: number;
}

/** Runs the failover benchmark and returns its figures. */
export async function run(context: BenchContext): Promise<Record<string, unknown>> {
  const nodeTimeoutMs = Number(process.env.RANKD_BENCH_NODE_TIMEOUT_MS ?? 2000);
  const stoppedMs = context.quick ? 8000 : STOPPED_MS;
  const loadBefore = announce(
    `failover: ${CLIENTS} clients rank ${CANDIDATES} of ${PRODUCTS} products on a 3 + 3 cluster ` +
      `(cluster-node-timeout ${nodeTimeoutMs} ms); a master is SIGSTOPped for ${stoppedMs / 1000} s`,
  );
  const cleanup = new Cleanup();
  try {
    const cluster = await startTestCluster({ nodeTimeoutMs });
    cleanup.add(() => cluster.stop());
    const logLines: Array<{ at: number; msg: string }> = [];
    let stoppedAt = Number.NaN;
    const server = await buildServer({
      config: loadConfig({
        REDIS_CLUSTER_NODES: cluster.nodes,
        LOG_LEVEL: 'info',
        EVENTS_SINK: 'off',
      }),
      app,
      logStream: {
        write: (line: string) => {
          const msg = String(JSON.parse(line).msg);
          if (msg.startsWith('Redis Cluster')) logLines.push({ at: performance.now() - stoppedAt, msg });
        },
      },
    });
    cleanup.add(() => server.close());
    if (!(await server.rankd.redis.waitUntilReady(10_000))) throw new Error('rankd did not connect');
    const ids = Array.from({ length: PRODUCTS }, (_, i) => `p${i}`);
    const rows = await server.inject({
      method: 'POST',
      url: '/api/v1/features/upload',
      payload: { feature_view: 'product_stats', rows: ids.map((entity_id, i) => ({ entity_id, clicks: i })) },
    });
    if (rows.statusCode !== 200) throw new Error(`feature upload: ${rows.statusCode} ${rows.body}`);

    // The victim: the master on the lowest port; its replica is the node to watch for promotion.
    const [victim] = await cluster.masterPorts();
    if (victim === undefined) throw new Error('no master');
    const replica = await cluster.replicaOf(victim);
    const watcher = createClient({ socket: { host: '127.0.0.1', port: replica } });
    await watcher.connect();
    cleanup.add(() => watcher.close());

    const answers: Answer[] = [];
    let running = true;
    let seed = 1;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const client = async () => {
      while (running) {
        const candidates = Array.from({ length: CANDIDATES }, () => ({
          product_id: ids[Math.floor(random() * PRODUCTS)] as string,
        }));
        const start = performance.now();
        const res = await server.inject({
          method: 'POST',
          url: '/api/v1/ranking',
          payload: { request_id: 'r', candidates },
        });
        answers.push({
          start,
          end: performance.now(),
          status: res.statusCode,
          degraded: res.headers[DEGRADED_HEADER] !== undefined,
        });
      }
    };
    const clients = Array.from({ length: CLIENTS }, client);
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    await sleep(1000 + FLOOR_MS);

    stoppedAt = performance.now();
    cluster.pause(victim);
    let promotedAt = Number.NaN;
    let resumed = false;
    cleanup.add(async () => {
      if (!resumed) cluster.resume(victim);
    });
    while (performance.now() - stoppedAt < stoppedMs) {
      if (Number.isNaN(promotedAt)) {
        const role = await watcher.sendCommand(['ROLE']).catch(() => undefined);
        if (Array.isArray(role) && String(role[0]) === 'master') promotedAt = performance.now();
      }
      await sleep(25);
    }
    cluster.resume(victim);
    resumed = true;
    const resumedAt = performance.now();
    await sleep(AFTER_MS);
    running = false;
    await Promise.all(clients);

    // Times relative to the stop.
    const rel = answers.map((a) => ({ ...a, start: a.start - stoppedAt, end: a.end - stoppedAt }));
    const promotion = promotedAt - stoppedAt;
    const resume = resumedAt - stoppedAt;
    const floor = rel.filter((a) => a.start >= -FLOOR_MS && a.end < 0);
    const floorLatencies = floor.map((a) => a.end - a.start).sort((x, y) => x - y);
    const normalP50Ms = percentile(floorLatencies, 99);
    const served = (a: Answer) => a.status === 200 && !a.degraded;
    const slices = Array.from({ length: Math.ceil(resume / SLICE_MS) }, (_, i) => {
      const inSlice = rel.filter((a) => a.end > i * SLICE_MS && a.end <= (i + 1) * SLICE_MS);
      const latencies = inSlice.map((a) => a.end - a.start).sort((x, y) => x - y);
      return inSlice.length > 0 && inSlice.every(served) && percentile(latencies, 50) <= normalP50Ms;
    });
    const lastAbnormal = (slices.lastIndexOf(false) + 1) * SLICE_MS;
    const lastFailed = rel.filter((a) => a.end > 0 && !served(a)).reduce((m, a) => Math.max(m, a.end), 0);
    const phase = (name: string, from: number, to: number): PhaseFigures => {
      const inPhase = rel.filter((a) => a.end > from && a.end <= to);
      const latencies = inPhase.map((a) => a.end - a.start).sort((x, y) => x - y);
      return {
        phase: name,
        answers: inPhase.length,
        requestsPerSec: (inPhase.length * 1000) / Math.max(1, to - from),
        p50Ms: percentile(latencies, 50),
        p99Ms: percentile(latencies, 99),
        notServed: inPhase.filter((a) => !served(a)).length,
      };
    };
    const phases = [
      phase('floor (before the stop)', -FLOOR_MS, 0),
      phase('stop → promotion', 0, Number.isNaN(promotion) ? resume : promotion),
      phase('promotion → resume', Number.isNaN(promotion) ? resume : promotion, resume),
      phase('promotion → promotion + 3 s', promotion, promotion + 3000),
      phase('resume → end', resume, resume + AFTER_MS),
    ];
    console.log(
      formatTable(
        ['phase', 'answers', 'req/s', 'p50', 'p99', 'failed or degraded'],
        phases.map((p) => [
          p.phase,
          String(p.answers),
          p.requestsPerSec.toFixed(1),
          formatMs(p.p50Ms),
          formatMs(p.p99Ms),
          String(p.notServed),
        ]),
      ),
    );
    const windowMs = Math.max(0, lastAbnormal - promotion);
    const servedWindowMs = Math.max(0, lastFailed - promotion);
    const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
    console.log(
      `promotion ${s(promotion)} after the stop, resume ${s(resume)}. From the promotion: served in full ` +
        `again after ${s(servedWindowMs)} (last failed or degraded answer ${s(lastFailed)} after the stop); ` +
        `normal latency after ${s(windowMs)} (last slice with a failed or degraded answer, or a p50 above ` +
        `the floor's p99 of ${formatMs(normalP50Ms)} ms, ended ${s(lastAbnormal)} after the stop)`,
    );
    console.log('log lines (s after the stop):');
    for (const line of logLines) console.log(`  ${(line.at / 1000).toFixed(2)}  ${line.msg}`);
    const statuses: Record<string, number> = {};
    for (const a of rel.filter((x) => x.end > 0))
      statuses[`${a.status}${a.degraded ? ' degraded' : ''}`] =
        (statuses[`${a.status}${a.degraded ? ' degraded' : ''}`] ?? 0) + 1;
    console.log(`answers after the stop: ${JSON.stringify(statuses)}`);
    return {
      nodeTimeoutMs,
      promotionMs: promotion,
      resumeMs: resume,
      lastAbnormalMs: lastAbnormal,
      lastFailedMs: lastFailed,
      windowFromPromotionMs: windowMs,
      servedWindowFromPromotionMs: servedWindowMs,
      normalP50Ms,
      phases,
      statuses,
      logLines,
      load: loadAverages(loadBefore),
    };
  } finally {
    await cleanup.run();
  }
}
