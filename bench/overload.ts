/**
 * `npm run bench -- overload`: does a normal client keep its service while others send the most
 * expensive request there is? The template app serves 100,000 products (as `rank` does, out of the
 * box settings otherwise). A normal client (one keep-alive connection sending the spec example:
 * 24 candidates, page 8) runs alone, then beside four clients each sending, closed loop and without
 * waiting for `Retry-After`, 1000 candidates with `explain`, `include_events` and a page of 100.
 * Phases alternate (alone, beside, beside, alone, …). Figures: the normal client's throughput
 * beside the heavy clients ÷ alone, its p99 beside them, and how many heavy requests were served
 * and how many shed (429/503 with `Retry-After`). Every answer is checked.
 */
import { fileURLToPath } from 'node:url';
import type { BenchContext } from './lib/benchmark.js';
import { HttpClient } from './lib/http.js';
import { RANK_PATH, type RankRequest, rankAnswerProblem, rankRequests } from './lib/rank-data.js';
import { announce, Cleanup, loadAverages, setUpBuildAndRedis } from './lib/run-setup.js';
import { type ServerProcess, startServerProcess } from './lib/server-process.js';
import { median, type PhaseStats, summarise } from './lib/stats.js';
import { formatCount, formatMs, formatTable } from './lib/table.js';
import { KEY_SETTINGS, loadTemplateData } from './lib/template-stores.js';

const SERVE_RANK = fileURLToPath(new URL('./lib/serve-rank.ts', import.meta.url));
/** The heavy clients, each on its own keep-alive connection. */
const HEAVY_CLIENTS = 4;
/** Goals: the normal client keeps this share of its throughput alone, and this p99, beside the heavy clients. */
const GOAL_THROUGHPUT_SHARE = 0.5;
const GOAL_P99_MS = 250;
const NORMAL_SHAPE = { candidates: 24, userPageSize: 8, candidatePageSize: 24 } as const;
const HEAVY_SHAPE = { candidates: 1000, userPageSize: 100, candidatePageSize: 1000 } as const;

/** How long things run; less with --quick. */
interface Plan {
  products: number;
  rounds: number;
  phaseMs: number;
  warmupMs: number;
}

/** A heavy request's answers by kind. */
interface HeavyCounts {
  served: number;
  shed: number;
  /** Shed answers by `error_code` and status, e.g. `429 RANKD_OVERLOADED`. */
  shedBy: Record<string, number>;
  /** Bytes of the served answers, summed. */
  servedBytes: number;
}

/** One phase of the normal client, with the heavy clients' counts when they ran beside it. */
interface Phase {
  normal: PhaseStats;
  heavy: HeavyCounts | undefined;
}

/** Runs the overload benchmark and returns its figures. */
export async function run(context: BenchContext): Promise<Record<string, unknown>> {
  const plan: Plan = context.quick
    ? { products: 10_000, rounds: 1, phaseMs: 3000, warmupMs: 1000 }
    : { products: 100_000, rounds: 2, phaseMs: 15_000, warmupMs: 4000 };
  const loadBefore = announce(
    `overload: the template pipeline, ${formatCount(plan.products)} products; a normal client (1 connection, ` +
      `24 candidates, page 8) alone and beside ${HEAVY_CLIENTS} clients sending 1000 candidates with explain, ` +
      `include_events and a page of 100; ${plan.phaseMs / 1000} s per phase, ${plan.rounds} round(s) of ` +
      'alone + beside, alternated',
  );
  const cleanup = new Cleanup();
  try {
    const { build, redis } = await setUpBuildAndRedis('overload', cleanup);
    console.log(`rankd built from the ${build.source}`);
    const loaded = await loadTemplateData(build, redis.url, plan.products);
    console.log(`loaded ${formatCount(plan.products)} products in ${(loaded.ms / 1000).toFixed(1)} s`);
    // Out-of-the-box settings but for the keys' layout the loader used: the overload policy under test is the default one.
    const server = await startServerProcess({
      redisUrl: redis.url,
      entry: SERVE_RANK,
      env: { ...KEY_SETTINGS, BENCH_PKG_DIR: build.dir, BENCH_RANK_MODE: 'template' },
      cpuProfDir: context.cpuProfDir,
    });
    cleanup.add(() => server.stop());
    const normal = new HttpClient(server.origin, 1);
    const heavy = Array.from({ length: HEAVY_CLIENTS }, () => new HttpClient(server.origin, 1));
    cleanup.add(() => normal.close(), ...heavy.map((client) => () => client.close()));
    const normalRequests = rankRequests(NORMAL_SHAPE, context.quick ? 400 : 4000, plan.products, 1);
    const heavyRequests = rankRequests(HEAVY_SHAPE, 40, plan.products, 2).map(explained);

    const bench = new Bench(server, normal, heavy, normalRequests, heavyRequests);
    await bench.phase(plan.warmupMs, true);
    await bench.phase(plan.warmupMs, false);
    const alone: Phase[] = [];
    const beside: Phase[] = [];
    for (let round = 0; round < plan.rounds; round++) {
      const order = round % 2 === 0 ? [false, true] : [true, false];
      for (const withHeavy of order)
        (withHeavy ? beside : alone).push(await bench.phase(plan.phaseMs, withHeavy));
    }
    const figures = summariseRun(alone, beside);
    printTable(figures);
    return {
      source: build.source,
      products: plan.products,
      phaseSeconds: plan.phaseMs / 1000,
      rounds: plan.rounds,
      heavyClients: HEAVY_CLIENTS,
      normalRequest: NORMAL_SHAPE,
      heavyRequest: { ...HEAVY_SHAPE, explain: true, include_events: true },
      goals: { throughputShare: GOAL_THROUGHPUT_SHARE, p99Ms: GOAL_P99_MS },
      loadAverage: loadAverages(loadBefore),
      ...figures,
    };
  } finally {
    await cleanup.run();
  }
}

