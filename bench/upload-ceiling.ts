/**
 * `npm run bench -- upload-ceiling`: how close any HTTP server can come to the index benchmark's
 * upload floor. Three paths upload the same batches in each round: rankd (as in `index`), a
 * ceiling server that only receives the body and forwards the same MSET (serve-upload-ceiling.ts:
 * no framework, no parsing, no checks), and the floor (the MSET straight from the client). The
 * ceiling's share of the floor bounds what rankd's upload can reach on this machine; the gap
 * between rankd and the ceiling is what rankd's own work costs. See docs/reference/performance.md.
 */
import { fileURLToPath } from 'node:url';
import { createClient } from 'redis';
import { startTestRedis } from '../test/helpers/redis-server.js';
import type { BenchContext } from './lib/benchmark.js';
import { type CpuSample, cpuPerCall, sampleCpu } from './lib/cpu.js';
import { HttpClient } from './lib/http.js';
import {
  type FloorClient,
  floorUpload,
  httpUpload,
  type IndexBatch,
  prepareIndexWork,
  verifyFloorGets,
  verifyFloorUploads,
  verifyUploads,
} from './lib/index-work.js';
import { type ServerProcess, serverNodeArgs, startServerProcess } from './lib/server-process.js';
import { median } from './lib/stats.js';
import { formatCount, formatMs, formatTable } from './lib/table.js';

const BATCH = 1000;
const CONCURRENCY = 8;
const CEILING_ENTRY = fileURLToPath(new URL('./lib/serve-upload-ceiling.ts', import.meta.url));

type Path = 'rankd' | 'ceiling' | 'floor';
const PATHS: readonly Path[] = ['rankd', 'ceiling', 'floor'];

/** One path's upload of every batch in one round. */
interface PathRound {
  entitiesPerSec: number;
  cpu: CpuSample;
}

/** Runs the benchmark and returns its figures. */
export async function run(context: BenchContext): Promise<Record<string, unknown>> {
  const total = context.quick ? 10_000 : 100_000;
  const rounds = context.quick ? 1 : 5;
  const work = prepareIndexWork(total, BATCH);
  console.log(
    `upload-ceiling: ${formatCount(total)} products (mean ${work.meanEntityBytes} B JSON) in calls of ${BATCH}, ` +
      `concurrency ${CONCURRENCY}, ${rounds} round(s); rankd, a bare HTTP forwarder and MSET`,
  );
  const redis = await startTestRedis();
  const cleanup: Array<() => Promise<unknown>> = [() => redis.stop()];
  try {
    const rankd = await startServerProcess({ redisUrl: redis.url, cpuProfDir: context.cpuProfDir });
    cleanup.unshift(() => rankd.stop());
    const ceiling = await startServerProcess({
      redisUrl: redis.url,
      entry: CEILING_ENTRY,
      env: { BENCH_TOTAL: String(total) },
    });
    cleanup.unshift(() => ceiling.stop());
    const clients = {
      rankd: new HttpClient(rankd.origin, CONCURRENCY),
      ceiling: new HttpClient(ceiling.origin, CONCURRENCY),
    };
    cleanup.unshift(
      () => clients.rankd.close(),
      () => clients.ceiling.close(),
    );
    const floor: FloorClient = createClient({ url: redis.url });
    floor.on('error', () => undefined);
    await floor.connect();
    cleanup.unshift(() => floor.close());

    const upload = async (path: Path, batches: readonly IndexBatch[]): Promise<PathRound> => {
      await floor.flushAll();
      const server: ServerProcess = path === 'ceiling' ? ceiling : rankd;
      const before = await sampleCpu(server, floor);
      const result =
        path === 'floor'
          ? await floorUpload(floor, batches, CONCURRENCY)
          : await httpUpload(clients[path], batches, CONCURRENCY);
      const cpu = cpuPerCall(before, await sampleCpu(server, floor), batches.length);
      // No server takes part in the floor's path.
      if (path === 'floor') cpu.server = 0;
      if (path === 'floor') verifyFloorUploads(result.answers as string[]);
      else verifyUploads(batches, result.answers as string[]);
      // The ceiling's answers are made up front: what counts is that every entity reached Redis,
      // byte for byte, on every path.
      const entities = batches.reduce((sum, batch) => sum + batch.ids.length, 0);
      const stored = await floor.dbSize();
      if (stored !== entities)
        throw new Error(`${path}: Redis holds ${stored} keys after uploading ${entities}`);
      const ends = [batches[0], batches.at(-1)] as IndexBatch[];
      verifyFloorGets(ends, await Promise.all(ends.map((batch) => floor.mGet(batch.keys))));
      return { entitiesPerSec: (entities / result.wallMs) * 1000, cpu };
    };

    // Warm-up: every path on a slice of the work, figures discarded.
    for (const path of PATHS) await upload(path, work.batches.slice(0, 30));
    const results: Array<Record<Path, PathRound>> = [];
    for (let round = 0; round < rounds; round++) {
      // Each path goes first, second and third in turn.
      const order = PATHS.map((_, i) => PATHS[(i + round) % PATHS.length] as Path);
      const figures = {} as Record<Path, PathRound>;
      for (const path of order) figures[path] = await upload(path, work.batches);
      results.push(figures);
    }
    const summary = summarise(results);
    printTable(summary);
    return {
      entities: total,
      batch: BATCH,
      concurrency: CONCURRENCY,
      rounds,
      serverNodeArgs: serverNodeArgs(),
      ...summary,
    };
  } finally {
    for (const step of cleanup) await step().catch(() => undefined);
  }
}

