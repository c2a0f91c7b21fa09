/**
 * `npm run bench -- rank`: the template's ranking pipeline over HTTP, with 100,000 products in the
 * index and both product feature views filled, against its floor: a bare route doing the same
 * Redis reads; one request at a time, also against the parsing floor: those reads with every
 * entity parsed. rankd runs twice, without and with its read cache (`READ_CACHE_MB`), and the
 * candidates are drawn two ways: uniformly, and by popularity (Zipf). See
 * docs/reference/performance.md for what each figure means.
 */
import { fileURLToPath } from 'node:url';
import type { createClient } from 'redis';
import type { BenchContext } from './lib/benchmark.js';
import { type CpuSample, cpuPerCall, sampleCpu } from './lib/cpu.js';
import { type DriveResult, drive } from './lib/drive.js';
import { driveFor } from './lib/drive-for.js';
import { HttpClient } from './lib/http.js';
import type { PhaseWindow } from './lib/profile-summary.js';
import {
  CANDIDATE_WORKLOADS,
  type CandidateWorkload,
  floorBody,
  PARSING_FLOOR_PATH,
  RANK_PATH,
  type RankCaseShape,
  type RankRequest,
  rankAnswerProblem,
  rankRequests,
} from './lib/rank-data.js';
import { announce, Cleanup, loadAverages, setUpBuildAndRedis } from './lib/run-setup.js';
import { type ServerProcess, serverNodeArgs, startServerProcess } from './lib/server-process.js';
import { median, type PhaseStats, summarise } from './lib/stats.js';
import { formatCount, formatMs, formatTable } from './lib/table.js';
import { loadTemplateData, RANK_SERVER_SETTINGS } from './lib/template-stores.js';

const CONCURRENCY = 16;
/** Issue 3's goals: (a) at least this share of the floor's throughput; (b) one request alone this fast. */
const GOAL_THROUGHPUT_RATIO = 0.6;
const GOAL_UNLOADED_P50_MS = 10;
const SERVE_RANK = fileURLToPath(new URL('./lib/serve-rank.ts', import.meta.url));
/** The read cache's size in the `rankd cache` server, in MiB (`BENCH_READ_CACHE_MB` to try another). */
const CACHE_MB = Number(process.env.BENCH_READ_CACHE_MB ?? 64);

/** A benchmark case: a request shape, how many distinct requests to cycle through, and its goal. */
export interface RankCase extends RankCaseShape {
  readonly key: 'a' | 'b';
  readonly label: string;
  readonly distinctRequests: number;
}

/** The cases, (a) and (b), as issue 3 names them. */
export const CASES: readonly RankCase[] = [
  {
    key: 'a',
    label: '(a) spec example: 24 candidates, page 8',
    candidates: 24,
    userPageSize: 8,
    candidatePageSize: 24,
    distinctRequests: 4000,
  },
  {
    key: 'b',
    label: '(b) 1000 candidates, page 100',
    candidates: 1000,
    userPageSize: 100,
    candidatePageSize: 1000,
    distinctRequests: 500,
  },
];

/**
 * The cases to run: all, or those `BENCH_RANK_CASES` names (`BENCH_RANK_CASES=b` measures only the
 * 1000-candidate case, to compare two builds of one change in half the time).
 */
function casesToRun(): Set<string> {
  const named = (process.env.BENCH_RANK_CASES ?? '').split(/[\s,]+/).filter(Boolean);
  const unknown = named.filter((key) => !CASES.some((rankCase) => rankCase.key === key));
  if (unknown.length > 0) throw new Error(`BENCH_RANK_CASES: no case ${unknown.join(', ')} (cases: a, b)`);
  return new Set(named.length > 0 ? named : CASES.map((rankCase) => rankCase.key));
}

/**
 * The workloads to run: both, or those `BENCH_RANK_WORKLOADS` names (`uniform`, `zipf`).
 */