/** A heavy request: the 1000-candidate request with `explain` and `include_events`. */
function explained(request: RankRequest): RankRequest {
  return {
    ...request,
    body: JSON.stringify({ ...JSON.parse(request.body), explain: true, include_events: true }),
  };
}

/** Runs phases and checks every answer. */
class Bench {
  #offset = 0;

  constructor(
    readonly server: ServerProcess,
    readonly normal: HttpClient,
    readonly heavy: readonly HttpClient[],
    readonly normalRequests: readonly RankRequest[],
    readonly heavyRequests: readonly RankRequest[],
  ) {}

  /**
   * The normal client for `durationMs`, closed loop, with the heavy clients beside it when
   * `withHeavy`; they stop when it does. Throws on an answer that is neither right nor a refusal
   * in rankd's shape.
   */
  async phase(durationMs: number, withHeavy: boolean): Promise<Phase> {
    const deadline = performance.now() + durationMs;
    let running = true;
    const counts: HeavyCounts = { served: 0, shed: 0, shedBy: {}, servedBytes: 0 };
    const heavyLoops = withHeavy
      ? this.heavy.map(async (client, c) => {
          for (let seq = 0; running; seq++) {
            const request = this.heavyRequests[(c * 7 + seq) % this.heavyRequests.length] as RankRequest;
            const answer = await client.post(RANK_PATH, request.body);
            if (answer.status === 200) {
              const problem = heavyAnswerProblem(request, answer.text);
              if (problem !== undefined) throw new Error(`heavy client ${c}: ${problem}`);
              counts.served++;
              counts.servedBytes += answer.text.length;
            } else {
              const code = refusalCode(answer.status, answer.text, answer.retryAfter);
              counts.shed++;
              counts.shedBy[code] = (counts.shedBy[code] ?? 0) + 1;
            }
          }
        })
      : [];
    const latencies: number[] = [];
    const started = performance.now();
    const offset = this.#offset;
    let seq = 0;
    try {
      while (performance.now() < deadline) {
        const request = this.normalRequests[(offset + seq) % this.normalRequests.length] as RankRequest;
        const callStarted = performance.now();
        const answer = await this.normal.post(RANK_PATH, request.body);
        latencies.push(performance.now() - callStarted);
        if (answer.status !== 200)
          throw new Error(`the normal client got ${answer.status}: ${answer.text.slice(0, 300)}`);
        const problem = rankAnswerProblem(request, answer.text, NORMAL_SHAPE.userPageSize);
        if (problem !== undefined) throw new Error(`the normal client: ${problem}`);
        seq++;
      }
    } finally {
      running = false;
      await Promise.all(heavyLoops);
    }
    this.#offset += seq;
    return {
      normal: summarise(latencies, performance.now() - started, 1),
      heavy: withHeavy ? counts : undefined,
    };
  }
}

