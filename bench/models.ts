/**
 * `npm run bench -- models`: the native TypeScript GBDT evaluator on the issue's workload — 500
 * trees of depth 8 over 50 features, scoring batches of 1000 candidates — against onnxruntime-node
 * running the same trees, when it is installed. Goals (issue 5): p50 ≤ 5 ms per batch, and within
 * 1.5× of onnxruntime-node. The TS evaluator runs on the calling thread, as `gbdtModel` does, in
 * the layout it chooses (heap) and in the general one (pointer); the goal is checked on the former.
 *
 * Wall times are measured round-robin, so every runner sees the same machine noise. CPU per batch
 * is measured apart, each runner alone for a run of batches after a pause: in the round-robin,
 * onnxruntime's threads, which spin for a while after each run, would be billed to the next runner.
 * Loading onnxruntime-node makes V8 check typed-array reads for detached buffers from then on, as
 * importing rankd's server does (see `kernelLayout`): the TS figures here are a server process's,
 * not a bare script's.
 *
 * onnxruntime-node is optional. Without it in node_modules, install it for a run with
 * `ONNXRUNTIME_NODE_INSTALL=skip npm install --no-save onnxruntime-node`, or point
 * RANKD_BENCH_ONNXRUNTIME_FROM at a directory it can be resolved from (its node_modules' parent).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { loadGbdtModel, parseGbdtModel } from '../src/models/gbdt/load-gbdt.js';
import type { TreeEnsemble } from '../src/models/gbdt/tree-ensemble.js';
import type { BenchContext } from './lib/benchmark.js';
import { percentile } from './lib/stats.js';
import { formatTable } from './lib/table.js';
import { onnxTreeEnsemble } from './models-onnx.js';
import { syntheticModel, syntheticRows } from './models-synthetic.js';

const TREES = 500;
const DEPTH = 8;
const FEATURES = 50;
const CANDIDATES = 1000;
const MISSING_RATE = 0.05;
const GOAL_P50_MS = 5;
const GOAL_RATIO = 1.5;

/** The part of onnxruntime-node's API the benchmark uses. */
interface OrtSession {
  run(feeds: Record<string, unknown>): Promise<Record<string, { data: ArrayLike<number> }>>;
  release?(): Promise<void>;
}
interface Ort {
  InferenceSession: { create(model: Uint8Array, options?: Record<string, unknown>): Promise<OrtSession> };
  Tensor: new (type: 'float32', data: Float32Array, dims: number[]) => unknown;
}

/** A way of scoring one batch, timed the same way whatever it is. */
interface Runner {
  name: string;
  score(): Promise<ArrayLike<number>> | ArrayLike<number>;
}

/** onnxruntime-node, or why it is not there. */
async function loadOnnxRuntime(): Promise<Ort | string> {
  const name = 'onnxruntime-node';
  const pick = (module: Record<string, unknown>) =>
    (module.InferenceSession ? module : module.default) as unknown as Ort;
  try {
    return pick(await import(name));
  } catch {
    const from = process.env.RANKD_BENCH_ONNXRUNTIME_FROM;
    if (from) {
      const path = createRequire(join(from, 'noop.js')).resolve(name);
      return pick(await import(pathToFileURL(path).href));
    }
    return 'skipped: onnxruntime-node is not installed (ONNXRUNTIME_NODE_INSTALL=skip npm install --no-save onnxruntime-node)';
  }
}

async function onnxRunners(
  ort: Ort,
  onnx: Uint8Array,
  rows32: Float32Array,
): Promise<{ runners: Runner[]; sessions: OrtSession[] }> {
  const runners: Runner[] = [];
  const sessions: OrtSession[] = [];
  // Default threading (one intra-op thread per core) and a single thread, like the TS evaluator.
  for (const [label, threads] of [
    ['onnxruntime (default threads)', 0],
    ['onnxruntime (1 thread)', 1],
  ] as const) {
    const session = await ort.InferenceSession.create(onnx, {
      intraOpNumThreads: threads,
      interOpNumThreads: 1,
      graphOptimizationLevel: 'all',
    });
    sessions.push(session);
    runners.push({
      name: label,
      score: async () => {
        const result = await session.run({ X: new ort.Tensor('float32', rows32, [CANDIDATES, FEATURES]) });
        return (result.score as { data: ArrayLike<number> }).data;
      },
    });
  }
  return { runners, sessions };
}

function maxDifference(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let max = 0;
  for (let i = 0; i < a.length; i++) max = Math.max(max, Math.abs((a[i] as number) - (b[i] as number)));
  return max;
}

