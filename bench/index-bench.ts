/**
 * `npm run bench -- index`: the entity index over HTTP against its floor, the same work done
 * straight through the Redis client. See docs/reference/performance.md for what each figure means.
 */
import { loadavg } from 'node:os';
import { createClient } from 'redis';
import { startTestRedis } from '../test/helpers/redis-server.js';
import type { BenchContext } from './lib/benchmark.js';
import { type CpuSample, cpuPerCall, sampleCpu } from './lib/cpu.js';
import type { DriveResult } from './lib/drive.js';
import { HttpClient } from './lib/http.js';
import {
  type FloorClient,
  floorGet,
  floorUpload,
  httpGet,
  httpUpload,
  type IndexBatch,
  type PhaseRun,
  prepareIndexWork,
  verifyFloorGets,
  verifyFloorUploads,
  verifyGets,
  verifyUploads,
} from './lib/index-work.js';
import type { PhaseWindow } from './lib/profile-summary.js';
import { serverNodeArgs, startServerProcess } from './lib/server-process.js';
import { median, type PhaseStats, summarise } from './lib/stats.js';
import { formatCount, formatMs, formatTable } from './lib/table.js';

const BATCH = 1000;
const CONCURRENCY = 8;
/** The goal: HTTP throughput at least this share of the floor's, for upload and for get. */
const GOAL_RATIO = 0.5;

type Phase = 'upload' | 'get';
type Path = 'http' | 'floor';
/** A phase's timings and the CPU each process spent per call during it. */
type Measured = DriveResult & { cpu: CpuSample };
type RoundResult = Record<Phase, Record<Path, Measured>>;
/** Times one phase (named `<phase>/<path>/<round>`) and the CPU spent during it. */
type Measure = <Answer>(
  name: string,
  phase: () => Promise<PhaseRun<Answer>>,
) => Promise<PhaseRun<Answer> & { cpu: CpuSample }>;

/** The monotonic clock V8 stamps CPU profiles with, in µs. */
function monotonicUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

/** Runs the index benchmark and returns its figures. */
export async function run(context: BenchContext): Promise<Record<string, unknown>> {
  const total = context.quick ? 10_000 : 100_000;
  // The machine is small and shared: several rounds, reported by their median, tame the noise.
  const rounds = context.quick ? 1 : 5;
  // Enough calls for the JIT to optimise both paths and for Redis to have grown its tables once.
  const warmupCalls = context.quick ? 5 : 30;
  const work = prepareIndexWork(total, BATCH);
  const loadBefore = loadavg()[0] ?? 0;
  console.log(
    `index: ${formatCount(total)} products (mean ${work.meanEntityBytes} B JSON) in calls of ${BATCH}, ` +
      `concurrency ${CONCURRENCY}, ${rounds} round(s), server in a child process`,
  );
  if (loadBefore > 0.5)
    console.log(`warning: load average ${loadBefore.toFixed(2)} before start; figures will be noisy`);

  const redis = await startTestRedis();
  const cleanup: Array<() => Promise<unknown>> = [() => redis.stop()];
  try {
    const server = await startServerProcess({ redisUrl: redis.url, cpuProfDir: context.cpuProfDir });
    cleanup.unshift(() => server.stop());
    const http = new HttpClient(server.origin, CONCURRENCY);
    cleanup.unshift(() => http.close());
    const floor: FloorClient = createClient({ url: redis.url });
    // Without a listener node-redis would crash the run on a connection error; failed commands
    // still reject, and drive() counts them.
    floor.on('error', () => undefined);
    await floor.connect();
    cleanup.unshift(() => floor.close());

    const phaseWindows: PhaseWindow[] = [];
    const measure: Measure = async (name, phase) => {
      const before = await sampleCpu(server, floor);
      const startUs = monotonicUs();
      const result = await phase();
      phaseWindows.push({ phase: name, startUs, endUs: monotonicUs() });
      return {
        ...result,
        cpu: cpuPerCall(before, await sampleCpu(server, floor), result.latenciesMs.length),
      };
    };
    // Warm-up: the same code paths on a slice of the work, figures discarded.
    await runRound(http, floor, measure, work.batches.slice(0, warmupCalls), 'warmup');
    const results: RoundResult[] = [];
    for (let round = 0; round < rounds; round++)
      results.push(await runRound(http, floor, measure, work.batches, round));

    const figures = { upload: compare(results, 'upload'), get: compare(results, 'get') };
    printTable(figures);
    const loadAfter = loadavg()[0] ?? 0;
    return {
      entities: total,
      batch: BATCH,
      concurrency: CONCURRENCY,
      rounds,
      meanEntityBytes: work.meanEntityBytes,
      warmupCalls,
      loadAverage: { before: loadBefore, after: loadAfter },
      serverProcess: ['node', '--import', 'tsx', ...serverNodeArgs(), 'bench/lib/serve.ts'].join(' '),
      httpClient: `undici Pool, ${CONCURRENCY} keep-alive connections`,
      floorClient: 'redis (node-redis) createClient, one connection, commands pipelined',
      goalRatio: GOAL_RATIO,
      ...figures,
      // When each measured phase ran (monotonic µs), to cut a `--cpu-prof` profile by phase.
      phaseWindows: phaseWindows.filter((w) => !w.phase.endsWith('/warmup')),
    };
  } finally {
    for (const step of cleanup) await step().catch(() => undefined);
  }
}

