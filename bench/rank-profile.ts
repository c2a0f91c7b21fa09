/**
 * `npm run bench -- rank-profile`: where `rank`'s case (b) (or (a)) spends the server's CPU, by
 * segment of the request: HTTP and body parsing, validation, each pipeline stage, serialising,
 * writing. The template server and the floor server (bench/lib/serve-rank.ts) run with the stage
 * probe (bench/lib/stage-probe.ts), which reads the process's CPU time at every mark;
 * requests go one at a time, in blocks alternating between rankd, the floor and the parsing floor.
 * With `--cpu-prof`, the server's profile is then split by the same segments: which functions each
 * one's time goes to. See docs/reference/performance.md ("Where a request's CPU goes").
 *
 * Settings (environment):
 * - `BENCH_PROFILE_CASE`: `b` (default) or `a`, `rank`'s cases.
 * - `BENCH_PROFILE_REQUESTS`: requests per path (default 1000; 100 with `--quick`), in blocks of 100.
 * - `BENCH_PROFILE_ENV`: extra rankd settings, space-separated `NAME=value` (e.g. `EVENTS_SINK=redis`).
 * - `BENCH_PROFILE_WORKLOAD`: how candidates are drawn, `uniform` (default) or `zipf` (with
 *   `BENCH_PROFILE_ENV=READ_CACHE_MB=64`, the read cache's hit path).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BenchContext } from './lib/benchmark.js';
import { drive } from './lib/drive.js';
import { HttpClient } from './lib/http.js';
import { type CpuProfile, ProfileTree, summariseProfile, type TimeWindow } from './lib/profile-summary.js';
import {
  floorBody,
  PARSING_FLOOR_PATH,
  RANK_PATH,
  type RankRequest,
  rankAnswerProblem,
  rankRequests,
  workloadFromEnv,
} from './lib/rank-data.js';
import { announce, Cleanup, loadAverages, setUpBuildAndRedis } from './lib/run-setup.js';
import { type ServerProcess, startServerProcess } from './lib/server-process.js';
import { PROBE_PATH, type ProbeReport, type RouteTally } from './lib/stage-probe.js';
import { formatCount, formatTable } from './lib/table.js';
import { loadTemplateData, RANK_SERVER_SETTINGS } from './lib/template-stores.js';
import { CASES, type RankCase } from './rank.js';

const SERVE_RANK = fileURLToPath(new URL('./lib/serve-rank.ts', import.meta.url));
const BLOCK = 100;
/** Requests per path before the probes are reset: the JIT's work, sockets, Redis's tables. */
const WARMUP = 300;
/** Profile sampling interval, µs: a 1000-candidate request is ~10 ms of CPU, so ~100 samples each. */
const CPU_PROF_INTERVAL_US = 100;
/** Functions listed per segment with `--cpu-prof`. */
const TOP_FUNCTIONS = 8;

type PathName = 'rankd' | 'floor' | 'parsing floor';

/** A measured path: its server, route and how its answers are checked. */
interface Path {
  readonly name: PathName;
  readonly route: string;
  readonly server: ServerProcess;
  readonly http: HttpClient;
  check(request: RankRequest, text: string, size: number): string | undefined;
}

/** Per segment, CPU ms per request of each path. */
interface SegmentRow {
  segment: string;
  msPerRequest: Partial<Record<PathName, number>>;
  /** Its share of rankd's CPU per request (the segments' sum). */
  rankdShare: number;
  /** With `--cpu-prof`: rankd's top functions by self time in this segment, shares of its samples. */
  topFunctions?: Array<{ fn: string; share: number }>;
}

function caseToRun(): RankCase {
  const key = process.env.BENCH_PROFILE_CASE ?? 'b';
  const found = CASES.find((rankCase) => rankCase.key === key);
  if (found === undefined) throw new Error(`BENCH_PROFILE_CASE: no case ${key} (cases: a, b)`);
  return found;
}

function extraSettings(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const setting of (process.env.BENCH_PROFILE_ENV ?? '').split(/\s+/).filter(Boolean)) {
    const at = setting.indexOf('=');
    if (at < 1) throw new Error(`BENCH_PROFILE_ENV: ${setting} is not NAME=value`);
    env[setting.slice(0, at)] = setting.slice(at + 1);
  }
  return env;
}

async function probeOf(server: ServerProcess, windows: boolean): Promise<ProbeReport> {
  const response = await fetch(`${server.origin}${PROBE_PATH}${windows ? '?windows=1' : ''}`);
  if (!response.ok) throw new Error(`${PROBE_PATH}: ${response.status}`);
  return (await response.json()) as ProbeReport;
}

async function resetProbe(server: ServerProcess): Promise<void> {
  const response = await fetch(`${server.origin}${PROBE_PATH}`, { method: 'DELETE' });
  if (!response.ok) throw new Error(`${PROBE_PATH}: ${response.status}`);
}

