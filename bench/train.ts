/**
 * `npm run bench -- train`: rankd's LambdaMART trainer against XGBoost itself (Debian's
 * python3-xgboost, `rank:ndcg`, `tree_method=hist`, one thread) on the same synthetic data and the
 * same time split (the latest 20% of query groups for validation): validation NDCG@10 of each and
 * their ratio, training time of each and their ratio (the floor is XGBoost, measured in the same
 * run), and a check that the file rankd writes loads in XGBoost and in rankd's own evaluator and
 * gives rankd's predictions. Goals (not asserted): NDCG@10 within 1% of XGBoost's, time ≤ 3×.
 *
 * Both grow 300 trees of depth ≤ 6 with eta 0.1, λ 1 and 256 bins, and compute validation NDCG@10
 * after every tree; early stopping is off so both do the same work. Each keeps its own
 * minimum-leaf defaults (rankd: 20 rows; XGBoost: min_child_weight 1): their hessians are on
 * different scales, as XGBoost samples one pair per row where rankd uses every pair. Runs are
 * alternated (XGBoost, rankd, rankd, XGBoost) and each side's time is the mean of its two.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseGbdtModel } from '../src/models/gbdt/load-gbdt.js';
import type { RankingDataset } from '../src/training/dataset.js';
import { trainLambdaMart } from '../src/training/lambdamart.js';
import { ndcgAt } from '../src/training/ndcg.js';
import { splitByGroups } from '../src/training/split-dataset.js';
import type { TrainedModel } from '../src/training/trained-model.js';
import type { BenchContext } from './lib/benchmark.js';
import { announce, loadAverages } from './lib/run-setup.js';
import { formatTable } from './lib/table.js';
import { syntheticRankingData } from './train-data.js';

const PYTHON = '/usr/bin/python3';
const SCRIPT = fileURLToPath(new URL('./train-xgboost.py', import.meta.url));
const K = 10;
const GOAL_NDCG_RATIO = 0.99;
const GOAL_TIME_RATIO = 3;

interface Setup {
  rows: number;
  trees: number;
  maxDepth: number;
  eta: number;
  lambda: number;
  maxBins: number;
}

/** Why XGBoost cannot run here, or undefined when it can. */
function xgboostMissing(): string | undefined {
  const probe = spawnSync(PYTHON, ['-c', 'import xgboost'], { encoding: 'utf8' });
  if (probe.error) return `${PYTHON} cannot run (${probe.error.message})`;
  return probe.status === 0 ? undefined : `${PYTHON} cannot import xgboost (apt install python3-xgboost)`;
}

/** Writes one data set as the float32 / uint32 files the Python side reads. */
function writeDataset(dir: string, name: string, data: RankingDataset): void {
  writeFileSync(join(dir, `${name}-values.f32`), new Float32Array(data.values));
  writeFileSync(join(dir, `${name}-labels.f32`), new Float32Array(data.labels));
  writeFileSync(join(dir, `${name}-groups.u32`), new Uint32Array(data.groups));
}