function workloadsToRun(): CandidateWorkload[] {
  const named = (process.env.BENCH_RANK_WORKLOADS ?? '').split(/[\s,]+/).filter(Boolean);
  const unknown = named.filter((name) => !CANDIDATE_WORKLOADS.includes(name as CandidateWorkload));
  if (unknown.length > 0)
    throw new Error(`BENCH_RANK_WORKLOADS: no workload ${unknown.join(', ')} (uniform, zipf)`);
  return CANDIDATE_WORKLOADS.filter((name) => named.length === 0 || named.includes(name));
}

/** The paths measured under load; the parsing floor is measured one request at a time only. */
type LoadedPathName = 'rankd' | 'rankd cache' | 'floor';
const LOADED_PATHS: readonly LoadedPathName[] = ['rankd', 'rankd cache', 'floor'];
type PathName = LoadedPathName | 'parsing floor';

/** A route under test, the server that serves it, and how its answers are checked. */
interface Target {
  readonly name: PathName;
  readonly path: string;
  readonly server: ServerProcess;
  readonly http: HttpClient;
  /** Why `text` is not a right answer to `request`, or undefined. */
  check(request: RankRequest, text: string, pageSize: number): string | undefined;
}

/** A measured phase: latencies, wall time, CPU per request. */
type Measured = DriveResult & { cpu: CpuSample };

/** How long things run; a tenth (or less) with --quick. */
interface Plan {
  products: number;
  rounds: number;
  loadedMs: number;
  warmupMs: number;
  unloadedBlocks: number;
  unloadedPerBlock: number;
}

/**
 * `plan` with what the environment shortens on a busy machine (the products stay): `BENCH_RANK_ROUNDS`,
 * `BENCH_RANK_SECONDS` (each loaded phase; the warm-up half of it), `BENCH_RANK_ALONE` (requests
 * one at a time per block and path; two blocks).
 */
function planFromEnv(plan: Plan): Plan {
  const number = (name: string) => {
    const value = process.env[name];
    if (value === undefined || value === '') return undefined;
    const parsed = Number(value);
    if (!Number.isInteger(parsed) || parsed < 1) throw new Error(`${name}=${value}: a whole number ≥ 1`);
    return parsed;
  };
  const rounds = number('BENCH_RANK_ROUNDS');
  const seconds = number('BENCH_RANK_SECONDS');
  const alone = number('BENCH_RANK_ALONE');
  return {
    ...plan,
    ...(rounds === undefined ? {} : { rounds }),
    ...(seconds === undefined ? {} : { loadedMs: seconds * 1000, warmupMs: seconds * 500 }),
    ...(alone === undefined ? {} : { unloadedBlocks: 2, unloadedPerBlock: alone }),
  };
}

function monotonicUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