/** Runs the profile and returns its figures. */
export async function run(context: BenchContext): Promise<Record<string, unknown>> {
  const rankCase = caseToRun();
  const products = context.quick ? 10_000 : 100_000;
  const perPath = Number(process.env.BENCH_PROFILE_REQUESTS ?? (context.quick ? BLOCK : 1000));
  const settings = extraSettings();
  const loadBefore = announce(
    `rank-profile: ${rankCase.label}, ${formatCount(perPath)} requests one at a time per path ` +
      `(rankd, floor, parsing floor, alternated in blocks of ${BLOCK}); server CPU per request segment` +
      Object.entries(settings)
        .map(([name, value]) => ` ${name}=${value}`)
        .join(''),
  );
  const cleanup = new Cleanup();
  try {
    const { build, redis } = await setUpBuildAndRedis('rank-profile', cleanup);
    console.log(`rankd built from the ${build.source}`);
    await loadTemplateData(build, redis.url, products);
    const env = { ...RANK_SERVER_SETTINGS, BENCH_PKG_DIR: build.dir, BENCH_RANK_PROBE: '1' };
    const rankdServer = await startServerProcess({
      redisUrl: redis.url,
      entry: SERVE_RANK,
      env: { ...env, ...settings, BENCH_RANK_MODE: 'template' },
      ...(context.cpuProfDir === undefined
        ? {}
        : { cpuProfDir: context.cpuProfDir, extraNodeArgs: [`--cpu-prof-interval=${CPU_PROF_INTERVAL_US}`] }),
    });
    cleanup.add(() => rankdServer.stop());
    const floorServer = await startServerProcess({
      redisUrl: redis.url,
      entry: SERVE_RANK,
      env: { ...env, BENCH_RANK_MODE: 'floor' },
    });
    cleanup.add(() => floorServer.stop());
    const size = rankCase.userPageSize;
    const path = (name: PathName, server: ServerProcess, route: string): Path => {
      const http = new HttpClient(server.origin, 1);
      cleanup.add(() => http.close());
      return {
        name,
        route,
        server,
        http,
        check:
          name === 'rankd'
            ? rankAnswerProblem
            : (_request, text) => (text === floorBody(size) ? undefined : 'not the fixed body'),
      };
    };
    const paths: Path[] = [
      path('rankd', rankdServer, RANK_PATH),
      path('floor', floorServer, RANK_PATH),
      path('parsing floor', floorServer, PARSING_FLOOR_PATH),
    ];
    const requests = rankRequests(
      rankCase,
      rankCase.distinctRequests,
      products,
      3,
      workloadFromEnv('BENCH_PROFILE_WORKLOAD'),
    );
    let offset = 0;
    const block = async (target: Path, count: number) => {
      const base = offset;
      const answers: string[] = [];
      await drive(count, 1, async (seq) => {
        answers[seq] = await target.http.postJson(
          target.route,
          (requests[(base + seq) % requests.length] as RankRequest).body,
        );
      });
      for (const [seq, answer] of answers.entries()) {
        const problem = target.check(requests[(base + seq) % requests.length] as RankRequest, answer, size);
        if (problem !== undefined) throw new Error(`${target.name} call ${seq}: ${problem}`);
      }
    };
    for (const target of paths) await block(target, context.quick ? BLOCK : WARMUP);
    await resetProbe(rankdServer);
    await resetProbe(floorServer);
    for (let done = 0; done < perPath; done += BLOCK) {
      for (const target of paths) await block(target, Math.min(BLOCK, perPath - done));
      offset += BLOCK;
    }
    const rankdReport = await probeOf(rankdServer, context.cpuProfDir !== undefined);
    const floorReport = await probeOf(floorServer, false);
    const tallies: Record<PathName, RouteTally | undefined> = {
      rankd: rankdReport.routes[RANK_PATH],
      floor: floorReport.routes[RANK_PATH],
      'parsing floor': floorReport.routes[PARSING_FLOOR_PATH],
    };
    for (const [name, tally] of Object.entries(tallies)) {
      if (tally === undefined) throw new Error(`the probe saw no request of ${name}`);
      if (tally.overlapped > 0) throw new Error(`${name}: ${tally.overlapped} requests overlapped`);
    }
    const rows = segmentRows(tallies as Record<PathName, RouteTally>);
    const rankdRequests = (tallies.rankd as RouteTally).requests;
    const processMsPerRequest = rankdReport.processCpuUs / 1000 / rankdRequests;
    if (context.cpuProfDir !== undefined) {
      await rankdServer.stop();
      addTopFunctions(rows, context.cpuProfDir, (tallies.rankd as RouteTally).windows ?? {});
    }
    printRows(rows, processMsPerRequest);
    return {
      source: build.source,
      case: rankCase.key,
      products,
      requestsPerPath: perPath,
      settings: { ...RANK_SERVER_SETTINGS, ...settings },
      segments: rows,
      rankdMsPerRequest: total(rows, 'rankd'),
      rankdProcessMsPerRequest: processMsPerRequest,
      floorMsPerRequest: total(rows, 'floor'),
      parsingFloorMsPerRequest: total(rows, 'parsing floor'),
      loadAverage: loadAverages(loadBefore),
      // With --cpu-prof: each segment of each rankd request, for `bench/lib/profile-summary.ts
      // <profile> --results <this file> --phase <segment>` (its call tree, its functions).
      phaseWindows: Object.entries((tallies.rankd as RouteTally).windows ?? {}).flatMap(([phase, list]) =>
        list.map(([startUs, endUs]) => ({ phase, startUs, endUs })),
      ),
    };
  } finally {
    await cleanup.run();
  }
}