function runPython(
  dir: string,
  mode: 'train' | 'load',
): { version: string; seconds?: number; reported_ndcg?: number[] } {
  const run = spawnSync(PYTHON, [SCRIPT, dir, mode], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (run.status !== 0) throw new Error(`XGBoost (${mode}) failed: ${run.stderr || run.error?.message}`);
  const last = run.stdout.trim().split('\n').at(-1) ?? '';
  return JSON.parse(last);
}

function readFloats(path: string): Float32Array {
  const bytes = readFileSync(path);
  return new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
}

function maxAbsDifference(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let max = 0;
  for (let i = 0; i < a.length; i++) max = Math.max(max, Math.abs((a[i] as number) - (b[i] as number)));
  return a.length === b.length ? max : Number.POSITIVE_INFINITY;
}

const mean = (values: number[]) => values.reduce((sum, v) => sum + v, 0) / values.length;

export async function run(context: BenchContext): Promise<Record<string, unknown>> {
  const setup: Setup = context.quick
    ? { rows: 10_000, trees: 30, maxDepth: 6, eta: 0.1, lambda: 1, maxBins: 256 }
    : { rows: 100_000, trees: 300, maxDepth: 6, eta: 0.1, lambda: 1, maxBins: 256 };
  const loadBefore = announce(
    `train: LambdaMART on ≥${setup.rows.toLocaleString('en-US')} synthetic rows × 24 features, ${setup.trees} trees of depth ≤ ${setup.maxDepth}: rankd vs XGBoost rank:ndcg (hist, 1 thread)`,
  );
  const data = syntheticRankingData(setup.rows);
  // XGBoost reads float32; rankd compares float32 too, so both see exactly these values.
  for (let i = 0; i < data.values.length; i++) data.values[i] = Math.fround(data.values[i] as number);
  const { train, validation } = splitByGroups(data, 0.2);
  console.log(
    `data: ${data.rows} rows in ${data.groups.length} groups; training ${train.rows} rows (${train.groups.length} groups), validation ${validation.rows} rows (${validation.groups.length} groups)`,
  );
  const dir = mkdtempSync(join(tmpdir(), 'rankd-bench-train-'));
  try {
    writeDataset(dir, 'train', train);
    writeDataset(dir, 'valid', validation);
    writeFileSync(
      join(dir, 'meta.json'),
      JSON.stringify({
        feature_names: data.features,
        trees: setup.trees,
        max_depth: setup.maxDepth,
        eta: setup.eta,
        lambda: setup.lambda,
        max_bin: setup.maxBins,
        k: K,
      }),
    );
    const missing = xgboostMissing();
    if (missing) console.log(`XGBoost skipped: ${missing}`);
    const xgboostSeconds: number[] = [];
    const rankdSeconds: number[] = [];
    let xgboostVersion = '';
    let xgboostReported: number[] = [];
    let model: TrainedModel | undefined;
    const runXgboost = () => {
      if (missing) return;
      const result = runPython(dir, 'train');
      xgboostSeconds.push(result.seconds ?? Number.NaN);
      xgboostVersion = result.version;
      xgboostReported = result.reported_ndcg ?? [];
      console.log(`  xgboost run: ${(result.seconds ?? Number.NaN).toFixed(2)} s`);
    };
    const runRankd = () => {
      const started = performance.now();
      model = trainLambdaMart(
        train,
        {
          trees: setup.trees,
          learningRate: setup.eta,
          maxDepth: setup.maxDepth,
          lambdaL2: setup.lambda,
          maxBins: setup.maxBins,
          earlyStoppingRounds: 0,
          ndcgAt: K,
        },
        validation,
      );
      rankdSeconds.push((performance.now() - started) / 1000);
      console.log(`  rankd run:   ${(rankdSeconds.at(-1) as number).toFixed(2)} s`);
    };
    // Alternated, so a change in the machine's load weighs on both sides alike.
    const order = context.quick ? [runXgboost, runRankd] : [runXgboost, runRankd, runRankd, runXgboost];
    for (const step of order) step();
    const trained = model as TrainedModel;
    const rankdValid = trained.predict(validation.values, validation.rows);
    const rankdNdcg = ndcgAt(rankdValid, validation.labels, validation.groups, K);
    const rankdBest = trained.history.reduce((best, h) => Math.max(best, h.validNdcg ?? 0), 0);
    const text = trained.toXGBoostJsonText();
    writeFileSync(join(dir, 'rankd-model.json'), text);
    const inEvaluator = parseGbdtModel(text, 'rankd-model.json').predict(
      validation.values,
      validation.rows,
      data.features.length,
    );
    const evaluatorDifference = maxAbsDifference(rankdValid, inEvaluator);
    let xgboostNdcg = Number.NaN;
    let xgboostFileDifference = Number.NaN;
    if (!missing) {
      xgboostNdcg = ndcgAt(
        readFloats(join(dir, 'xgboost-valid.f32')),
        validation.labels,
        validation.groups,
        K,
      );
      runPython(dir, 'load');
      xgboostFileDifference = maxAbsDifference(
        rankdValid,
        readFloats(join(dir, 'rankd-in-xgboost-valid.f32')),
      );
    }
    const xgboostBest = xgboostReported.reduce((best, v) => Math.max(best, v), 0);
    const rankdTime = mean(rankdSeconds);
    const xgboostTime = mean(xgboostSeconds);
    const ndcgRatio = rankdNdcg / xgboostNdcg;
    const timeRatio = rankdTime / xgboostTime;
    console.log('');
    console.log(
      formatTable(
        ['trainer', `valid NDCG@${K}`, 'best round', 'train s', 'runs'],
        [
          [
            `xgboost ${xgboostVersion}`.trim(),
            xgboostNdcg.toFixed(4),
            xgboostBest.toFixed(4),
            xgboostTime.toFixed(2),
            xgboostSeconds.map((s) => s.toFixed(2)).join(', '),
          ],
          [
            'rankd',
            rankdNdcg.toFixed(4),
            rankdBest.toFixed(4),
            rankdTime.toFixed(2),
            rankdSeconds.map((s) => s.toFixed(2)).join(', '),
          ],
          ['rankd ÷ xgboost', ndcgRatio.toFixed(4), '', `${timeRatio.toFixed(2)}×`, ''],
        ],
      ),
    );
    console.log(
      `goals: NDCG@${K} ratio ≥ ${GOAL_NDCG_RATIO} (${ndcgRatio >= GOAL_NDCG_RATIO ? 'met' : 'missed'}), time ≤ ${GOAL_TIME_RATIO}× (${timeRatio <= GOAL_TIME_RATIO ? 'met' : 'missed'})`,
    );
    console.log(
      `rankd's file: max |Δ| vs in-memory predictions: rankd's evaluator ${evaluatorDifference.toExponential(2)}, XGBoost ${
        missing ? 'skipped' : xgboostFileDifference.toExponential(2)
      } (XGBoost's "best round" is its own ndcg@${K} metric; "best round" = the best validation NDCG over the rounds)`,
    );
    if (!(evaluatorDifference <= 1e-6) || (!missing && !(xgboostFileDifference <= 1e-6))) {
      throw new Error("rankd's model file does not give rankd's predictions");
    }
    return {
      setup: { ...setup, rowsActual: data.rows, groups: data.groups.length, features: data.features.length },
      xgboost: missing
        ? { skipped: missing }
        : {
            version: xgboostVersion,
            validNdcg: xgboostNdcg,
            bestRoundNdcg: xgboostBest,
            seconds: xgboostSeconds,
          },
      rankd: {
        validNdcg: rankdNdcg,
        bestRoundNdcg: rankdBest,
        seconds: rankdSeconds,
        trees: trained.trees.length,
      },
      ratios: { ndcg: ndcgRatio, time: timeRatio },
      fileCheck: { evaluatorMaxDiff: evaluatorDifference, xgboostMaxDiff: xgboostFileDifference },
      load: loadAverages(loadBefore),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