/** A path's figures: median throughput, mean CPU per call, and its share of the floor per round. */
interface PathSummary {
  entitiesPerSec: number;
  cpuMsPerCall: CpuSample;
  ratioToFloor: number;
  ratioPerRound: number[];
}

function summarise(results: ReadonlyArray<Record<Path, PathRound>>): Record<Path, PathSummary> {
  const summary = {} as Record<Path, PathSummary>;
  for (const path of PATHS) {
    const ratioPerRound = results.map(
      (round) => Math.round((round[path].entitiesPerSec / round.floor.entitiesPerSec) * 1000) / 1000,
    );
    const mean = (process: keyof CpuSample) =>
      Math.round((results.reduce((sum, round) => sum + round[path].cpu[process], 0) / results.length) * 100) /
      100;
    summary[path] = {
      entitiesPerSec: Math.round(median(results.map((round) => round[path].entitiesPerSec))),
      cpuMsPerCall: { client: mean('client'), server: mean('server'), redis: mean('redis') },
      ratioToFloor: median(ratioPerRound),
      ratioPerRound,
    };
  }
  return summary;
}

function printTable(summary: Record<Path, PathSummary>): void {
  const percent = (ratio: number) => `${Math.round(ratio * 100)}%`;
  const rows = PATHS.map((path) => {
    const { entitiesPerSec, cpuMsPerCall, ratioToFloor, ratioPerRound } = summary[path];
    const cpu =
      path === 'floor'
        ? [cpuMsPerCall.client, cpuMsPerCall.redis]
        : [cpuMsPerCall.client, cpuMsPerCall.server, cpuMsPerCall.redis];
    return [
      path,
      formatCount(entitiesPerSec),
      cpu.map(formatMs).join(' + '),
      path === 'floor' ? '' : percent(ratioToFloor),
      path === 'floor' ? '' : ratioPerRound.map(percent).join(' '),
    ];
  });
  console.log(formatTable(['path', 'entities/s', 'CPU ms/call', 'of floor', 'per round'], rows, 1));
  console.log(
    'CPU ms/call: load generator + server + redis-server (HTTP paths); client + redis-server (floor)',
  );
}