/**
 * One round: each path uploads everything into an empty Redis and reads it all back. Answers are
 * checked once the clocks have stopped, then dropped, so that neither checking nor a growing
 * heap in this process weighs on the timed calls.
 */
async function runRound(
  http: HttpClient,
  floor: FloorClient,
  measure: Measure,
  batches: readonly IndexBatch[],
  round: number | 'warmup',
): Promise<RoundResult> {
  const tag = (phase: Phase, path: Path) => `${phase}/${path}/${round}`;
  const viaHttp = async () => {
    await floor.flushAll();
    const upload = await measure(tag('upload', 'http'), () => httpUpload(http, batches, CONCURRENCY));
    const get = await measure(tag('get', 'http'), () => httpGet(http, batches, CONCURRENCY));
    verifyUploads(batches, upload.answers);
    verifyGets(batches, get.answers);
    return { upload, get };
  };
  const viaFloor = async () => {
    await floor.flushAll();
    const upload = await measure(tag('upload', 'floor'), () => floorUpload(floor, batches, CONCURRENCY));
    const get = await measure(tag('get', 'floor'), () => floorGet(floor, batches, CONCURRENCY));
    verifyFloorUploads(upload.answers);
    verifyFloorGets(batches, get.answers);
    return { upload, get };
  };
  // Alternating which path goes first cancels whatever favours going first or second.
  const floorFirst = typeof round === 'number' && round % 2 === 1;
  const [h, f] = floorFirst
    ? await viaFloor().then(async (f) => [await viaHttp(), f] as const)
    : await viaHttp().then(async (h) => [h, await viaFloor()] as const);
  return {
    upload: { http: timing(h.upload), floor: timing(f.upload) },
    get: { http: timing(h.get), floor: timing(f.get) },
  };
}

/** Drops the answers once checked, so rounds do not pile 30 MB each onto this process's heap. */
function timing({ latenciesMs, wallMs, cpu }: Measured): Measured {
  return { latenciesMs, wallMs, cpu };
}

/** One phase's figures: latencies over every round's calls, throughput the median round's. */
interface Comparison {
  http: PathStats;
  floor: PathStats;
  /**
   * Median over rounds of HTTP throughput / floor throughput. Each round's two paths ran seconds
   * apart, so pairing them cancels most of the load the shared machine adds.
   */
  ratio: number;
  ratioPerRound: number[];
  goalMet: boolean;
}

/** A path's figures in one phase; `cpuMsPerCall` is the mean over rounds. */
type PathStats = PhaseStats & { itemsPerSecPerRound: number[]; cpuMsPerCall: CpuSample };

function compare(results: readonly RoundResult[], phase: Phase): Comparison {
  const stats = (path: Path): PathStats => {
    const perRound = results.map((round) =>
      summarise(round[phase][path].latenciesMs, round[phase][path].wallMs, BATCH),
    );
    const pooled = summarise(
      results.flatMap((round) => round[phase][path].latenciesMs),
      results.reduce((sum, round) => sum + round[phase][path].wallMs, 0),
      BATCH,
    );
    const itemsPerSecPerRound = perRound.map((round) => round.itemsPerSec);
    const cpu = (process: keyof CpuSample) =>
      Math.round(
        (results.reduce((sum, round) => sum + round[phase][path].cpu[process], 0) / results.length) * 100,
      ) / 100;
    return {
      ...pooled,
      itemsPerSec: Math.round(median(itemsPerSecPerRound)),
      itemsPerSecPerRound,
      cpuMsPerCall: { client: cpu('client'), server: cpu('server'), redis: cpu('redis') },
    };
  };
  const http = stats('http');
  const floor = stats('floor');
  const ratioPerRound = http.itemsPerSecPerRound.map(
    (value, i) => Math.round((value / (floor.itemsPerSecPerRound[i] as number)) * 1000) / 1000,
  );
  const ratio = median(ratioPerRound);
  return { http, floor, ratio, ratioPerRound, goalMet: ratio >= GOAL_RATIO };
}

function printTable(figures: Record<Phase, Comparison>): void {
  const percent = (ratio: number) => `${Math.round(ratio * 100)}%`;
  const rows: string[][] = [];
  for (const [phase, { http, floor, ratio, ratioPerRound, goalMet }] of Object.entries(figures)) {
    const verdict = goalMet ? 'goal met' : `below ${percent(GOAL_RATIO)}`;
    const cells = (path: string, stats: PathStats) => {
      const { client, server, redis } = stats.cpuMsPerCall;
      const cpu = path === 'HTTP' ? [client, server, redis] : [client, redis];
      return [
        phase,
        path,
        formatCount(stats.itemsPerSec),
        formatMs(stats.p50Ms),
        formatMs(stats.p99Ms),
        cpu.map(formatMs).join(' + '),
      ];
    };
    rows.push([...cells('HTTP', http), `${percent(ratio)} ${verdict}`, ratioPerRound.map(percent).join(' ')]);
    rows.push([...cells('floor', floor), '', '']);
  }
  const header = [
    'phase',
    'path',
    'entities/s',
    'p50 ms',
    'p99 ms',
    'CPU ms/call',
    'HTTP/floor',
    'per round',
  ];
  console.log(formatTable(header, rows, 2));
  console.log(
    'CPU ms/call: load generator + rankd server + redis-server (HTTP); client + redis-server (floor)',
  );
}