/** Runs the models benchmark and returns its figures. */
export async function run(context: BenchContext): Promise<Record<string, unknown>> {
  const batches = context.quick ? 30 : 400;
  const warmup = context.quick ? 10 : 100;
  const loadBefore = loadavg()[0] ?? 0;
  console.log(
    `models: GBDT of ${TREES} full trees of depth ${DEPTH}, ${FEATURES} features, ` +
      `${CANDIDATES} candidates per batch (${MISSING_RATE * 100}% missing values), ${batches} batches per runner`,
  );
  if (loadBefore > 0.5)
    console.log(`warning: load average ${loadBefore.toFixed(2)} before start; figures will be noisy`);

  const generated = syntheticModel(TREES, DEPTH, FEATURES);
  const dir = mkdtempSync(join(tmpdir(), 'rankd-bench-models-'));
  let model: TreeEnsemble;
  const loadStart = performance.now();
  try {
    const path = join(dir, 'model.json');
    writeFileSync(path, generated.json);
    model = await loadGbdtModel(path);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const loadMs = performance.now() - loadStart;
  const rows = syntheticRows(CANDIDATES, FEATURES, MISSING_RATE);
  const rows32 = Float32Array.from(rows);
  const out = new Float64Array(CANDIDATES);
  const reference = Float64Array.from(model.predictMargin(rows, CANDIDATES, FEATURES));
  // The same trees in the general layout (the one deep LightGBM trees and categorical splits get).
  const pointer = parseGbdtModel(generated.json, 'synthetic', { layout: 'pointer' });
  const runners: Runner[] = [
    {
      name: `rankd TS (${model.layout} layout, 1 thread)`,
      score: () => model.predict(rows, CANDIDATES, FEATURES, out),
    },
    {
      name: 'rankd TS (pointer layout, 1 thread)',
      score: () => pointer.predict(rows, CANDIDATES, FEATURES, out),
    },
  ];
  const TS_RUNNERS = runners.length;

  const ort = await loadOnnxRuntime();
  const sessions: OrtSession[] = [];
  const agreement: Record<string, number> = {};
  if (typeof ort === 'string') {
    console.log(`onnxruntime: ${ort}`);
  } else {
    const onnx = onnxTreeEnsemble(generated);
    const built = await onnxRunners(ort, onnx, rows32);
    sessions.push(...built.sessions);
    runners.push(...built.runners);
  }

  try {
    for (const runner of runners) {
      for (let i = 0; i < warmup; i++) await runner.score();
      agreement[runner.name] = maxDifference(await runner.score(), reference);
    }
    // Round-robin so that every runner sees the same machine noise.
    const latencies = runners.map(() => [] as number[]);
    for (let i = 0; i < batches; i++) {
      for (let r = 0; r < runners.length; r++) {
        const which = (r + i) % runners.length;
        const runner = runners[which] as Runner;
        const start = performance.now();
        await runner.score();
        latencies[which]?.push(performance.now() - start);
      }
    }
    // CPU (all of this process's threads: onnxruntime's pool included), each
    // runner alone after a pause in which onnxruntime's threads stop spinning. It moves much less
    // than wall time when other work shares the machine.
    const cpuBatches = Math.max(20, Math.round(batches / 4));
    const cpu: number[] = [];
    for (const runner of runners) {
      await sleep(200);
      const cpuStart = process.cpuUsage();
      for (let i = 0; i < cpuBatches; i++) await runner.score();
      const used = process.cpuUsage(cpuStart);
      cpu.push((used.user + used.system) / 1000 / cpuBatches);
    }
    const figures = runners.map((runner, r) => {
      const sorted = [...(latencies[r] as number[])].sort((a, b) => a - b);
      const p50 = percentile(sorted, 50);
      return {
        runner: runner.name,
        p50Ms: round(p50),
        p99Ms: round(percentile(sorted, 99)),
        minMs: round(sorted[0] ?? Number.NaN),
        cpuMsPerBatch: round(cpu[r] as number),
        candidatesPerSec: Math.round((CANDIDATES / p50) * 1000),
        maxAbsDifferenceFromTs: agreement[runner.name],
      };
    });
    console.log(
      formatTable(
        ['runner', 'p50 ms', 'p99 ms', 'min ms', 'CPU ms/batch', 'candidates/s at p50', 'max |Δ| vs TS'],
        figures.map((f) => [
          f.runner,
          f.p50Ms.toFixed(2),
          f.p99Ms.toFixed(2),
          f.minMs.toFixed(2),
          f.cpuMsPerBatch.toFixed(2),
          f.candidatesPerSec.toLocaleString('en-US'),
          (f.maxAbsDifferenceFromTs ?? 0).toExponential(1),
        ]),
      ),
    );
    // The goal is checked on what gbdtModel runs: the layout it chose, on the calling thread.
    const ts = figures[0];
    const ortBest = figures
      .slice(TS_RUNNERS)
      .reduce((best, f) => Math.min(best, f.p50Ms), Number.POSITIVE_INFINITY);
    const ratio = ts && Number.isFinite(ortBest) ? ts.p50Ms / ortBest : undefined;
    console.log(
      `load (read + parse + flatten): ${loadMs.toFixed(0)} ms; ` +
        `goal p50 ≤ ${GOAL_P50_MS} ms: ${ts && ts.p50Ms <= GOAL_P50_MS ? 'met' : 'NOT met'}; ` +
        (ratio === undefined
          ? 'ratio to onnxruntime: not measured'
          : `TS p50 / best onnxruntime p50 = ${ratio.toFixed(2)} (goal ≤ ${GOAL_RATIO}: ${ratio <= GOAL_RATIO ? 'met' : 'NOT met'})`),
    );
    const loadAfter = loadavg()[0] ?? 0;
    console.log(`load average (1 min) ${loadBefore.toFixed(2)} before, ${loadAfter.toFixed(2)} after`);
    return {
      trees: TREES,
      depth: DEPTH,
      features: FEATURES,
      candidates: CANDIDATES,
      batches,
      layout: model.layout,
      loadMs: round(loadMs),
      onnxruntime: typeof ort === 'string' ? ort : 'measured',
      figures,
      ratioToOnnxruntime: ratio === undefined ? null : round(ratio),
      loadAverage: { before: loadBefore, after: loadAfter },
    };
  } finally {
    for (const session of sessions) await session.release?.();
  }
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}
