/**
 * `npm run bench -- overload`: does a normal client keep its service while others send the most
 * expensive request there is? The template app serves 100,000 products (as `rank` does, out of the
 * box settings otherwise). A normal client (one keep-alive connection sending the spec example:
 * 24 candidates, page 8) runs alone, then beside four clients each sending, closed loop and without
 * waiting for `Retry-After`, 1000 candidates with `explain`, `include_events` and a page of 100.
 * Phases alternate (alone, beside, beside, alone, …). Figures: the normal client's throughput
 * beside the heavy clients ÷ alone, its p99 beside them, its errors (none is the goal), and how
 * many heavy requests were served, shed (429/503 with `Retry-After`) or failed otherwise (with
 * admission control off, `ADMISSION_BUDGET=0 npm run bench -- overload`, Redis's answers are read
 * too late and requests fail with 503 `RANKD_REDIS_UNAVAILABLE`). Every 200 is checked.
 */
import { fileURLToPath } from 'node:url';
import type { BenchContext } from './lib/benchmark.js';
import { type HttpAnswer, HttpClient } from './lib/http.js';
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
  /** Refused by admission control: 503 `RANKD_OVERLOADED` or 429, with `Retry-After`. */
  shed: number;
  /** Shed answers by status and `error_code`, e.g. `503 RANKD_OVERLOADED`. */
  shedBy: Record<string, number>;
  /** Other errors (e.g. 503 `RANKD_REDIS_UNAVAILABLE`: Redis answers read too late), by status and code. */
  failedBy: Record<string, number>;
  /** Bytes of the served answers, summed. */
  servedBytes: number;
}

/** One phase of the normal client, with the heavy clients' counts when they ran beside it. */
interface Phase {
  /** Latencies of all its calls; requests/s of its right answers only. */
  normal: PhaseStats;
  /** Its answers that were errors, by status and code: none is the goal. */
  normalFailedBy: Record<string, number>;
  heavy: HeavyCounts | undefined;
}

