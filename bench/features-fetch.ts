/**
 * `npm run bench -- features-fetch` (issue 4, benchmark (a); `npm run bench -- features` runs it
 * with `features-load`): the stored-feature fetch inside the ranking path for 1000 candidates × 4
 * views × 10 float features, against the same MGET through the bare client in the same process.
 * In-process, no HTTP. See docs/reference/performance.md for what each figure means.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createClient, RESP_TYPES } from 'redis';
import { startTestRedis } from '../test/helpers/redis-server.js';
import type { BenchContext } from './lib/benchmark.js';
import { buildPackage, importDist } from './lib/package-build.js';
import { random } from './lib/products.js';
import type { PhaseWindow } from './lib/profile-summary.js';
import { distinctSample } from './lib/rank-data.js';
import { median, percentile } from './lib/stats.js';
import { formatMs, formatTable } from './lib/table.js';

const CANDIDATES = 1000;
const VIEWS = 4;
const FEATURES = 10;
/** Issue 4's goal: the fetch inside the ranking path within this factor of the floor. */
const GOAL_FACTOR = 1.5;
const LOAD_BATCH = 1000;
/** Where the JSON-encoded alternative's rows live: not a rankd key, only for the reference path. */
const JSON_PREFIX = 'bench-json';
/** Size of a row of 10 floats in rankd's binary layout (RowLayout: 13-byte header, then f64s). */
const HEADER_BYTES = 13;

const FEATURE_NAMES = Array.from({ length: FEATURES }, (_, f) => `f${f}`);
const VIEW_NAMES = Array.from({ length: VIEWS }, (_, v) => `bench_view_${v}`);
/** Every feature a model of this app reads: `bench_view_<v>:f<f>`, view by view. */
const NAMES = VIEW_NAMES.flatMap((view) => FEATURE_NAMES.map((name) => `${view}:${name}`));

/** The rankd modules the benchmark drives, from a private build, typed as their sources. */
interface Rankd {
  api: typeof import('../src/index.js');
  features: typeof import('../src/pipeline/features-phase.js');
  context: typeof import('../src/request/request-context.js');
  stores: typeof import('../src/app/create-stores.js');
  config: typeof import('../src/config/index.js');
}

async function loadRankd(dir: string): Promise<Rankd> {
  return {
    api: await importDist(dir, 'index.js'),
    features: await importDist(dir, 'pipeline/features-phase.js'),
    context: await importDist(dir, 'pipeline/request-context.js'),
    stores: await importDist(dir, 'app/create-stores.js'),
    config: await importDist(dir, 'config/index.js'),
  };
}

/**
 * The bench app: 4 views of 10 floats on products, and a ranking pipeline whose model declares all
 * 40 features, so the feature plan is the one `defineApp` works out for a real app (4 stored
 * views, no real-time groups).
 */
function benchApp({ api }: Rankd) {
  const { defineApp, defineFeatureView, defineModel, defineRankingPipeline, Feature, ProductEntity } = api;
  const views = VIEW_NAMES.map((name) =>
    defineFeatureView({
      name,
      entity: ProductEntity,
      features: Object.fromEntries(FEATURE_NAMES.map((feature) => [feature, Feature.float({ default: 0 })])),
    }),
  );
  const app = defineApp({
    name: 'bench-features',
    featureViews: views,
    pipelines: [
      defineRankingPipeline({
        name: 'BenchRanking',
        candidate: ProductEntity,
        model: defineModel({
          name: 'AllFeatures',
          entity: ProductEntity,
          features: NAMES,
          score: (products) => products.map(() => 0),
        }),
      }),
    ],
  });
  const plan = app.pipelines[0]?.plan;
  if (plan === undefined || plan.storedViews.length !== VIEWS)
    throw new Error('the bench app plans no 4 views');
  return { views, plan };
}

/** Feature `f` of view `v` for product number `i`: three decimals, so JSON round-trips it exactly. */
function featureValue(i: number, v: number, f: number): number {
  return ((i * 7919 + v * 131 + f * 104729) % 1_000_000) / 1000;
}

function idOf(i: number): string {
  return `p${String(i).padStart(7, '0')}`;
}