/** Runs the rank benchmark and returns its figures. */
export async function run(context: BenchContext): Promise<Record<string, unknown>> {
  const selectedCases = casesToRun();
  const plan: Plan = planFromEnv(
    context.quick
      ? {
          products: 10_000,
          rounds: 1,
          loadedMs: 2000,
          warmupMs: 1000,
          unloadedBlocks: 1,
          unloadedPerBlock: 30,
        }
      : {
          products: 100_000,
          rounds: 3,
          loadedMs: 20_000,
          warmupMs: 5000,
          unloadedBlocks: 3,
          unloadedPerBlock: 100,
        },
  );
  const loadBefore = announce(
    `rank: the template pipeline over HTTP (server in a child process) vs a bare route doing the same ` +
      `Redis reads; ${formatCount(plan.products)} products with 2 feature views each; concurrency ` +
      `${CONCURRENCY} for ${plan.loadedMs / 1000} s × ${plan.rounds} round(s) per path, then ` +
      `${plan.unloadedBlocks * plan.unloadedPerBlock} requests one at a time`,
  );

  const cleanup = new Cleanup();
  try {
    const { build, redis, monitor } = await setUpBuildAndRedis('rank', cleanup);
    console.log(`rankd built from the ${build.source}`);
    const loaded = await loadTemplateData(build, redis.url, plan.products);
    console.log(
      `loaded ${formatCount(plan.products)} products (mean ${loaded.meanEntityBytes} B JSON) and ` +
        `${formatCount(2 * plan.products)} feature rows in ${(loaded.ms / 1000).toFixed(1)} s`,
    );

    const env = { ...RANK_SERVER_SETTINGS, BENCH_PKG_DIR: build.dir };
    const rankdServer = await startServerProcess({
      redisUrl: redis.url,
      entry: SERVE_RANK,
      env: { ...env, BENCH_RANK_MODE: 'template', READ_CACHE_MB: '0' },
      cpuProfDir: context.cpuProfDir,
    });
    cleanup.add(() => rankdServer.stop());
    const cacheServer = await startServerProcess({
      redisUrl: redis.url,
      entry: SERVE_RANK,
      env: { ...env, BENCH_RANK_MODE: 'template', READ_CACHE_MB: String(CACHE_MB) },
    });
    cleanup.add(() => cacheServer.stop());
    const floorServer = await startServerProcess({
      redisUrl: redis.url,
      entry: SERVE_RANK,
      env: { ...env, BENCH_RANK_MODE: 'floor' },
    });
    cleanup.add(() => floorServer.stop());
    // Every product, its two feature rows, and the hash of row layouts.
    const keyCount = await monitor.dbSize();
    if (keyCount !== 3 * plan.products + 1)
      throw new Error(`expected ${3 * plan.products + 1} keys after loading, found ${keyCount}`);
    const target = (name: PathName, server: ServerProcess, path = RANK_PATH): Target => {
      const http = new HttpClient(server.origin, CONCURRENCY);
      cleanup.add(() => http.close());
      return {
        name,
        path,
        server,
        http,
        check:
          name === 'rankd' || name === 'rankd cache'
            ? rankAnswerProblem
            : (_request, text, size) => (text === floorBody(size) ? undefined : 'not the fixed body'),
      };
    };
    const targets: Record<PathName, Target> = {
      rankd: target('rankd', rankdServer),
      'rankd cache': target('rankd cache', cacheServer),
      floor: target('floor', floorServer),
      'parsing floor': target('parsing floor', floorServer, PARSING_FLOOR_PATH),
    };

    const phaseWindows: PhaseWindow[] = [];
    const bench = new Measurer(monitor, phaseWindows);
    const cases: Record<string, CaseFigures> = {};
    for (const workload of workloadsToRun()) {
      for (const [n, rankCase] of CASES.entries()) {
        if (!selectedCases.has(rankCase.key)) continue;
        const requests = rankRequests(
          rankCase,
          context.quick ? Math.ceil(rankCase.distinctRequests / 10) : rankCase.distinctRequests,
          plan.products,
          n + 1,
          workload,
        );
        console.log(`${rankCase.label}, ${workload} candidates: running`);
        const before = await cacheStatsOf(cacheServer);
        const figures = await runCase(bench, targets, rankCase, requests, plan, workload);
        figures.readCache = cacheDelta(before, await cacheStatsOf(cacheServer));
        cases[`${rankCase.key}-${workload}`] = figures;
      }
    }
    printTable(cases);
    return {
      source: build.source,
      products: plan.products,
      meanEntityBytes: loaded.meanEntityBytes,
      featureViews: ['product_stats (10 features + 8-float embedding)', 'product_sales (10 features)'],
      concurrency: CONCURRENCY,
      rounds: plan.rounds,
      loadedSeconds: plan.loadedMs / 1000,
      warmupSeconds: plan.warmupMs / 1000,
      unloadedRequests: plan.unloadedBlocks * plan.unloadedPerBlock,
      loadAverage: loadAverages(loadBefore),
      serverProcess: ['node', '--import', 'tsx', ...serverNodeArgs(), 'bench/lib/serve-rank.ts'].join(' '),
      serverSettings: RANK_SERVER_SETTINGS,
      readCacheMb: CACHE_MB,
      memory: { rankd: await cacheStatsOf(rankdServer), 'rankd cache': await cacheStatsOf(cacheServer) },
      httpClient: `undici Pool, ${CONCURRENCY} keep-alive connections`,
      goals: { throughputRatioA: GOAL_THROUGHPUT_RATIO, unloadedP50MsB: GOAL_UNLOADED_P50_MS },
      cases,
      phaseWindows,
    };
  } finally {
    await cleanup.run();
  }
}

