/**
 * `node --import tsx scripts/shop-trials.ts --seeds 1-20 --eta 1 [--requests 3000] [--fresh 1500]
 * [--out results.jsonl] [--curve-only]`: the simulated shop (scripts/shop/) over many seeds, to measure what one
 * run cannot: how close the position-bias estimate comes to the shoppers' true curve, what
 * debiased training is worth against the hidden utility, and how often the promotion gate is
 * wrong, both ways. Each seed: log the requests under the hand-weighted model; `rankd train`
 * (debiased) and `rankd train --no-debias`; two worse models made from the debiased one (leaves
 * negated; half its trees' leaves shuffled); each judged by the gate (`rankd train`'s exit code,
 * `rankd evaluate --model` on the held-out requests), then forced in and measured on fresh
 * visits (NDCG@8 against the hidden utility). Last, with the debiased model serving, `rankd
 * evaluate` of the naive one against it. Prints a line per seed and the tables of
 * docs/reference/performance.md. CPU-heavy: run it with `nice -n 10`. Needs `npm run build`.
 */
import { appendFileSync, copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { seededRandom } from '../src/training/random.js';
import { addShuffledTrees, negateLeaves } from './shop/model-edits.js';
import { type CommandRun, type ModelFigures, ShopSession } from './shop/session.js';

/** One candidate model in one seed: what the gate said, and the truth. */
export interface CandidateTrial {
  /** debiased, naive, negated, noisy (against the hand-weighted model); naive-vs-debiased. */
  name: string;
  /** The gate's exit code: 0 better, 3 not better. */
  exitCode: number;
  /** The gate's estimate of the difference and its interval. */
  estimate: { difference: number; low: number; high: number } | undefined;
  /** NDCG@8 against the hidden utility: the candidate's minus the model serving when it was judged. */
  trueDifference: number;
  /** Standard error of that difference (paired over the fresh visits). */
  trueError: number;
}

/** One seed's results. */
export interface SeedTrial {
  seed: number;
  eta: number;
  hand: number;
  debiased: number;
  naive: number;
  /** Estimated curve at positions 1..8, and its largest relative error at positions 2..8. */
  curve: number[] | null;
  curveError: number;
  /** Would the old gate (NDCG of the clicks as logged, trained > serving) have promoted the debiased model? */
  oldGatePromotes: boolean;
  candidates: CandidateTrial[];
}

/** The candidates of each seed, in the order of the tables. */
const CANDIDATES = [
  'debiased',
  'naive',
  'noisy',
  'negated',
  'debiased-vs-naive',
  'naive-vs-debiased',
  'noisy-vs-debiased',
];

/** Mean and standard error of the paired differences of two models' per-visit NDCG. */
function pairedDifference(a: ModelFigures, b: ModelFigures): { mean: number; error: number } {
  const d = a.perVisit.map((x, i) => x - (b.perVisit[i] as number));
  const mean = d.reduce((s, x) => s + x, 0) / d.length;
  const variance = d.reduce((s, x) => s + (x - mean) ** 2, 0) / (d.length - 1);
  return { mean, error: Math.sqrt(variance / d.length) };
}

/** The gate's numbers from `rankd train`'s report or `rankd evaluate`'s line. */
function estimateOf(run: CommandRun): CandidateTrial['estimate'] {
  const match = run.stdout.match(/difference ([+-][\d.]+), \d+% interval ([+-][\d.]+) to ([+-][\d.]+)/);
  if (match === null) return undefined;
  return { difference: Number(match[1]), low: Number(match[2]), high: Number(match[3]) };
}

/** Runs one seed; see the module's comment. */
export async function runSeed(
  seed: number,
  eta: number,
  options: { requests: number; fresh: number; keep?: string | undefined; log?: (line: string) => void },
): Promise<SeedTrial> {
  const log = options.log ?? (() => undefined);
  const random = seededRandom(seed);
  const session = await ShopSession.open({ seed, eta });
  try {
    const visits = session.shop.visits(options.requests, 'train', random);
    const heldOut = Math.round(options.requests * 0.8);
    const { marks, end } = await session.logVisits(visits, random, [heldOut]);
    const since = marks.get(heldOut) as string;
    const fresh = session.shop.visits(options.fresh, 'fresh', random);
    const window = ['--since', '1h', '--until', end, '--no-progress'];
    const debiasedRun = await session.cli(['train', ...window, '--out', 'models/debiased.json']);
    const naiveRun = await session.cli(['train', ...window, '--no-debias', '--out', 'models/naive.json']);
    for (const run of [debiasedRun, naiveRun])
      if (run.code !== 0 && run.code !== 3) throw new Error(`rankd train failed: ${run.stderr}`);
    const report = JSON.parse(session.read('models/debiased.report.json')) as {
      positionBias: { curve: number[] | null };
      ndcg: { trained: number; serving: number };
    };
    const dir = session.project;
    negateLeaves(join(dir, 'models/debiased.json'), join(dir, 'models/negated.json'));
    addShuffledTrees(join(dir, 'models/debiased.json'), join(dir, 'models/noisy.json'), seed);
    const evaluate = (file: string) =>
      session.cli(['evaluate', '--model', file, '--since', since, '--until', end, '--bias-since', '1h']);
    // Round 1, the hand-weighted model serving: each candidate judged, then forced in and measured.
    const negatedRun = await evaluate('models/negated.json');
    const noisyRun = await evaluate('models/noisy.json');
    const hand = await session.measure(fresh, 'hand');
    // Round 2, the debiased model serving: the naive and the noisy one judged against it.
    await session.install('models/debiased.json');
    const debiased = await session.measure(fresh, 'debiased');
    const naiveAgainstDebiased = await evaluate('models/naive.json');
    const noisyAgainstDebiased = await evaluate('models/noisy.json');
    // Round 3, the naive model serving: the debiased one judged against it.
    await session.install('models/naive.json');
    const naive = await session.measure(fresh, 'naive');
    const debiasedAgainstNaive = await evaluate('models/debiased.json');
    await session.install('models/negated.json');
    const negated = await session.measure(fresh, 'negated');
    await session.install('models/noisy.json');
    const noisy = await session.measure(fresh, 'noisy');
    if (options.keep !== undefined) {
      // For analysis: the logged rows, every model, and the truth measured.
      const keep = join(options.keep, `eta${eta}-seed${seed}`);
      mkdirSync(keep, { recursive: true });
      await session.cli([
        'events',
        'export',
        '--since',
        '1h',
        '--until',
        end,
        '--out',
        join(keep, 'rows.jsonl'),
        '--no-progress',
      ]);
      for (const name of ['debiased', 'naive', 'negated', 'noisy'])
        copyFileSync(join(dir, `models/${name}.json`), join(keep, `${name}.json`));
      writeFileSync(
        join(keep, 'truth.json'),
        JSON.stringify({ since, hand, debiased, naive, negated, noisy }),
      );
    }
    const candidate = (name: string, run: CommandRun, model: ModelFigures, serving: ModelFigures) => {
      const truth = pairedDifference(model, serving);
      return {
        name,
        exitCode: run.code,
        estimate: estimateOf(run),
        trueDifference: truth.mean,
        trueError: truth.error,
      };
    };
    const curve = report.positionBias.curve?.slice(0, 8) ?? null;
    const curveError = curveErrorOf(curve, session);
    const trial: SeedTrial = {
      seed,
      eta,
      hand: hand.ndcg,
      debiased: debiased.ndcg,
      naive: naive.ndcg,
      curve,
      curveError,
      oldGatePromotes: report.ndcg.trained > report.ndcg.serving,
      candidates: [
        candidate('debiased', debiasedRun, debiased, hand),
        candidate('naive', naiveRun, naive, hand),
        candidate('negated', negatedRun, negated, hand),
        candidate('noisy', noisyRun, noisy, hand),
        candidate('naive-vs-debiased', naiveAgainstDebiased, naive, debiased),
        candidate('noisy-vs-debiased', noisyAgainstDebiased, noisy, debiased),
        candidate('debiased-vs-naive', debiasedAgainstNaive, debiased, naive),
      ],
    };
    log(
      `seed ${seed} η ${eta}: hand ${hand.ndcg.toFixed(3)} debiased ${debiased.ndcg.toFixed(3)} naive ${naive.ndcg.toFixed(3)} ` +
        `negated ${negated.ndcg.toFixed(3)} noisy ${noisy.ndcg.toFixed(3)}; curve ${curve?.map((x) => x.toFixed(2)).join(' ')} ` +
        `(max error ${(100 * curveError).toFixed(0)}%); gate ${trial.candidates.map((c) => `${c.name} ${c.exitCode === 0 ? 'promote' : 'refuse'} (true ${c.trueDifference >= 0 ? '+' : ''}${c.trueDifference.toFixed(3)})`).join(', ')}`,
    );
    return trial;
  } finally {
    await session.close();
  }
}

/** The largest relative error of an estimated curve at positions 2..8 against the shoppers' truth. */
function curveErrorOf(curve: readonly number[] | null, session: ShopSession): number {
  if (curve === null) return Number.NaN;
  return Math.max(...curve.slice(1, 8).map((x, i) => Math.abs(x / session.shoppers.examination(i + 1) - 1)));
}

/** `--curve-only`: one seed's position-bias estimate (`rankd train`'s), nothing else measured. */
export async function runCurveSeed(seed: number, eta: number, requests: number): Promise<SeedTrial> {
  const random = seededRandom(seed);
  const session = await ShopSession.open({ seed, eta });
  try {
    const { end } = await session.logVisits(session.shop.visits(requests, 'train', random), random);
    const run = await session.cli([
      'train',
      '--since',
      '1h',
      '--until',
      end,
      '--no-progress',
      '--trees',
      '1',
    ]);
    if (run.code !== 0 && run.code !== 3) throw new Error(`rankd train failed: ${run.stderr}`);
    const report = JSON.parse(session.read('models/ranker-candidate.report.json')) as {
      positionBias: { curve: number[] | null };
    };
    const curve = report.positionBias.curve?.slice(0, 8) ?? null;
    const nan = Number.NaN;
    return {
      seed,
      eta,
      hand: nan,
      debiased: nan,
      naive: nan,
      curve,
      curveError: curveErrorOf(curve, session),
      oldGatePromotes: false,
      candidates: [],
    };
  } finally {
    await session.close();
  }
}

/** The summary tables of a set of trials (markdown). */
export function summary(trials: readonly SeedTrial[]): string[] {
  const lines: string[] = [];
  const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
  const sd = (xs: number[]) =>
    Math.sqrt(xs.reduce((s, x) => s + (x - mean(xs)) ** 2, 0) / Math.max(1, xs.length - 1));
  for (const eta of [...new Set(trials.map((t) => t.eta))]) {
    const of = trials.filter((t) => t.eta === eta);
    const errors = of.map((t) => t.curveError).filter((x) => Number.isFinite(x));
    lines.push(`η = ${eta}, ${of.length} seeds`);
    lines.push(
      `curve: largest error at positions 2-8 ${(100 * Math.min(...errors)).toFixed(0)}-${(100 * Math.max(...errors)).toFixed(0)}% ` +
        `(median ${(100 * ([...errors].sort((a, b) => a - b)[Math.floor(errors.length / 2)] ?? Number.NaN)).toFixed(0)}%), ${of.length - errors.length} without an estimate`,
    );
    if (of.every((t) => t.candidates.length === 0)) {
      lines.push('');
      continue;
    }
    lines.push(
      `NDCG@8: hand ${mean(of.map((t) => t.hand)).toFixed(3)}, naive ${mean(of.map((t) => t.naive)).toFixed(3)}, ` +
        `debiased ${mean(of.map((t) => t.debiased)).toFixed(3)}; debiased − naive ${mean(of.map((t) => t.debiased - t.naive)).toFixed(4)} ` +
        `(sd ${sd(of.map((t) => t.debiased - t.naive)).toFixed(4)}, better in ${of.filter((t) => t.debiased > t.naive).length} of ${of.length})`,
    );
    lines.push(
      `old gate (NDCG of the clicks as logged) would promote the debiased model in ${of.filter((t) => t.oldGatePromotes).length} of ${of.length}`,
    );
    lines.push(
      '| candidate | judged against | truly better by ≥ 0.01: promoted | truly worse: promoted | in between | true difference (range) |',
    );
    lines.push('|---|---|---|---|---|---|');
    for (const name of CANDIDATES) {
      const cs = of.flatMap((t) => t.candidates.filter((c) => c.name === name));
      const better = cs.filter((c) => c.trueDifference >= 0.01);
      const worse = cs.filter((c) => c.trueDifference < 0);
      const between = cs.length - better.length - worse.length;
      const promoted = (list: CandidateTrial[]) => list.filter((c) => c.exitCode === 0).length;
      const diffs = cs.map((c) => c.trueDifference);
      lines.push(
        `| ${name.replace(/-vs-.*/, '')} | ${name.includes('-vs-') ? name.replace(/.*-vs-/, '') : 'hand-weighted'} | ${promoted(better)} of ${better.length} | ${promoted(worse)} of ${worse.length} | ${between} (${promoted(cs.filter((c) => c.trueDifference >= 0 && c.trueDifference < 0.01))} promoted) | ${Math.min(...diffs).toFixed(3)} to ${Math.max(...diffs).toFixed(3)} |`,
      );
    }
    lines.push('');
  }
  return lines;
}

/** Seeds from `1-20` or `1,3,5-7`. */
export function seedList(text: string): number[] {
  return text.split(',').flatMap((part) => {
    const [a, b] = part.split('-').map(Number);
    return b === undefined
      ? [a as number]
      : Array.from({ length: b - (a as number) + 1 }, (_, i) => (a as number) + i);
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      seeds: { type: 'string', default: '1-20' },
      eta: { type: 'string', default: '1' },
      requests: { type: 'string', default: '3000' },
      fresh: { type: 'string', default: '1500' },
      out: { type: 'string' },
      keep: { type: 'string' },
      'curve-only': { type: 'boolean' },
    },
  });
  const trials: SeedTrial[] = [];
  for (const eta of values.eta.split(',').map(Number))
    for (const seed of seedList(values.seeds)) {
      const trial = values['curve-only']
        ? await runCurveSeed(seed, eta, Number(values.requests))
        : await runSeed(seed, eta, {
            requests: Number(values.requests),
            fresh: Number(values.fresh),
            keep: values.keep,
            log: (line) => console.log(line),
          });
      if (values['curve-only'])
        console.log(
          `seed ${seed} η ${eta}: curve ${trial.curve?.map((x) => x.toFixed(3)).join(' ')} (max error ${(100 * trial.curveError).toFixed(0)}%)`,
        );
      trials.push(trial);
      if (values.out !== undefined) appendFileSync(values.out, `${JSON.stringify(trial)}\n`);
    }
  for (const line of summary(trials)) console.log(line);
}
