/**
 * `npm run bench -- compare`: two builds of rankd (or one build with two sets of Node flags)
 * serving the template side by side on one Redis, measured in alternating blocks: (b) p50 of
 * requests one at a time, or (a) requests/s at concurrency 16. Each block runs A and B back to
 * back, A first in even blocks and B first in odd ones, so a change in the machine's load hits
 * both alike; the figures are the medians over blocks of B ÷ A, for the measure and for the
 * server's CPU time per request (steadier under load than requests/s). Separate runs of `rank`
 * differ by ±15% on a shared machine; this tells apart changes of a few percent.
 *
 * Settings (environment):
 * - `BENCH_COMPARE_A`, `BENCH_COMPARE_B`: what each side builds, as `BENCH_SOURCE` reads it (a git
 *   revision or a directory); empty for the working tree. Defaults: A `HEAD`, B the working tree.
 * - `BENCH_COMPARE_A_ARGS`, `BENCH_COMPARE_B_ARGS`: extra Node flags per side (space-separated).
 * - `BENCH_COMPARE_A_ENV`, `BENCH_COMPARE_B_ENV`: extra rankd settings per side, space-separated
 *   `NAME=value` (e.g. `FAST_PATHS=false`: one build with its fast paths on and off).
 * - `BENCH_COMPARE_A_BODY`, `BENCH_COMPARE_B_BODY`: JSON fields added to every request of that
 *   side (e.g. `{"explain":true}`: one build answering with and without explanations).
 * - `BENCH_COMPARE_CASE`: `b` (default) or `a`, the rank benchmark's cases.
 * - `BENCH_COMPARE_WORKLOAD`: how candidates are drawn, `uniform` (default) or `zipf` (with
 *   `READ_CACHE_MB` in both sides' settings: two builds of the read cache's hit path).
 * - `BENCH_COMPARE_BLOCKS`: blocks (default 12; 2 with `--quick`).
 * - `BENCH_COMPARE_BLOCKS_PER_START`: blocks between fresh starts of both servers (default 4).
 *   Under load, two processes of one build have measured 20–30% apart for minutes at a time,
 *   one way in one pair and the other way in the next: one pair of processes measures its
 *   processes as much as its code, and several pairs spread that over both sides. Case (a)
 *   therefore needs many blocks before its median means anything; case (b), one request at a
 *   time, is steadier (one build against itself: median 1.003 over 12 blocks).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestRedis } from '../test/helpers/redis-server.js';
import type { BenchContext } from './lib/benchmark.js';
import { drive } from './lib/drive.js';
import { driveFor } from './lib/drive-for.js';
import { HttpClient } from './lib/http.js';
import { buildPackage, type PackageBuild } from './lib/package-build.js';
import {
  RANK_PATH,
  type RankRequest,
  rankAnswerProblem,
  rankRequests,
  workloadFromEnv,
} from './lib/rank-data.js';
import { announce, Cleanup, loadAverages } from './lib/run-setup.js';
import { type ServerProcess, startServerProcess } from './lib/server-process.js';
import { median, percentile } from './lib/stats.js';
import { formatCount, formatTable } from './lib/table.js';
import { loadTemplateData, RANK_SERVER_SETTINGS } from './lib/template-stores.js';
import { CASES, type RankCase } from './rank.js';

const SERVE_RANK = fileURLToPath(new URL('./lib/serve-rank.ts', import.meta.url));
const CONCURRENCY = 16;
/** Requests one at a time per side and block, case (b). */
const UNLOADED_PER_BLOCK = 100;
/** Time per side and block at concurrency 16, case (a). */
const LOADED_BLOCK_MS = 4000;
/** Before the first block, each side serves this long at concurrency 16 (JIT, sockets, Redis). */
const WARMUP_MS = 5000;

/** One side of the comparison. */
interface Side {
  readonly name: 'A' | 'B';
  readonly source: string;
  readonly nodeArgs: readonly string[];
  /** Settings this side's server gets on top of the benchmark's. */
  readonly env: Readonly<Record<string, string>>;
  /** Fields added to every request body of this side (`BENCH_COMPARE_<side>_BODY`). */
  readonly body: Readonly<Record<string, unknown>> | undefined;
}

/** A side's server, ready to measure. */
interface Serving extends Side {
  readonly build: PackageBuild;
  readonly server: ServerProcess;
  readonly http: HttpClient;
  /** Closes the client and stops the server. */
  readonly stop: () => Promise<void>;
}

/** Per-stage mean ms from a server's `/metrics` (sums and counts, to take differences). */
type StageTotals = Map<string, { sum: number; count: number }>;