/** Times phases on a target and records when they ran (for `--cpu-prof`) and their CPU per request. */
class Measurer {
  #phase = 0;

  constructor(
    readonly monitor: ReturnType<typeof createClient>,
    readonly windows: PhaseWindow[],
  ) {}

  /**
   * Runs `requests` against `target` (request `(offset + seq) % n` for call `seq`) for
   * `durationMs` at `concurrency`, or `count` calls when a count is given; checks every answer
   * once the clock has stopped and throws on the first wrong ones.
   */
  async measure(
    name: string,
    target: Target,
    requests: readonly RankRequest[],
    pageSize: number,
    load: { concurrency: number; durationMs?: number; count?: number; offset: number },
  ): Promise<Measured> {
    const answers: string[] = [];
    const requestOf = (seq: number) => requests[(load.offset + seq) % requests.length] as RankRequest;
    const call = async (seq: number) => {
      answers[seq] = await target.http.postJson(target.path, requestOf(seq).body);
    };
    const before = await sampleCpu(target.server, this.monitor);
    const startUs = monotonicUs();
    const result =
      load.count === undefined
        ? await driveFor(load.durationMs ?? 0, load.concurrency, call)
        : await drive(load.count, load.concurrency, call);
    this.windows.push({ phase: name, startUs, endUs: monotonicUs() });
    const cpu = cpuPerCall(before, await sampleCpu(target.server, this.monitor), result.latenciesMs.length);
    const problems: string[] = [];
    for (let seq = 0; seq < answers.length && problems.length < 3; seq++) {
      const problem = target.check(requestOf(seq), answers[seq] ?? '', pageSize);
      if (problem !== undefined) problems.push(`${target.name} call ${seq}: ${problem}`);
    }
    if (problems.length > 0) throw new Error(`${name}: wrong answers; first: ${problems.join(' | ')}`);
    this.#phase++;
    return { ...result, cpu };
  }

  /** A different starting request for every phase, the same for every path of one round or block. */
  offsetFor(round: number): number {
    return round * 7919 + this.#phase;
  }
}

/** A path's figures in one case. */
interface PathFigures {
  /** Concurrency 16: latencies pooled over the rounds, requests/s the median round's. */
  loaded: PhaseStats & { requestsPerSecPerRound: number[]; cpuMsPerRequest: CpuSample };
  /** Concurrency 1. */
  unloaded: PhaseStats & { cpuMsPerRequest: CpuSample };
}

/** One case's figures for both paths and their ratios. */
interface CaseFigures {
  key: RankCase['key'];
  label: string;
  workload: CandidateWorkload;
  candidates: number;
  userPageSize: number;
  rankd: PathFigures;
  /** rankd with its read cache on. */
  cached: PathFigures;
  /** The cache's figures over the case's phases (warm-up included). */
  readCache?: CacheFigures;
  /** Medians over rounds of the cached rankd's requests/s ÷ the floor's, and ÷ rankd's without cache. */
  cachedThroughputRatio: number;
  cachedOverUncachedThroughput: number;
  floor: PathFigures;
  /** The floor's reads with every entity parsed, one request at a time: what hydrating costs at the least. */
  parsingFloor: { unloaded: PathFigures['unloaded'] };
  /** Median over rounds of rankd's requests/s ÷ the floor's (each round's two ran back to back). */
  throughputRatio: number;
  throughputRatioPerRound: number[];
  /** rankd's unloaded p50 ÷ the floor's. */
  unloadedP50Ratio: number;
  /**
   * The floor's CPU per request (load generator + server + Redis) ÷ rankd's, at concurrency 16:
   * what the throughput ratio tends to on a machine whose cores are all busy, as this shared one
   * is. It moves far less with the machine's load than the measured ratio does.
   */
  cpuRatio: number;
  /**
   * rankd's unloaded p50 less the parsing floor's: what rankd's own work (real-time features,
   * feature rows, model, business steps, the page) adds to the least any hydrating server does.
   */
  unloadedOverParsingFloorMs: number;
  goal: string;
  goalMet: boolean;
}