/** The paths timed, in table order. */
const PATHS = ['rankd', 'rankdMatrix', 'floor', 'floorDecode', 'floorJson'] as const;
type PathName = (typeof PATHS)[number];
const LABELS: Record<PathName, string> = {
  rankd: 'rankd: StoredFeatureFetch + 40,000 getFeature',
  rankdMatrix: 'rankd: StoredFeatureFetch + featureMatrix 1000 × 40',
  floor: 'floor: MGET of the 4000 row keys (node-redis, Buffers)',
  floorDecode: 'floor + readDoubleLE of the 40,000 values',
  floorJson: 'floor + JSON: MGET of 4000 JSON rows + JSON.parse',
};

/** One fetch: 1000 candidates as hydration leaves them, and their product numbers for checking. */
interface Sample {
  numbers: number[];
  ids: string[];
  entities: Array<{ product_id: string }>;
  request: { request_id: string; candidates: Array<{ product_id: string }> };
}

/** A timed call: wall ms, this process's CPU ms, and for rankd the part before the reads. */
interface Timing {
  ms: number;
  cpuMs: number;
  fetchMs?: number;
}

/** rankd's connection and stores, as a server has them. */
type Stores = ReturnType<Rankd['stores']['createStores']>;

/** Runs the benchmark and returns its figures. */
export async function run(context: BenchContext): Promise<Record<string, unknown>> {
  const total = context.quick ? 10_000 : 100_000;
  const measured = context.quick ? 30 : 300;
  const warmup = context.quick ? 10 : 50;
  const loadBefore = loadavg()[0] ?? 0;
  console.log(
    `features-fetch: ${CANDIDATES} candidates × ${VIEWS} views × ${FEATURES} float features of ` +
      `${total.toLocaleString('en-US')} products, in this process (no HTTP); ${measured} fetches per path ` +
      `after ${warmup} of warm-up, paths interleaved`,
  );
  if (loadBefore > 0.5)
    console.log(`warning: load average ${loadBefore.toFixed(2)} before start; figures will be noisy`);

  const dir = mkdtempSync(join(tmpdir(), 'rankd-bench-fetch-'));
  const cleanup: Array<() => Promise<unknown>> = [async () => rmSync(dir, { recursive: true, force: true })];
  let profiler: Session | undefined;
  try {
    const build = await buildPackage(join(dir, 'pkg'));
    console.log(`rankd built from the ${build.source}`);
    const rankd = await loadRankd(build.dir);
    const { views, plan } = benchApp(rankd);
    const redis = await startTestRedis();
    cleanup.unshift(() => redis.stop());
    const config = rankd.config.loadConfig({
      REDIS_URL: redis.url,
      PROJECT_NAME: 'default',
      INDEX_VERSION: '1',
    });
    const stores = rankd.stores.createStores(config);
    cleanup.unshift(() => stores.redis.close());
    // The floor's own connections: Buffers for the binary rows (as rankd's connection reads them),
    // strings for the JSON rows (JSON.parse wants a string).
    const floor = createClient({ url: redis.url }).withTypeMapping({ [RESP_TYPES.BLOB_STRING]: Buffer });
    const floorText: ReturnType<typeof createClient> = createClient({ url: redis.url });
    floor.on('error', () => undefined);
    floorText.on('error', () => undefined);
    if (!(await stores.redis.waitUntilReady(10_000))) throw new Error('Redis did not answer within 10 s');
    await Promise.all([floor.connect(), floorText.connect()]);
    cleanup.unshift(
      () => floor.close(),
      () => floorText.close(),
    );
    await load(stores, views, floorText, total);
    const keyCount = await floorText.dbSize();
    if (keyCount !== 2 * VIEWS * total + 1)
      throw new Error(`expected ${2 * VIEWS * total + 1} keys, found ${keyCount}`);

    const next = random(4);
    const samples = Array.from({ length: warmup + measured }, (_, s): Sample => {
      const numbers = distinctSample(next, total, CANDIDATES);
      const ids = numbers.map(idOf);
      const candidates = ids.map((product_id) => ({ product_id }));
      return { numbers, ids, entities: candidates, request: { request_id: `r${s}`, candidates } };
    });
    const out = new Float64Array(CANDIDATES * NAMES.length);
    const paths: Record<PathName, (sample: Sample) => Promise<Timing>> = {
      rankd: (sample) => rankdFetch(rankd, stores.features, plan, sample, out, 'getFeature'),
      rankdMatrix: (sample) => rankdFetch(rankd, stores.features, plan, sample, out, 'featureMatrix'),
      floor: async (sample) => {
        const { ms, cpuMs, values } = await timed(() => floor.mGet(rowKeys(stores, sample)));
        if (values.length !== VIEWS * CANDIDATES || values.includes(null))
          throw new Error('floor: rows missing');
        return { ms, cpuMs };
      },
      floorDecode: async (sample) => {
        const { ms, cpuMs } = await timed(async () =>
          decodeRows(await floor.mGet(rowKeys(stores, sample)), out),
        );
        return { ms, cpuMs };
      },
      floorJson: async (sample) => {
        const keys = sample.ids.flatMap((id) => VIEW_NAMES.map((view) => `${JSON_PREFIX}:${view}:${id}`));
        const { ms, cpuMs } = await timed(async () => parseRows(await floorText.mGet(keys), out));
        return { ms, cpuMs };
      },
    };
    const timings: Record<PathName, Timing[]> = {
      rankd: [],
      rankdMatrix: [],
      floor: [],
      floorDecode: [],
      floorJson: [],
    };
    // featureMatrix is younger than this benchmark: a BENCH_SOURCE from before it lacks it.
    const active = PATHS.filter(
      (path) => path !== 'rankdMatrix' || typeof rankd.api.featureMatrix === 'function',
    );
    const phaseWindows: PhaseWindow[] = [];
    for (const [s, sample] of samples.entries()) {
      if (s === warmup && context.cpuProfDir) profiler = await startProfiler();
      // Rotating the order cancels whatever favours going first (a warm cache, a quiet moment).
      for (let p = 0; p < active.length; p++) {
        const path = active[(s + p) % active.length] as PathName;
        out.fill(Number.NaN);
        const startUs = monotonicUs();
        const timing = await paths[path](sample);
        if (s >= warmup) {
          phaseWindows.push({ phase: path, startUs, endUs: monotonicUs() });
          timings[path].push(timing);
        }
        // Checked outside the clock: every value read is the one written.
        if (path !== 'floor') checkValues(path, sample, out);
      }
    }
    if (profiler && context.cpuProfDir) await stopProfiler(profiler, context.cpuProfDir);
    profiler = undefined;

    const figures = summariseAll(timings, active);
    printTable(figures, active);
    return {
      products: total,
      candidates: CANDIDATES,
      views: VIEWS,
      featuresPerView: FEATURES,
      source: build.source,
      rowBytes: { binary: HEADER_BYTES + 8 * FEATURES },
      fetchesPerPath: measured,
      warmupFetches: warmup,
      loadAverage: { before: loadBefore, after: loadavg()[0] ?? 0 },
      goalFactor: GOAL_FACTOR,
      ...figures,
      phaseWindows,
    };
  } finally {
    if (profiler) await profiler.post('Profiler.stop').catch(() => undefined);
    profiler?.disconnect();
    for (const step of cleanup) await step().catch(() => undefined);
  }
}