function sideOf(name: 'A' | 'B', defaultSource: string): Side {
  const source = process.env[`BENCH_COMPARE_${name}`] ?? defaultSource;
  const nodeArgs = (process.env[`BENCH_COMPARE_${name}_ARGS`] ?? '').split(/\s+/).filter(Boolean);
  const env: Record<string, string> = {};
  for (const setting of (process.env[`BENCH_COMPARE_${name}_ENV`] ?? '').split(/\s+/).filter(Boolean)) {
    const at = setting.indexOf('=');
    if (at < 1) throw new Error(`BENCH_COMPARE_${name}_ENV: ${setting} is not NAME=value`);
    env[setting.slice(0, at)] = setting.slice(at + 1);
  }
  const bodyText = process.env[`BENCH_COMPARE_${name}_BODY`];
  const body = bodyText ? (JSON.parse(bodyText) as Record<string, unknown>) : undefined;
  return { name, source, nodeArgs, env, body };
}

function caseToRun(): RankCase {
  const key = process.env.BENCH_COMPARE_CASE ?? 'b';
  const found = CASES.find((rankCase) => rankCase.key === key);
  if (found === undefined) throw new Error(`BENCH_COMPARE_CASE: no case ${key} (cases: a, b)`);
  return found;
}

async function stageTotals(origin: string): Promise<StageTotals> {
  const text = await (await fetch(`${origin}/metrics`)).text();
  const totals: StageTotals = new Map();
  const series = /^rankd_pipeline_stage_duration_seconds_(sum|count)\{[^}]*stage="(\w+)"[^}]*\} (\S+)$/gm;
  for (const [, kind, stage = '', value] of text.matchAll(series)) {
    const total = totals.get(stage) ?? { sum: 0, count: 0 };
    if (kind === 'sum') total.sum += Number(value);
    else total.count += Number(value);
    totals.set(stage, total);
  }
  return totals;
}

/** Adds to `sums` what each stage took between two readings of one server. */
function addStageTotals(sums: StageTotals, before: StageTotals, after: StageTotals): void {
  for (const [stage, { sum, count }] of after) {
    const earlier = before.get(stage) ?? { sum: 0, count: 0 };
    const total = sums.get(stage) ?? { sum: 0, count: 0 };
    sums.set(stage, { sum: total.sum + sum - earlier.sum, count: total.count + count - earlier.count });
  }
}

/** Mean ms per stage of accumulated totals. */
function stageMeans(totals: StageTotals): Record<string, number> {
  const means: Record<string, number> = {};
  for (const [stage, { sum, count }] of totals) if (count > 0) means[stage] = (sum / count) * 1000;
  return means;
}