async function runCase(
  bench: Measurer,
  targets: Record<PathName, Target>,
  rankCase: RankCase,
  requests: readonly RankRequest[],
  plan: Plan,
  workload: CandidateWorkload,
): Promise<CaseFigures> {
  const size = rankCase.userPageSize;
  const phase = `${rankCase.key}-${workload}`;
  const loadedRun = (path: LoadedPathName, round: number | 'warmup', durationMs: number) =>
    bench.measure(`${phase}/loaded/${path}/${round}`, targets[path], requests, size, {
      concurrency: CONCURRENCY,
      durationMs,
      offset: bench.offsetFor(round === 'warmup' ? 99 : round),
    });
  // Warm-up: both paths' code optimised by the JIT, sockets open, Redis's tables grown.
  // (The cache's warm-up fills it too.)
  for (const path of LOADED_PATHS) await loadedRun(path, 'warmup', plan.warmupMs);

  const loaded: Record<LoadedPathName, Measured[]> = { rankd: [], 'rankd cache': [], floor: [] };
  for (let round = 0; round < plan.rounds; round++) {
    // Alternating which path goes first cancels whatever favours going first or last.
    const order = round % 2 === 0 ? LOADED_PATHS : [...LOADED_PATHS].reverse();
    for (const path of order) loaded[path].push(await loadedRun(path, round, plan.loadedMs));
  }
  // One request at a time, in blocks alternating between the paths, so drifting machine load
  // weighs on all alike.
  const unloaded: Record<PathName, Measured[]> = {
    rankd: [],
    'rankd cache': [],
    floor: [],
    'parsing floor': [],
  };
  for (let block = 0; block < plan.unloadedBlocks; block++) {
    for (const path of ['rankd', 'rankd cache', 'floor', 'parsing floor'] as const) {
      unloaded[path].push(
        await bench.measure(`${phase}/unloaded/${path}/${block}`, targets[path], requests, size, {
          concurrency: 1,
          count: plan.unloadedPerBlock,
          offset: bench.offsetFor(block + 50),
        }),
      );
    }
  }

  const aloneFigures = (path: PathName): PathFigures['unloaded'] => ({
    ...summarise(
      unloaded[path].flatMap((m) => m.latenciesMs),
      unloaded[path].reduce((sum, m) => sum + m.wallMs, 0),
      1,
    ),
    cpuMsPerRequest: meanCpu(unloaded[path]),
  });
  const figures = (path: LoadedPathName): PathFigures => {
    const perRound = loaded[path].map((m) => summarise(m.latenciesMs, m.wallMs, 1).itemsPerSec);
    const pooled = summarise(
      loaded[path].flatMap((m) => m.latenciesMs),
      loaded[path].reduce((sum, m) => sum + m.wallMs, 0),
      1,
    );
    return {
      loaded: {
        ...pooled,
        itemsPerSec: Math.round(median(perRound)),
        requestsPerSecPerRound: perRound,
        cpuMsPerRequest: meanCpu(loaded[path]),
      },
      unloaded: aloneFigures(path),
    };
  };
  const rankd = figures('rankd');
  const cached = figures('rankd cache');
  const floor = figures('floor');
  const perRound = (over: PathFigures, under: PathFigures) =>
    over.loaded.requestsPerSecPerRound.map(
      (value, i) => Math.round((value / (under.loaded.requestsPerSecPerRound[i] as number)) * 1000) / 1000,
    );
  const throughputRatioPerRound = perRound(rankd, floor);
  const throughputRatio = median(throughputRatioPerRound);
  const totalCpu = ({ client, server, redis }: CpuSample) => client + server + redis;
  const cpuRatio = totalCpu(floor.loaded.cpuMsPerRequest) / totalCpu(rankd.loaded.cpuMsPerRequest);
  const goalMet =
    rankCase.key === 'a'
      ? throughputRatio >= GOAL_THROUGHPUT_RATIO
      : rankd.unloaded.p50Ms <= GOAL_UNLOADED_P50_MS;
  const parsingFloor = { unloaded: aloneFigures('parsing floor') };
  return {
    key: rankCase.key,
    label: rankCase.label,
    workload,
    candidates: rankCase.candidates,
    userPageSize: size,
    rankd,
    cached,
    cachedThroughputRatio: median(perRound(cached, floor)),
    cachedOverUncachedThroughput: median(perRound(cached, rankd)),
    floor,
    parsingFloor,
    throughputRatio,
    throughputRatioPerRound,
    unloadedP50Ratio: Math.round((rankd.unloaded.p50Ms / floor.unloaded.p50Ms) * 100) / 100,
    cpuRatio: Math.round(cpuRatio * 1000) / 1000,
    unloadedOverParsingFloorMs: Math.round((rankd.unloaded.p50Ms - parsingFloor.unloaded.p50Ms) * 100) / 100,
    goal:
      rankCase.key === 'a'
        ? `throughput ≥ ${GOAL_THROUGHPUT_RATIO * 100}% of the floor's`
        : `p50 of one request alone ≤ ${GOAL_UNLOADED_P50_MS} ms`,
    goalMet,
  };
}

