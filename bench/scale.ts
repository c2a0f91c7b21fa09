/**
 * `npm run bench -- scale`: what one more worker buys and what data costs in Redis, for
 * docs/guides/deploy.md's sizing table.
 *
 * 1. Memory: 100,000 template products (≈ 300 B of JSON each) go into an empty Redis through
 *    rankd's own stores, then a row of each of the template's two product views per product
 *    (`product_sales`: 10 numbers; `product_stats`: 10 numbers and an 8-float vector); after each
 *    step, `used_memory` growth per item (INFO memory) and the mean `MEMORY USAGE` of 1000 keys.
 * 2. Throughput: `rankd run --workers 1`, then `--workers 2`, on that data, serving the template's
 *    ranking pipeline; the spec's example request (24 candidates, page 8, query "candle", the
 *    rank benchmark's request generator) at concurrency 16, every answer checked.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RUNTIME_NODE_FLAGS } from '../src/cli/runtime-flags.js';
import { childPids, startCliService } from '../test/helpers/cli-service.js';
import type { BenchContext } from './lib/benchmark.js';
import { driveFor } from './lib/drive-for.js';
import { HttpClient } from './lib/http.js';
import type { PackageBuild } from './lib/package-build.js';
import {
  RANK_PATH,
  type RankRequest,
  rankAnswerProblem,
  rankProduct,
  rankRequests,
} from './lib/rank-data.js';
import { type MemoryCost, measureMemory, type RedisInfo } from './lib/redis-memory.js';
import { announce, Cleanup, loadAverages, setUpBuildAndRedis } from './lib/run-setup.js';
import { median, summarise } from './lib/stats.js';
import { formatCount, formatMs, formatTable } from './lib/table.js';
import {
  inLoadBatches,
  KEY_SETTINGS,
  openTemplateLoader,
  type TemplateProductView,
} from './lib/template-stores.js';

const CONCURRENCY = 16;
const SPEC_EXAMPLE = { candidates: 24, userPageSize: 8, candidatePageSize: 24 } as const;
const SAMPLED_KEYS = 1000;

interface Plan {
  products: number;
  warmupMs: number;
  roundMs: number;
  rounds: number;
}

/** Throughput of one worker count. */
interface WorkerFigures {
  workers: number;
  requestsPerSec: number;
  requestsPerSecPerRound: number[];
  p50Ms: number;
  p99Ms: number;
  /** CPU of the serving processes (the workers; the primary idles) per request, in ms. */
  serverCpuMsPerRequest: number;
}

/** Runs the scale benchmark and returns its figures. */
export async function run(context: BenchContext): Promise<Record<string, unknown>> {
  const plan: Plan = context.quick
    ? { products: 10_000, warmupMs: 1000, roundMs: 3000, rounds: 1 }
    : { products: 100_000, warmupMs: 5000, roundMs: 15_000, rounds: 3 };
  const loadBefore = announce(
    `scale: ${formatCount(plan.products)} products and 2 feature rows each into an empty Redis (memory), then ` +
      `the spec example (24 candidates, page 8) at concurrency ${CONCURRENCY} against rankd run --workers 1 and 2, ` +
      `${plan.rounds} × ${plan.roundMs / 1000} s each`,
  );
  const cleanup = new Cleanup();
  try {
    const { build, redis, monitor } = await setUpBuildAndRedis('scale', cleanup);

    const memory = await loadAndMeasure(build, redis.url, monitor, plan.products);
    printMemory(memory, plan.products);
    const requests = rankRequests(SPEC_EXAMPLE, context.quick ? 400 : 4000, plan.products, 7);
    const throughput: WorkerFigures[] = [];
    for (const workers of [1, 2]) {
      console.log(`rankd run --workers ${workers}: running`);
      throughput.push(await measureWorkers(build, redis.url, workers, plan, requests));
    }
    printThroughput(throughput);
    return {
      products: plan.products,
      memory,
      concurrency: CONCURRENCY,
      request: SPEC_EXAMPLE,
      warmupSeconds: plan.warmupMs / 1000,
      roundSeconds: plan.roundMs / 1000,
      rounds: plan.rounds,
      throughput,
      loadAverage: loadAverages(loadBefore),
      server: `node ${RUNTIME_NODE_FLAGS.join(' ')} <private build>/dist/cli/main.js run --workers N --app template/pipelines/main.ts`,
    };
  } finally {
    await cleanup.run();
  }
}

/** Loads through the private build's stores (as the upload routes write), measuring each step. */
async function loadAndMeasure(build: PackageBuild, redisUrl: string, client: RedisInfo, total: number) {
  const loader = await openTemplateLoader(build, redisUrl);
  const { keys } = loader.stores;
  // Evenly spread over the whole load, so early and late keys weigh alike.
  const idOf = (i: number) => rankProduct(i).product_id;
  const sample = Array.from({ length: SAMPLED_KEYS }, (_, k) => idOf(Math.floor((k * total) / SAMPLED_KEYS)));
  let jsonBytes = 0;
  try {
    const product = await measureMemory(
      client,
      total,
      sample.map((id) => keys.entity('product', id)),
      () =>
        inLoadBatches(total, async (numbers) => {
          const bytes = await loader.writeProducts(numbers);
          jsonBytes += bytes;
        }),
    );
    const rowsOf = (view: TemplateProductView) =>
      measureMemory(
        client,
        total,
        sample.map((id) => keys.featureRow(view, [id])),
        () => inLoadBatches(total, (numbers) => loader.writeRows(view, numbers)),
      );
    return {
      product,
      product_sales: await rowsOf('product_sales'),
      product_stats: await rowsOf('product_stats'),
      meanProductJsonBytes: Math.round(jsonBytes / total),
    };
  } finally {
    await loader.close();
  }
}