/** Runs the comparison and returns its figures. */
export async function run(context: BenchContext): Promise<Record<string, unknown>> {
  const rankCase = caseToRun();
  const sides = [sideOf('A', 'HEAD'), sideOf('B', '')];
  const blocks = Number(process.env.BENCH_COMPARE_BLOCKS ?? (context.quick ? 2 : 12));
  const blocksPerStart = Number(process.env.BENCH_COMPARE_BLOCKS_PER_START ?? (context.quick ? 2 : 4));
  const products = context.quick ? 10_000 : 100_000;
  const loaded = rankCase.key === 'a';
  const label = (side: Side) =>
    `${side.name}: ${side.source || 'working tree'}${side.nodeArgs.length ? ` ${side.nodeArgs.join(' ')}` : ''}` +
    Object.entries(side.env)
      .map(([name, value]) => ` ${name}=${value}`)
      .join('');
  const loadBefore = announce(
    `compare: ${rankCase.label}, ${sides.map(label).join(' | ')}; ${blocks} alternated blocks of ` +
      (loaded
        ? `${LOADED_BLOCK_MS / 1000} s at concurrency ${CONCURRENCY} per side (requests/s)`
        : `${UNLOADED_PER_BLOCK} requests one at a time per side (p50)`),
  );
  const cleanup = new Cleanup();
  try {
    const dir = mkdtempSync(join(tmpdir(), 'rankd-bench-compare-'));
    cleanup.add(async () => rmSync(dir, { recursive: true, force: true }));
    const builds: PackageBuild[] = [];
    for (const side of sides) builds.push(await buildPackage(join(dir, side.name), side.source));
    const redis = await startTestRedis();
    cleanup.add(() => redis.stop());
    await loadTemplateData(builds[0] as PackageBuild, redis.url, products);
    const requests = rankRequests(
      rankCase,
      rankCase.distinctRequests,
      products,
      1,
      workloadFromEnv('BENCH_COMPARE_WORKLOAD'),
    );
    // Each side's bodies with its extra fields, made before measuring.
    const bodiesWith = new Map<object, string[]>();
    for (const side of sides)
      if (side.body !== undefined)
        bodiesWith.set(
          side.body,
          requests.map((r) => JSON.stringify({ ...(JSON.parse(r.body) as object), ...side.body })),
        );
    let offset = 0;
    /** One side's block: its figure (p50 ms or requests/s) and latencies; checks the first answers. */
    const measure = async (side: Serving, durationMs?: number) => {
      const base = offset;
      const requestOf = (seq: number) => requests[(base + seq) % requests.length] as RankRequest;
      const answers: string[] = [];
      const bodies = side.body === undefined ? undefined : bodiesWith.get(side.body);
      const cpuBefore = await side.server.cpuMs();
      const call = async (seq: number) => {
        const body = bodies?.[(base + seq) % requests.length] ?? requestOf(seq).body;
        answers[seq] = await side.http.postJson(RANK_PATH, body);
      };
      const result =
        durationMs !== undefined
          ? await driveFor(durationMs, CONCURRENCY, call)
          : await drive(UNLOADED_PER_BLOCK, 1, call);
      const cpuMsPerRequest = ((await side.server.cpuMs()) - cpuBefore) / result.latenciesMs.length;
      for (let seq = 0; seq < Math.min(answers.length, 10); seq++) {
        const problem = rankAnswerProblem(requestOf(seq), answers[seq] ?? '', rankCase.userPageSize);
        if (problem !== undefined) throw new Error(`${side.name} call ${seq}: ${problem}`);
      }
      const sorted = [...result.latenciesMs].sort((x, y) => x - y);
      const figure = loaded ? result.latenciesMs.length / (result.wallMs / 1000) : percentile(sorted, 50);
      return { figure, cpuMsPerRequest, latenciesMs: result.latenciesMs };
    };

    /**
     * Both servers, fresh: started (`firstStarted` first), warmed up, and their stage totals so far.
     * Which one starts first alternates with each start, so that nothing about being started first
     * or second can favour one side (an early run of one build against itself seemed to show such
     * an effect; later runs did not).
     */
    const start = async (firstStarted: 0 | 1) => {
      const serving: Serving[] = [];
      for (const i of firstStarted === 0 ? [0, 1] : [1, 0]) {
        const side = sides[i] as Side;
        const build = builds[i] as PackageBuild;
        const server = await startServerProcess({
          redisUrl: redis.url,
          entry: SERVE_RANK,
          env: {
            ...RANK_SERVER_SETTINGS,
            ...side.env,
            BENCH_PKG_DIR: build.dir,
            BENCH_RANK_MODE: 'template',
          },
          extraNodeArgs: side.nodeArgs,
          ...(context.cpuProfDir === undefined ? {} : { cpuProfDir: join(context.cpuProfDir, side.name) }),
        });
        const http = new HttpClient(server.origin, CONCURRENCY);
        const stop = async () => {
          await http.close();
          await server.stop();
        };
        cleanup.add(stop);
        serving[i] = { ...side, build, server, http, stop };
      }
      for (const side of serving) await measure(side, WARMUP_MS);
      const before = await Promise.all(serving.map((side) => stageTotals(side.server.origin)));
      return { serving, before };
    };

    const figures: number[][] = [[], []];
    const cpu: number[][] = [[], []];
    const latencies: number[][] = [[], []];
    const ratios: number[] = [];
    const cpuRatios: number[] = [];
    const rows: string[][] = [];
    const stageSums: StageTotals[] = [new Map(), new Map()];
    let current: Awaited<ReturnType<typeof start>> | undefined;
    /** Adds what the running servers' stages took since they started to {@link stageSums}, and stops them. */
    const stopCurrent = async () => {
      if (current === undefined) return;
      for (const [i, side] of current.serving.entries()) {
        const totals = stageTotals(side.server.origin);
        addStageTotals(stageSums[i] as StageTotals, current.before[i] as StageTotals, await totals);
        await side.stop();
      }
      current = undefined;
    };
    for (let block = 0; block < blocks; block++) {
      if (block % blocksPerStart === 0) {
        await stopCurrent();
        const firstStarted = (block / blocksPerStart) % 2 === 0 ? 0 : 1;
        current = await start(firstStarted);
        rows.push([`(${firstStarted === 0 ? 'A' : 'B'} started first)`, '', '', '', '', '', '', '']);
        if (block === 0)
          console.log(
            current.serving.map((side) => `${side.name} built from the ${side.build.source}`).join('; '),
          );
      }
      const serving = (current as Awaited<ReturnType<typeof start>>).serving;
      const order = block % 2 === 0 ? [0, 1] : [1, 0];
      const got = [0, 0];
      const gotCpu = [0, 0];
      for (const i of order) {
        const { figure, cpuMsPerRequest, latenciesMs } = await measure(
          serving[i] as Serving,
          loaded ? LOADED_BLOCK_MS : undefined,
        );
        got[i] = figure;
        gotCpu[i] = cpuMsPerRequest;
        figures[i]?.push(figure);
        cpu[i]?.push(cpuMsPerRequest);
        latencies[i]?.push(...latenciesMs);
      }
      offset += loaded ? 997 : UNLOADED_PER_BLOCK;
      const ratio = (got[1] as number) / (got[0] as number);
      const cpuRatio = (gotCpu[1] as number) / (gotCpu[0] as number);
      ratios.push(ratio);
      cpuRatios.push(cpuRatio);
      rows.push([
        String(block),
        order[0] === 0 ? 'A, B' : 'B, A',
        ...got.map(format),
        ratio.toFixed(3),
        ...gotCpu.map((ms) => ms.toFixed(3)),
        cpuRatio.toFixed(3),
      ]);
    }
    await stopCurrent();

    function format(value: number): string {
      return loaded ? formatCount(value) : value.toFixed(2);
    }
    const unit = loaded ? 'req/s' : 'p50 ms';
    console.log(
      formatTable(
        ['block', 'order', `A ${unit}`, `B ${unit}`, 'B ÷ A', 'A CPU ms/req', 'B CPU ms/req', 'B ÷ A'],
        rows,
        2,
      ),
    );
    const pooled = latencies.map((list) => {
      const sorted = [...list].sort((x, y) => x - y);
      return { p50: percentile(sorted, 50), p90: percentile(sorted, 90), p99: percentile(sorted, 99) };
    });
    const stages = stageSums.map(stageMeans);
    for (const [i, side] of sides.entries()) {
      const p = pooled[i] as { p50: number; p90: number; p99: number };
      const stageText = Object.entries(stages[i] ?? {})
        .map(([stage, ms]) => `${stage} ${ms.toFixed(2)}`)
        .join(', ');
      console.log(
        `${side.name}: latency p50 ${p.p50.toFixed(2)}, p90 ${p.p90.toFixed(2)}, p99 ${p.p99.toFixed(2)} ms; ` +
          `stage means ms: ${stageText}`,
      );
    }
    const sortedRatios = [...ratios].sort((x, y) => x - y);
    const better = ratios.filter((ratio) => (loaded ? ratio > 1 : ratio < 1)).length;
    const sortedCpuRatios = [...cpuRatios].sort((x, y) => x - y);
    const leaner = cpuRatios.filter((ratio) => ratio < 1).length;
    console.log(
      `B ÷ A (${unit}): median ${median(ratios).toFixed(3)}, range ${sortedRatios[0]?.toFixed(3)}–` +
        `${sortedRatios.at(-1)?.toFixed(3)}; B better in ${better} of ${blocks} blocks`,
    );
    console.log(
      `B ÷ A (server CPU per request): median ${median(cpuRatios).toFixed(3)}, range ` +
        `${sortedCpuRatios[0]?.toFixed(3)}–${sortedCpuRatios.at(-1)?.toFixed(3)}; B leaner in ${leaner} of ${blocks} blocks`,
    );
    return {
      case: rankCase.key,
      products,
      sides: sides.map(({ name, source, nodeArgs, env }, i) => ({
        name,
        source,
        nodeArgs,
        env,
        built: builds[i]?.source,
      })),
      blocksPerServerStart: blocksPerStart,
      unit,
      blocks: ratios.map((_, block) => ({
        block,
        order: block % 2 === 0 ? 'A, B' : 'B, A',
        startedFirst: Math.floor(block / blocksPerStart) % 2 === 0 ? 'A' : 'B',
        a: figures[0]?.[block],
        b: figures[1]?.[block],
        aServerCpuMsPerRequest: cpu[0]?.[block],
        bServerCpuMsPerRequest: cpu[1]?.[block],
      })),
      ratios,
      medianRatio: median(ratios),
      bBetterInBlocks: better,
      serverCpuRatios: cpuRatios,
      medianServerCpuRatio: median(cpuRatios),
      bLeanerInBlocks: leaner,
      pooledLatencyMs: { A: pooled[0], B: pooled[1] },
      stageMeansMs: { A: stages[0], B: stages[1] },
      loadAverage: loadAverages(loadBefore),
      serverSettings: RANK_SERVER_SETTINGS,
    };
  } finally {
    await cleanup.run();
  }
}