/**
 * The fetch as the ranking path runs it (see run-pipeline.ts): entities are registered as hydration
 * leaves them (before the clock: hydration's work), then, inside the request's context,
 * `StoredFeatureFetch` reads every row in one MGET and `complete()` looks for entities found since,
 * and the model's reads follow: `getFeature(entity, 'view:feature')` for all 40 features of every
 * candidate, as a model's `score` does (the template's model reads this way), or the batch form
 * `featureMatrix(entities, names)` that matrix models (trees, ONNX) use.
 */
async function rankdFetch(
  rankd: Rankd,
  store: Stores['features'],
  plan: ReturnType<typeof benchApp>['plan'],
  sample: Sample,
  out: Float64Array,
  reads: 'getFeature' | 'featureMatrix',
): Promise<Timing> {
  const { RequestContext, runInContext, getFeature } = rankd.context;
  const { featureMatrix } = rankd.api;
  const { StoredFeatureFetch } = rankd.features;
  const context = new RequestContext('BenchRanking', sample.request);
  for (const entity of sample.entities) context.register(entity, { type: 'product', id: entity.product_id });
  const idsByType = new Map([['product', sample.ids]]);
  return runInContext(context, async () => {
    const cpu = process.cpuUsage();
    const started = performance.now();
    const fetch = new StoredFeatureFetch(context, store, plan, idsByType);
    await fetch.complete(false);
    const fetched = performance.now();
    if (reads === 'featureMatrix') featureMatrix(sample.entities, NAMES, out);
    else {
      let k = 0;
      for (const entity of sample.entities)
        for (const name of NAMES) out[k++] = getFeature(entity, name) as number;
    }
    const ms = performance.now() - started;
    const used = process.cpuUsage(cpu);
    return { ms, cpuMs: (used.user + used.system) / 1000, fetchMs: fetched - started };
  });
}