/** Memory cost of products and of each view's rows, measured as they are loaded. */
type MemoryFigures = Awaited<ReturnType<typeof loadAndMeasure>>;

/** CPU time (user + system) of `pid` so far, in ms, from /proc (Linux); 0 when it is gone. */
function processCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime and stime are fields 14 and 15 of the whole line, in clock ticks (100 per second on Linux).
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return 0;
  }
}

/** Serves the template with `workers` processes and drives the spec example against it. */
async function measureWorkers(
  build: PackageBuild,
  redisUrl: string,
  workers: number,
  plan: Plan,
  requests: readonly RankRequest[],
): Promise<WorkerFigures> {
  const service = await startCliService(
    build.templateApp,
    { REDIS_URL: redisUrl, LOG_LEVEL: 'silent', API_KEYS: '', ADMIN_API_KEYS: '', ...KEY_SETTINGS },
    ['--workers', String(workers)],
    // The flags bin/rankd.js runs with: this is `rankd run` without the shebang.
    { cli: [...RUNTIME_NODE_FLAGS, join(build.dir, 'dist', 'cli', 'main.js')], cwd: build.dir },
  );
  const http = new HttpClient(service.base, CONCURRENCY);
  try {
    const primary = service.child.pid ?? 0;
    const serving = workers === 1 ? [primary] : childPids(primary);
    const cpuMs = () => serving.reduce((sum, pid) => sum + processCpuMs(pid), 0);
    const drive = async (durationMs: number, offset: number) => {
      const answers: string[] = [];
      const result = await driveFor(durationMs, CONCURRENCY, async (seq) => {
        answers[seq] = await http.postJson(
          RANK_PATH,
          (requests[(offset + seq) % requests.length] as RankRequest).body,
        );
      });
      answers.forEach((text, seq) => {
        const problem = rankAnswerProblem(requests[(offset + seq) % requests.length] as RankRequest, text, 8);
        if (problem !== undefined) throw new Error(`--workers ${workers}, call ${seq}: ${problem}`);
      });
      return result;
    };
    await drive(plan.warmupMs, 0);
    const rounds = [];
    const cpuBefore = cpuMs();
    for (let round = 0; round < plan.rounds; round++)
      rounds.push(await drive(plan.roundMs, 1000 * (round + 1)));
    const cpuUsed = cpuMs() - cpuBefore;
    const perRound = rounds.map((r) => summarise(r.latenciesMs, r.wallMs, 1).itemsPerSec);
    const pooled = summarise(
      rounds.flatMap((r) => r.latenciesMs),
      rounds.reduce((sum, r) => sum + r.wallMs, 0),
      1,
    );
    return {
      workers,
      requestsPerSec: Math.round(median(perRound)),
      requestsPerSecPerRound: perRound,
      p50Ms: pooled.p50Ms,
      p99Ms: pooled.p99Ms,
      serverCpuMsPerRequest: Math.round((cpuUsed / pooled.calls) * 100) / 100,
    };
  } finally {
    await http.close();
    service.child.kill('SIGTERM');
    await service.exited;
  }
}

function printMemory(memory: MemoryFigures, total: number): void {
  const row = (label: string, cost: MemoryCost) => [
    label,
    formatCount(cost.bytesPerItemInfo),
    formatCount(cost.bytesPerItemSampled),
    cost.mbPer100k.toFixed(1),
    formatCount(cost.mbPerMillion),
  ];
  console.log(
    `\nRedis memory, ${formatCount(total)} of each (used_memory growth; MEMORY USAGE of ${SAMPLED_KEYS} keys):`,
  );
  console.log(
    formatTable(
      ['data', 'B/item (INFO)', 'B/item (MEMORY USAGE)', 'MB per 100k', 'MB per 1M'],
      [
        row(`product (${memory.meanProductJsonBytes} B JSON)`, memory.product),
        row('product_sales row (10 numbers)', memory.product_sales),
        row('product_stats row (10 numbers + 8 floats)', memory.product_stats),
      ],
    ),
  );
}

function printThroughput(figures: readonly WorkerFigures[]): void {
  const one = figures[0]?.requestsPerSec ?? Number.NaN;
  console.log(`\nThroughput, spec example (24 candidates, page 8), concurrency ${CONCURRENCY}:`);
  console.log(
    formatTable(
      ['workers', 'requests/s', 'vs 1 worker', 'p50 ms', 'p99 ms', 'server CPU ms/request', 'per round'],
      figures.map((f) => [
        String(f.workers),
        formatCount(f.requestsPerSec),
        `×${(f.requestsPerSec / one).toFixed(2)}`,
        formatMs(f.p50Ms),
        formatMs(f.p99Ms),
        f.serverCpuMsPerRequest.toFixed(2),
        f.requestsPerSecPerRound.map(formatCount).join(' '),
      ]),
    ),
  );
}
