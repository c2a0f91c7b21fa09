/**
 * `npm run bench -- events`: what logging events costs. The template's pipeline on the spec's
 * example (24 candidates, page 8) over HTTP, served twice from one private build and one Redis:
 * with events off (`EVENTS_SINK=off`) and with IMPRESSION + MODEL events written to the Redis
 * stream. Rounds alternate which server goes first; the figure is the median over rounds of
 * events-on throughput ÷ events-off throughput. Goal (issue 6): events cost at most 10%.
 */
import { fileURLToPath } from 'node:url';
import type { BenchContext } from './lib/benchmark.js';
import { type CpuSample, cpuPerCall, sampleCpu } from './lib/cpu.js';
import { driveFor } from './lib/drive-for.js';
import { HttpClient } from './lib/http.js';
import {
  productSalesRow,
  productStatsRow,
  RANK_PATH,
  type RankRequest,
  rankAnswerProblem,
  rankProduct,
  rankRequests,
} from './lib/rank-data.js';
import { announce, Cleanup, loadAverages, setUpBuildAndRedis } from './lib/run-setup.js';
import { type ServerProcess, startServerProcess } from './lib/server-process.js';
import { median, summarise } from './lib/stats.js';
import { formatCount, formatMs, formatTable } from './lib/table.js';
import { KEY_SETTINGS } from './lib/template-stores.js';

const CONCURRENCY = 16;
const GOAL_COST = 0.1;
/** The spec's example. */
const SHAPE = { candidates: 24, userPageSize: 8, candidatePageSize: 24 } as const;
const EVENTS_PER_REQUEST =
  SHAPE.candidates + SHAPE.userPageSize + (process.env.BENCH_SHOWN_FEATURES === '1' ? 1 : 0);
const SERVE_RANK = fileURLToPath(new URL('./lib/serve-rank.ts', import.meta.url));
/** As the rank benchmark's servers, so the two benchmarks measure the same server. */
const SERVER_SETTINGS = { ...KEY_SETTINGS, REDIS_COMMAND_TIMEOUT_MS: '30000' } as const;
/**
 * `BENCH_SHOWN_FEATURES=1` adds the FEATURE_ROWS event (`EVENTS_FEATURES=shown`, the training
 * data, the default of a server; with it every candidate's FEATURE events in 1% of requests): the
 * template model's 14 inputs of each of the 8 shown.
 */
const SHOWN_FEATURES = process.env.BENCH_SHOWN_FEATURES === '1';
const EVENTS_ON = {
  EVENTS_SINK: 'redis',
  EVENTS_KINDS: 'IMPRESSION,MODEL',
  EVENTS_FEATURES: SHOWN_FEATURES ? 'shown' : 'off',
};
const STREAM = 'default:events';
const BATCH = 1000;

type Mode = 'off' | 'on';

interface Phase {
  requestsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  cpu: CpuSample;
  /** Stream entries written during the phase (or just after), per request: 1 when none is lost. */
  entriesPerRequest: number;
}

/** One server's figures: medians over rounds, CPU the mean. */
interface Summary {
  requestsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  cpuMsPerRequest: CpuSample;
  entriesPerRequest: number;
}