/** Runs `fn`, timing its wall clock and this process's CPU. */
async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; cpuMs: number; values: T }> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  const values = await fn();
  const ms = performance.now() - started;
  const used = process.cpuUsage(cpu);
  return { ms, cpuMs: (used.user + used.system) / 1000, values };
}

/** rankd's row keys for the sample, view by view, as `FeatureStore.read` builds them. */
function rowKeys(stores: Stores, sample: Sample): string[] {
  return VIEW_NAMES.flatMap((view) => sample.ids.map((id) => stores.keys.featureRow(view, [id])));
}

/** The least any reader of the binary rows must do: one `readDoubleLE` per value. */
function decodeRows(values: ReadonlyArray<Buffer | null>, out: Float64Array): void {
  for (let v = 0; v < VIEWS; v++) {
    for (let j = 0; j < CANDIDATES; j++) {
      const row = values[v * CANDIDATES + j];
      if (!row) throw new Error('floor + decode: a row is missing');
      for (let f = 0; f < FEATURES; f++)
        out[j * NAMES.length + v * FEATURES + f] = row.readDoubleLE(HEADER_BYTES + 8 * f);
    }
  }
}

/** The JSON alternative: each row an object of 10 numbers, parsed and read by name. */
function parseRows(values: ReadonlyArray<string | null>, out: Float64Array): void {
  for (let j = 0; j < CANDIDATES; j++) {
    for (let v = 0; v < VIEWS; v++) {
      const text = values[j * VIEWS + v];
      if (!text) throw new Error('floor + JSON: a row is missing');
      const row = JSON.parse(text) as Record<string, number>;
      for (let f = 0; f < FEATURES; f++)
        out[j * NAMES.length + v * FEATURES + f] = row[FEATURE_NAMES[f] as string] as number;
    }
  }
}

function checkValues(path: PathName, sample: Sample, out: Float64Array): void {
  for (let j = 0; j < CANDIDATES; j++) {
    const i = sample.numbers[j] as number;
    for (let v = 0; v < VIEWS; v++) {
      for (let f = 0; f < FEATURES; f++) {
        const got = out[j * NAMES.length + v * FEATURES + f];
        if (got !== featureValue(i, v, f))
          throw new Error(
            `${path}: ${idOf(i)} bench_view_${v}:f${f} read ${got}, wrote ${featureValue(i, v, f)}`,
          );
      }
    }
  }
}

/**
 * Writes every product's 4 rows through `FeatureStore.write` (rankd's binary layout, one MSET per
 * batch, as the features upload route does), and the same values as JSON objects for the reference.
 */
async function load(
  stores: Stores,
  views: ReturnType<typeof benchApp>['views'],
  text: ReturnType<typeof createClient>,
  total: number,
): Promise<void> {
  const now = Date.now();
  for (let start = 0; start < total; start += LOAD_BATCH) {
    const numbers = Array.from({ length: Math.min(LOAD_BATCH, total - start) }, (_, j) => start + j);
    await Promise.all(
      views.map(async (view, v) => {
        const rows = numbers.map((i) => ({
          ids: [idOf(i)],
          values: Object.fromEntries(FEATURE_NAMES.map((name, f) => [name, featureValue(i, v, f)])),
          eventTimestampMs: now,
        }));
        await stores.features.write(view, rows);
        await text.mSet(
          rows.map((row): [string, string] => [
            `${JSON_PREFIX}:${view.name}:${row.ids[0]}`,
            JSON.stringify(row.values),
          ]),
        );
      }),
    );
  }
}

function monotonicUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

/** Profiles this process (the benchmark is in-process) from the end of the warm-up on. */
async function startProfiler(): Promise<Session> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  return session;
}

/** Writes the profile where the runner looks for a main-thread profile (`CPU.*.<pid>.0.<seq>.cpuprofile`). */
async function stopProfiler(session: Session, dir: string): Promise<void> {
  const { profile } = await session.post('Profiler.stop');
  session.disconnect();
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `CPU.features-fetch.${process.pid}.0.001.cpuprofile`), JSON.stringify(profile));
}