/** Why a served heavy answer is wrong: a wrong page, no explanation, or no events. */
function heavyAnswerProblem(request: RankRequest, text: string): string | undefined {
  const problem = rankAnswerProblem(request, text, HEAVY_SHAPE.userPageSize);
  if (problem !== undefined) return problem;
  const body = JSON.parse(text) as { ranked_candidates: Array<{ explanation?: unknown }>; events?: unknown };
  if (body.ranked_candidates.some((candidate) => candidate.explanation === undefined))
    return 'a ranked candidate has no explanation';
  if (!Array.isArray(body.events) || body.events.length === 0) return 'no events';
  return undefined;
}

/**
 * `<status> <error_code>` of a refusal: a 429 or 503 in rankd's error shape with `Retry-After`;
 * anything else throws (a benchmark must not count errors as refusals).
 */
function refusalCode(status: number, text: string, retryAfter: string | undefined): string {
  let code: unknown;
  try {
    code = (JSON.parse(text) as { error_code?: unknown }).error_code;
  } catch {
    code = undefined;
  }
  if ((status !== 429 && status !== 503) || typeof code !== 'string' || retryAfter === undefined)
    throw new Error(
      `a heavy request got ${status} (Retry-After: ${retryAfter ?? 'none'}): ${text.slice(0, 300)}`,
    );
  return `${status} ${code}`;
}

/** The run's figures: each phase, and the ratios the goals are about. */
interface RunFigures {
  alone: PhaseStats[];
  beside: PhaseStats[];
  heavy: HeavyCounts[];
  /** Median over phases of requests/s beside the heavy clients ÷ median alone. */
  throughputShare: number;
  /** The worst p99 of the phases beside the heavy clients. */
  besideP99Ms: number;
  aloneP99Ms: number;
  heavyServed: number;
  heavyShed: number;
  goalMet: boolean;
}

function summariseRun(alone: readonly Phase[], beside: readonly Phase[]): RunFigures {
  const rate = (phases: readonly Phase[]) => median(phases.map((p) => p.normal.itemsPerSec));
  const throughputShare = Math.round((rate(beside) / rate(alone)) * 1000) / 1000;
  const besideP99Ms = Math.max(...beside.map((p) => p.normal.p99Ms));
  const heavy = beside.map((p) => p.heavy as HeavyCounts);
  return {
    alone: alone.map((p) => p.normal),
    beside: beside.map((p) => p.normal),
    heavy,
    throughputShare,
    besideP99Ms,
    aloneP99Ms: Math.max(...alone.map((p) => p.normal.p99Ms)),
    heavyServed: heavy.reduce((sum, h) => sum + h.served, 0),
    heavyShed: heavy.reduce((sum, h) => sum + h.shed, 0),
    goalMet: throughputShare >= GOAL_THROUGHPUT_SHARE && besideP99Ms < GOAL_P99_MS,
  };
}

function printTable(figures: RunFigures): void {
  const rows: string[][] = [];
  const row = (label: string, stats: PhaseStats, heavy?: HeavyCounts) =>
    rows.push([
      label,
      formatCount(stats.itemsPerSec),
      formatMs(stats.p50Ms),
      formatMs(stats.p99Ms),
      formatMs(stats.maxMs),
      heavy === undefined ? '' : formatCount(heavy.served),
      heavy === undefined ? '' : formatCount(heavy.shed),
      heavy === undefined
        ? ''
        : Object.entries(heavy.shedBy)
            .map(([code, n]) => `${n} × ${code}`)
            .join(', '),
    ]);
  for (const [i, stats] of figures.alone.entries()) row(`alone ${i + 1}`, stats);
  for (const [i, stats] of figures.beside.entries()) row(`beside ${i + 1}`, stats, figures.heavy[i]);
  console.log(
    formatTable(
      ['normal client', 'req/s', 'p50 ms', 'p99 ms', 'max ms', 'heavy served', 'shed', 'shed as'],
      rows,
    ),
  );
  console.log(
    `normal client beside ${HEAVY_CLIENTS} heavy clients: ${Math.round(figures.throughputShare * 100)}% of its ` +
      `throughput alone (goal ≥ ${GOAL_THROUGHPUT_SHARE * 100}%), p99 ${formatMs(figures.besideP99Ms)} ms ` +
      `(goal < ${GOAL_P99_MS} ms; alone ${formatMs(figures.aloneP99Ms)} ms): goal ${figures.goalMet ? 'met' : 'NOT met'}; ` +
      `heavy requests served ${figures.heavyServed}, shed ${figures.heavyShed}`,
  );
}