/** Runs the benchmark and returns its figures. */
export async function run(context: BenchContext): Promise<Record<string, unknown>> {
  const plan = context.quick
    ? { products: 10_000, rounds: 1, loadedMs: 2000, warmupMs: 1000 }
    : { products: 100_000, rounds: 7, loadedMs: 10_000, warmupMs: 5000 };
  const loadBefore = announce(
    `events: the template pipeline on the spec example (${SHAPE.candidates} candidates, page ${SHAPE.userPageSize}), ` +
      `events off vs IMPRESSION + MODEL${SHOWN_FEATURES ? ' + FEATURE_ROWS' : ''} to the Redis stream; concurrency ${CONCURRENCY}, ` +
      `${plan.loadedMs / 1000} s × ${plan.rounds} round(s) per server`,
  );
  const cleanup = new Cleanup();
  try {
    const { build, redis, monitor } = await setUpBuildAndRedis('events', cleanup);
    console.log(`rankd built from the ${build.source}`);
    const start = (mode: Mode) =>
      startServerProcess({
        redisUrl: redis.url,
        entry: SERVE_RANK,
        env: {
          ...SERVER_SETTINGS,
          BENCH_PKG_DIR: build.dir,
          BENCH_RANK_MODE: 'template',
          ...(mode === 'on' ? EVENTS_ON : { EVENTS_SINK: 'off' }),
        },
        ...(context.cpuProfDir ? { cpuProfDir: context.cpuProfDir } : {}),
      });
    const servers: Record<Mode, ServerProcess> = { off: await start('off'), on: await start('on') };
    cleanup.add(
      () => servers.off.stop(),
      () => servers.on.stop(),
    );
    const clients: Record<Mode, HttpClient> = {
      off: new HttpClient(servers.off.origin, CONCURRENCY),
      on: new HttpClient(servers.on.origin, CONCURRENCY),
    };
    cleanup.add(
      () => clients.off.close(),
      () => clients.on.close(),
    );
    await load(clients.off, plan.products);
    console.log(`loaded ${formatCount(plan.products)} products and their 2 feature rows each`);

    const requests = rankRequests(SHAPE, context.quick ? 400 : 4000, plan.products, 1);
    let offset = 0;
    /** Stream entries ever added (XINFO's entries-added: trimming does not lower it). */
    const added = async (): Promise<number> => {
      const info: unknown = await monitor.sendCommand(['XINFO', 'STREAM', STREAM]).catch(() => null);
      // A flat [name, value, ...] list in RESP2, a map otherwise.
      if (Array.isArray(info)) return Number(info[info.indexOf('entries-added') + 1] ?? 0);
      if (info instanceof Map) return Number(info.get('entries-added') ?? 0);
      return Number((info as Record<string, unknown> | null)?.['entries-added'] ?? 0);
    };
    const phase = async (mode: Mode, durationMs: number): Promise<Phase> => {
      const answers: string[] = [];
      const first = offset;
      const requestOf = (seq: number) => requests[(first + seq) % requests.length] as RankRequest;
      const addedBefore = await added();
      const before = await sampleCpu(servers[mode], monitor);
      const result = await driveFor(durationMs, CONCURRENCY, async (seq) => {
        answers[seq] = await clients[mode].postJson(RANK_PATH, requestOf(seq).body);
      });
      // The sink writes after responses, within its flush interval: let the last ones land.
      if (mode === 'on') await new Promise((resolve) => setTimeout(resolve, 300));
      const cpu = cpuPerCall(before, await sampleCpu(servers[mode], monitor), result.latenciesMs.length);
      offset += result.latenciesMs.length;
      for (let seq = 0; seq < answers.length; seq++) {
        const problem = rankAnswerProblem(requestOf(seq), answers[seq] ?? '', SHAPE.userPageSize);
        if (problem !== undefined) throw new Error(`${mode} call ${seq}: ${problem}`);
      }
      const stats = summarise(result.latenciesMs, result.wallMs, 1);
      return {
        requestsPerSec: stats.itemsPerSec,
        p50Ms: stats.p50Ms,
        p99Ms: stats.p99Ms,
        cpu,
        entriesPerRequest: ((await added()) - addedBefore) / result.latenciesMs.length,
      };
    };

    await phase('off', plan.warmupMs);
    await phase('on', plan.warmupMs);
    const phases: Record<Mode, Phase[]> = { off: [], on: [] };
    for (let round = 0; round < plan.rounds; round++) {
      const order: Mode[] = round % 2 === 0 ? ['off', 'on'] : ['on', 'off'];
      for (const mode of order) phases[mode].push(await phase(mode, plan.loadedMs));
      const [off, on] = [phases.off.at(-1), phases.on.at(-1)] as [Phase, Phase];
      console.log(
        `round ${round + 1}: off ${formatCount(off.requestsPerSec)} req/s, on ${formatCount(on.requestsPerSec)} req/s`,
      );
    }
    // An entry is one request's events: the last one must hold all of them.
    const [last] = (await monitor.xRevRange(STREAM, '+', '-', { COUNT: 1 })) ?? [];
    const eventsPerEntry = last ? (JSON.parse(String(last.message.events)) as unknown[]).length : 0;
    if (eventsPerEntry !== EVENTS_PER_REQUEST)
      throw new Error(`the last stream entry holds ${eventsPerEntry} events, expected ${EVENTS_PER_REQUEST}`);
    const ratios = phases.on.map((on, i) => on.requestsPerSec / (phases.off[i] as Phase).requestsPerSec);
    const ratio = median(ratios);
    const summary = (mode: Mode): Summary => ({
      requestsPerSec: Math.round(median(phases[mode].map((p) => p.requestsPerSec))),
      p50Ms: median(phases[mode].map((p) => p.p50Ms)),
      p99Ms: median(phases[mode].map((p) => p.p99Ms)),
      cpuMsPerRequest: meanCpu(phases[mode]),
      entriesPerRequest: median(phases[mode].map((p) => p.entriesPerRequest)),
    });
    const figures = { off: summary('off'), on: summary('on') };
    // CPU per request moves less than throughput when other work shares the machine.
    const total = (cpu: CpuSample) => cpu.client + cpu.server + cpu.redis;
    const cpuCost = total(figures.on.cpuMsPerRequest) / total(figures.off.cpuMsPerRequest) - 1;
    printTable(figures, ratios, ratio, cpuCost);
    return {
      source: build.source,
      products: plan.products,
      shape: SHAPE,
      concurrency: CONCURRENCY,
      rounds: plan.rounds,
      loadedSeconds: plan.loadedMs / 1000,
      eventsOn: EVENTS_ON,
      eventsPerEntry,
      loadAverage: loadAverages(loadBefore),
      figures,
      throughputRatioPerRound: ratios.map((r) => Math.round(r * 1000) / 1000),
      throughputRatio: Math.round(ratio * 1000) / 1000,
      cpuCost: Math.round(cpuCost * 1000) / 1000,
      goal: `events cost ≤ ${GOAL_COST * 100}% of throughput`,
      goalMet: ratio >= 1 - GOAL_COST,
    };
  } finally {
    await cleanup.run();
  }
}