/** A path's figures: latency of one fetch and this process's CPU per fetch. */
interface PathFigures {
  label: string;
  p50Ms: number;
  p99Ms: number;
  meanMs: number;
  cpuMsPerFetch: number;
  /** Its p50 and p99 over the floor's. */
  p50VsFloor: number;
  p99VsFloor: number;
}

function summariseAll(timings: Record<PathName, Timing[]>, active: readonly PathName[]) {
  const round = (value: number, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;
  const stats = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    return {
      p50Ms: round(percentile(sorted, 50)),
      p99Ms: round(percentile(sorted, 99)),
      meanMs: round(values.reduce((sum, x) => sum + x, 0) / values.length),
    };
  };
  const floor = stats(timings.floor.map((t) => t.ms));
  const paths: Partial<Record<PathName, PathFigures>> = {};
  for (const path of active) {
    const own = stats(timings[path].map((t) => t.ms));
    paths[path] = {
      label: LABELS[path],
      ...own,
      cpuMsPerFetch: round(timings[path].reduce((sum, t) => sum + t.cpuMs, 0) / timings[path].length),
      p50VsFloor: round(own.p50Ms / floor.p50Ms),
      p99VsFloor: round(own.p99Ms / floor.p99Ms),
    };
  }
  // rankd's fetch alone (up to `complete()`, the same in both rankd paths), before the model's reads.
  const fetchOnly = [...timings.rankd, ...timings.rankdMatrix].map((t) => t.fetchMs ?? Number.NaN);
  const fetchStats = stats(fetchOnly);
  const rankdFetchOnly = {
    ...fetchStats,
    p50VsFloor: round(fetchStats.p50Ms / floor.p50Ms),
    p99VsFloor: round(fetchStats.p99Ms / floor.p99Ms),
  };
  // Paired per fetch: each rankd fetch over the floor fetch of the same candidates, moments apart.
  const pairedRatio = round(median(timings.rankd.map((t, i) => t.ms / (timings.floor[i]?.ms ?? Number.NaN))));
  return {
    paths,
    rankdFetchOnly,
    pairedRatioMedian: pairedRatio,
    // The figure is the fetch alone; the read paths after it are reported beside it.
    goalMet: rankdFetchOnly.p50VsFloor <= GOAL_FACTOR,
  };
}

function printTable(figures: ReturnType<typeof summariseAll>, active: readonly PathName[]): void {
  const rows = active.map((path) => {
    const p = figures.paths[path] as PathFigures;
    return [
      p.label,
      formatMs(p.p50Ms),
      formatMs(p.p99Ms),
      formatMs(p.meanMs),
      formatMs(p.cpuMsPerFetch),
      `${p.p50VsFloor.toFixed(2)}×`,
      `${p.p99VsFloor.toFixed(2)}×`,
    ];
  });
  const fetchOnly = figures.rankdFetchOnly;
  rows.splice(active.indexOf('floor'), 0, [
    '  (both rankd rows: StoredFeatureFetch to complete())',
    formatMs(fetchOnly.p50Ms),
    formatMs(fetchOnly.p99Ms),
    formatMs(fetchOnly.meanMs),
    '',
    `${fetchOnly.p50VsFloor.toFixed(2)}×`,
    `${fetchOnly.p99VsFloor.toFixed(2)}×`,
  ]);
  const header = ['path (1000 candidates × 4 views × 10 floats)', 'p50 ms', 'p99 ms', 'mean ms', 'CPU ms'];
  console.log(formatTable([...header, 'p50/floor', 'p99/floor'], rows));
  const matrix = figures.paths.rankdMatrix;
  console.log(
    `goal (issue 4): the fetch alone within ${GOAL_FACTOR}× of the floor at p50: ` +
      `${fetchOnly.p50VsFloor.toFixed(2)}× (p99 ${fetchOnly.p99VsFloor.toFixed(2)}×), ${figures.goalMet ? 'met' : 'NOT met'}; ` +
      `fetch + every value read through getFeature ${figures.paths.rankd?.p50VsFloor.toFixed(2)}× ` +
      `(median of per-fetch ratios ${figures.pairedRatioMedian.toFixed(2)}×)` +
      (matrix ? `, through featureMatrix ${matrix.p50VsFloor.toFixed(2)}×` : ''),
  );
}