/** The mean over phases of CPU ms per request, rounded to 0.01 ms. */
function meanCpu(phases: readonly Measured[]): CpuSample {
  const mean = (process: keyof CpuSample) =>
    Math.round((phases.reduce((sum, m) => sum + m.cpu[process], 0) / phases.length) * 100) / 100;
  return { client: mean('client'), server: mean('server'), redis: mean('redis') };
}

function printTable(cases: Record<string, CaseFigures>): void {
  const percent = (ratio: number) => `${Math.round(ratio * 100)}%`;
  const rows: string[][] = [];
  for (const figures of Object.values(cases)) {
    for (const path of ['rankd', 'cached', 'floor'] as const) {
      const { loaded, unloaded } = figures[path];
      const { client, server, redis } = loaded.cpuMsPerRequest;
      rows.push([
        path === 'rankd' ? `${figures.label}, ${figures.workload}` : '',
        path === 'cached' ? 'rankd cache' : path,
        formatCount(loaded.itemsPerSec),
        formatMs(loaded.p50Ms),
        formatMs(loaded.p99Ms),
        [client, server, redis].map(formatMs).join(' + '),
        formatMs(unloaded.p50Ms),
        formatMs(unloaded.p99Ms),
        formatMs(unloaded.cpuMsPerRequest.server),
        path === 'rankd'
          ? `${percent(figures.throughputRatio)}`
          : path === 'cached'
            ? percent(figures.cachedThroughputRatio)
            : '',
        path === 'rankd' ? figures.throughputRatioPerRound.map(percent).join(' ') : '',
      ]);
    }
    const { unloaded } = figures.parsingFloor;
    rows.push([
      '',
      'parsing floor',
      '',
      '',
      '',
      '',
      formatMs(unloaded.p50Ms),
      formatMs(unloaded.p99Ms),
      formatMs(unloaded.cpuMsPerRequest.server),
      '',
      '',
    ]);
  }
  const header = [
    'case',
    'path',
    'req/s',
    'p50 ms',
    'p99 ms',
    'CPU ms/req',
    '1-at-a-time p50',
    'p99',
    'server CPU ms',
    'rankd/floor',
    'per round',
  ];
  console.log(formatTable(header, rows, 2));
  console.log(
    `req/s, p50, p99 and CPU at concurrency ${CONCURRENCY}; CPU ms/req: load generator + server + redis-server; ` +
      'parsing floor: the floor also parsing every entity it read, one request at a time only',
  );
  for (const figures of Object.values(cases)) {
    const measured =
      figures.key === 'a'
        ? `${percent(figures.throughputRatio)}`
        : `${formatMs(figures.rankd.unloaded.p50Ms)} ms`;
    const cache = figures.readCache;
    console.log(
      `${figures.label}, ${figures.workload}: read cache (${CACHE_MB} MiB): throughput ` +
        `${percent(figures.cachedOverUncachedThroughput)} of rankd's without it, ` +
        `${percent(figures.cachedThroughputRatio)} of the floor's; one request alone p50 ` +
        `${formatMs(figures.cached.unloaded.p50Ms)} ms (without: ${formatMs(figures.rankd.unloaded.p50Ms)} ms), ` +
        `server CPU ${formatMs(figures.cached.unloaded.cpuMsPerRequest.server)} ms (without: ` +
        `${formatMs(figures.rankd.unloaded.cpuMsPerRequest.server)} ms); CPU per request under load ` +
        `${formatMs(totalOf(figures.cached.loaded.cpuMsPerRequest))} ms (without: ` +
        `${formatMs(totalOf(figures.rankd.loaded.cpuMsPerRequest))} ms)` +
        (cache === undefined
          ? ''
          : `; hit ratio ${percent(cache.hitRatio)}, ${formatCount(cache.entries)} entries, ` +
            `${(cache.bytes / 1048576).toFixed(1)} MiB, process RSS ${(cache.rssBytes / 1048576).toFixed(0)} MiB`),
    );
    console.log(
      `${figures.label}, ${figures.workload}: goal ${figures.goal}: ${measured}, ${figures.goalMet ? 'met' : 'NOT met'}; ` +
        `floor CPU/rankd CPU per request ${percent(figures.cpuRatio)}, ` +
        `server CPU per request alone ${formatMs(figures.rankd.unloaded.cpuMsPerRequest.server)} ms ` +
        `(floor ${formatMs(figures.floor.unloaded.cpuMsPerRequest.server)} ms); one request alone: floor ` +
        `${formatMs(figures.floor.unloaded.p50Ms)} ms, parsing floor ${formatMs(figures.parsingFloor.unloaded.p50Ms)} ms` +
        (figures.key === 'b' ? `; ${attainability(figures)}` : ''),
    );
  }
}