/** Products and their two template feature rows, through the public upload routes. */
async function load(client: HttpClient, total: number): Promise<void> {
  for (let start = 0; start < total; start += BATCH) {
    const numbers = Array.from({ length: Math.min(BATCH, total - start) }, (_, j) => start + j);
    const products = numbers.map(rankProduct);
    await client.postJson(
      '/api/v1/entities/upload',
      JSON.stringify({ entity_type: 'product', entities: products }),
    );
    for (const [view, row] of [
      ['product_stats', productStatsRow],
      ['product_sales', productSalesRow],
    ] as const) {
      const rows = numbers.map((i, j) => ({ entity_id: products[j]?.product_id, ...row(i) }));
      await client.postJson('/api/v1/features/upload', JSON.stringify({ feature_view: view, rows }));
    }
  }
}

function meanCpu(phases: readonly Phase[]): CpuSample {
  const mean = (key: keyof CpuSample) =>
    Math.round((phases.reduce((sum, p) => sum + p.cpu[key], 0) / phases.length) * 1000) / 1000;
  return { client: mean('client'), server: mean('server'), redis: mean('redis') };
}

function printTable(
  figures: Record<Mode, Summary>,
  ratios: readonly number[],
  ratio: number,
  cpuCost: number,
): void {
  const percent = (value: number) => `${Math.round(value * 1000) / 10}%`;
  const rows = (['off', 'on'] as const).map((mode) => {
    const f = figures[mode];
    const { client, server, redis } = f.cpuMsPerRequest;
    return [
      mode === 'off'
        ? 'events off'
        : `IMPRESSION + MODEL${SHOWN_FEATURES ? ' + FEATURE_ROWS' : ''} to the stream`,
      formatCount(f.requestsPerSec),
      formatMs(f.p50Ms),
      formatMs(f.p99Ms),
      [client, server, redis].map((v) => v.toFixed(3)).join(' + '),
      f.entriesPerRequest.toFixed(2),
    ];
  });
  console.log(
    formatTable(
      ['server', 'req/s', 'p50 ms', 'p99 ms', 'CPU ms/req (client + server + redis)', 'entries/req'],
      rows,
      2,
    ),
  );
  console.log(`on ÷ off per round: ${ratios.map(percent).join(' ')}; median ${percent(ratio)}`);
  console.log(`CPU per request (client + server + redis), on vs off: +${percent(cpuCost)}`);
  console.log(
    `goal: events cost ≤ ${GOAL_COST * 100}% of throughput: ${percent(1 - ratio)}, ${ratio >= 1 - GOAL_COST ? 'met' : 'NOT met'}`,
  );
}