/** Refusals of admission control, which a client may retry after `Retry-After`. */
const REFUSAL_CODES = new Set(['RANKD_OVERLOADED', 'RANKD_KEY_SHARE_EXCEEDED']);

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
   * `withHeavy`; they stop when it does. Errors are counted (without admission control, Redis's
   * answers are read too late and requests fail with 503); a 200 that is not a right answer throws.
   */
  async phase(durationMs: number, withHeavy: boolean): Promise<Phase> {
    const deadline = performance.now() + durationMs;
    let running = true;
    const counts: HeavyCounts = { served: 0, shed: 0, shedBy: {}, failedBy: {}, servedBytes: 0 };
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
              const { code, refusal } = errorOf(answer);
              if (refusal) counts.shed++;
              const by = refusal ? counts.shedBy : counts.failedBy;
              by[code] = (by[code] ?? 0) + 1;
            }
          }
        })
      : [];
    const latencies: number[] = [];
    const normalFailedBy: Record<string, number> = {};
    const started = performance.now();
    const offset = this.#offset;
    let seq = 0;
    let served = 0;
    try {
      while (performance.now() < deadline) {
        const request = this.normalRequests[(offset + seq) % this.normalRequests.length] as RankRequest;
        const callStarted = performance.now();
        const answer = await this.normal.post(RANK_PATH, request.body);
        latencies.push(performance.now() - callStarted);
        seq++;
        if (answer.status !== 200) {
          const { code } = errorOf(answer);
          normalFailedBy[code] = (normalFailedBy[code] ?? 0) + 1;
          continue;
        }
        const problem = rankAnswerProblem(request, answer.text, NORMAL_SHAPE.userPageSize);
        if (problem !== undefined) throw new Error(`the normal client: ${problem}`);
        served++;
      }
    } finally {
      running = false;
      await Promise.all(heavyLoops);
    }
    this.#offset += seq;
    const wallMs = performance.now() - started;
    return {
      normal: { ...summarise(latencies, wallMs, 1), itemsPerSec: Math.round((served / wallMs) * 1000) },
      normalFailedBy,
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
 * `<status> <error_code>` of an error answer, and whether it is a refusal of admission control (a
 * 429 or 503 with `Retry-After` and a refusal's code). An answer not in rankd's error shape throws.
 */
function errorOf(answer: HttpAnswer): { code: string; refusal: boolean } {
  let code: unknown;
  try {
    code = (JSON.parse(answer.text) as { error_code?: unknown }).error_code;
  } catch {
    code = undefined;
  }
  if (typeof code !== 'string')
    throw new Error(`an answer ${answer.status} not in rankd's shape: ${answer.text.slice(0, 300)}`);
  const refusal =
    (answer.status === 429 || answer.status === 503) &&
    REFUSAL_CODES.has(code) &&
    answer.retryAfter !== undefined;
  if (REFUSAL_CODES.has(code) && !refusal)
    throw new Error(`a refusal without Retry-After: ${answer.text.slice(0, 300)}`);
  return { code: `${answer.status} ${code}`, refusal };
}

/** The run's figures: each phase, and the ratios the goals are about. */
interface RunFigures {
  alonePhases: Phase[];
  besidePhases: Phase[];
  /** Median over phases of requests/s beside the heavy clients ÷ median alone. */
  throughputShare: number;
  /** The worst p99 of the phases beside the heavy clients. */
  besideP99Ms: number;
  aloneP99Ms: number;
  heavyServed: number;
  heavyShed: number;
  /** Heavy requests that failed otherwise than by a refusal. */
  heavyFailed: number;
  /** The normal client's error answers, alone and beside (every phase). */
  normalFailed: number;
  goalMet: boolean;
}

const countOf = (by: Record<string, number>) => Object.values(by).reduce((sum, n) => sum + n, 0);
const listOf = (by: Record<string, number>) =>
  Object.entries(by)
    .map(([code, n]) => `${n} × ${code}`)
    .join(', ');

function summariseRun(alone: readonly Phase[], beside: readonly Phase[]): RunFigures {
  const rate = (phases: readonly Phase[]) => median(phases.map((p) => p.normal.itemsPerSec));
  const throughputShare = Math.round((rate(beside) / rate(alone)) * 1000) / 1000;
  const besideP99Ms = Math.max(...beside.map((p) => p.normal.p99Ms));
  const heavy = beside.map((p) => p.heavy as HeavyCounts);
  const normalFailed = [...alone, ...beside].reduce((sum, p) => sum + countOf(p.normalFailedBy), 0);
  return {
    alonePhases: [...alone],
    besidePhases: [...beside],
    throughputShare,
    besideP99Ms,
    aloneP99Ms: Math.max(...alone.map((p) => p.normal.p99Ms)),
    heavyServed: heavy.reduce((sum, h) => sum + h.served, 0),
    heavyShed: heavy.reduce((sum, h) => sum + h.shed, 0),
    heavyFailed: heavy.reduce((sum, h) => sum + countOf(h.failedBy), 0),
    normalFailed,
    goalMet: throughputShare >= GOAL_THROUGHPUT_SHARE && besideP99Ms < GOAL_P99_MS && normalFailed === 0,
  };
}

function printTable(figures: RunFigures): void {
  const rows: string[][] = [];
  const row = (label: string, phase: Phase) =>
    rows.push([
      label,
      formatCount(phase.normal.itemsPerSec),
      formatMs(phase.normal.p50Ms),
      formatMs(phase.normal.p99Ms),
      formatMs(phase.normal.maxMs),
      listOf(phase.normalFailedBy),
      phase.heavy === undefined ? '' : formatCount(phase.heavy.served),
      phase.heavy === undefined ? '' : listOf(phase.heavy.shedBy),
      phase.heavy === undefined ? '' : listOf(phase.heavy.failedBy),
    ]);
  for (const [i, phase] of figures.alonePhases.entries()) row(`alone ${i + 1}`, phase);
  for (const [i, phase] of figures.besidePhases.entries()) row(`beside ${i + 1}`, phase);
  console.log(
    formatTable(
      [
        'normal client',
        'req/s',
        'p50 ms',
        'p99 ms',
        'max ms',
        'its errors',
        'heavy served',
        'shed',
        'failed',
      ],
      rows,
    ),
  );
  console.log(
    `normal client beside ${HEAVY_CLIENTS} heavy clients: ${Math.round(figures.throughputShare * 100)}% of its ` +
      `throughput alone (goal ≥ ${GOAL_THROUGHPUT_SHARE * 100}%), p99 ${formatMs(figures.besideP99Ms)} ms ` +
      `(goal < ${GOAL_P99_MS} ms; alone ${formatMs(figures.aloneP99Ms)} ms): goal ${figures.goalMet ? 'met' : 'NOT met'}; ` +
      `normal client errors ${figures.normalFailed}; heavy requests served ${figures.heavyServed}, shed ` +
      `${figures.heavyShed}, failed otherwise ${figures.heavyFailed}`,
  );
}