/**
 * Whether goal (b) could be met on this host in this run: no server that hydrates answers faster
 * than the parsing floor, whose own time moves with the host by half or more from day to day
 * (docs/reference/performance.md), so a miss means little when the parsing floor alone is past the goal.
 */
function attainability(figures: CaseFigures): string {
  const parsing = figures.parsingFloor.unloaded.p50Ms;
  const over = `rankd − parsing floor ${formatMs(figures.unloadedOverParsingFloorMs)} ms`;
  return parsing > GOAL_UNLOADED_P50_MS
    ? `${over}; the parsing floor alone is past ${GOAL_UNLOADED_P50_MS} ms, so no hydrating server meets the goal on this host now`
    : over;
}

/** CPU ms per request of the three processes together. */
function totalOf({ client, server, redis }: CpuSample): number {
  return client + server + redis;
}

/** What the cached server's `/bench/read-cache` answers. */
interface CacheStats {
  hits: number;
  misses: number;
  invalidations: number;
  flushes: number;
  evictions: number;
  bytes: number;
  entries: number;
  rssBytes: number;
  heapUsedBytes: number;
}

/** The read cache over a case: its hit ratio over the case's reads, its size and the process's at the end. */
interface CacheFigures {
  hitRatio: number;
  hits: number;
  misses: number;
  evictions: number;
  bytes: number;
  entries: number;
  rssBytes: number;
  heapUsedBytes: number;
}

/** The server's cache counters and memory (zeros for a build without a read cache). */
async function cacheStatsOf(server: ServerProcess): Promise<CacheStats> {
  const response = await fetch(`${server.origin}/bench/read-cache`);
  return (await response.json()) as CacheStats;
}

function cacheDelta(before: CacheStats, after: CacheStats): CacheFigures {
  const hits = after.hits - before.hits;
  const misses = after.misses - before.misses;
  return {
    hitRatio: hits + misses === 0 ? 0 : Math.round((hits / (hits + misses)) * 1000) / 1000,
    hits,
    misses,
    evictions: after.evictions - before.evictions,
    bytes: after.bytes,
    entries: after.entries,
    rssBytes: after.rssBytes,
    heapUsedBytes: after.heapUsedBytes,
  };
}