function total(rows: readonly SegmentRow[], name: PathName): number {
  return rows.reduce((sum, row) => sum + (row.msPerRequest[name] ?? 0), 0);
}

/** rankd's segments in the order it runs them, then the floors' own (their handler is one segment). */
function segmentRows(tallies: Record<PathName, RouteTally>): SegmentRow[] {
  const names = [...new Set(Object.values(tallies).flatMap((tally) => tally.segments.map((s) => s.name)))];
  const rankdOrder = tallies.rankd.segments.map((s) => s.name);
  // The segment between requests is listed last: it ends where the next request begins.
  const rank = (name: string) => (name === 'response→request' ? 1e9 : rankdOrder.indexOf(name) + 1 || 1e6);
  names.sort((a, b) => rank(a) - rank(b));
  const rankdTotalNs = tallies.rankd.segments.reduce((sum, s) => sum + s.cpuNs, 0);
  return names.map((segment) => {
    const msPerRequest: Partial<Record<PathName, number>> = {};
    for (const [name, tally] of Object.entries(tallies) as Array<[PathName, RouteTally]>) {
      const found = tally.segments.find((s) => s.name === segment);
      if (found !== undefined) msPerRequest[name] = found.cpuNs / 1e6 / tally.requests;
    }
    const rankdNs = tallies.rankd.segments.find((s) => s.name === segment)?.cpuNs ?? 0;
    return { segment, msPerRequest, rankdShare: rankdNs / rankdTotalNs };
  });
}

/** The server's main-thread profile in `dir` (thread 0; `--cpu-prof` also profiles tsx's loader thread). */
function mainThreadProfile(dir: string): CpuProfile | undefined {
  const file = existsSync(dir)
    ? readdirSync(dir).find((f) => /\.\d+\.0\.\d+\.cpuprofile$/.test(f))
    : undefined;
  return file === undefined ? undefined : (JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile);
}

/** Each segment's top functions by self time, from the samples taken inside its windows. */
function addTopFunctions(
  rows: SegmentRow[],
  dir: string,
  windows: Record<string, Array<[number, number]>>,
): void {
  const profile = mainThreadProfile(dir);
  if (profile === undefined) {
    console.log(`no main-thread profile in ${dir}`);
    return;
  }
  for (const row of rows) {
    const own: TimeWindow[] = (windows[row.segment] ?? []).map(([startUs, endUs]) => ({ startUs, endUs }));
    const summary = summariseProfile(new ProfileTree(profile, own));
    // Idle ticks are the thread waiting (for Redis, for the client): not CPU.
    const busy = summary.self.filter(([fn]) => !fn.startsWith('(idle)'));
    const busyMs = busy.reduce((sum, [, ms]) => sum + ms, 0);
    if (busyMs > 0)
      row.topFunctions = busy
        .slice(0, TOP_FUNCTIONS)
        // The private build's files by their path in the package (dist/…, template/…).
        .map(([fn, ms]) => ({ fn: fn.replace(/file:\/\/\S*?\/pkg\//, ''), share: ms / busyMs }));
  }
}

function printRows(rows: readonly SegmentRow[], processMsPerRequest: number): void {
  const ms = (value: number | undefined) => (value === undefined ? '' : value.toFixed(3));
  const table = rows.map((row) => [
    row.segment,
    ms(row.msPerRequest.rankd),
    `${(row.rankdShare * 100).toFixed(1)}%`,
    ms(row.msPerRequest.floor),
    ms(row.msPerRequest['parsing floor']),
  ]);
  table.push([
    'total',
    ms(total(rows, 'rankd')),
    '100%',
    ms(total(rows, 'floor')),
    ms(total(rows, 'parsing floor')),
  ]);
  console.log(
    formatTable(['segment', 'rankd ms/req', 'share', 'floor ms/req', 'parsing floor ms/req'], table, 1),
  );
  console.log(
    `server CPU per request by segment (from one mark to the next); rankd's process, probe calls ` +
      `and the time between blocks included: ${processMsPerRequest.toFixed(3)} ms per request`,
  );
  for (const row of rows) {
    if (row.topFunctions === undefined) continue;
    console.log(`\n${row.segment} (${(row.rankdShare * 100).toFixed(1)}%): profile samples by self time`);
    for (const { fn, share } of row.topFunctions)
      console.log(`  ${(share * 100).toFixed(1).padStart(5)}%  ${fn}`);
  }
}
