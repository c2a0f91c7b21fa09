/**
 * `node --import tsx scripts/shop-sensitivity.ts [--seeds 1-20] [--effect 0.02] [--impressions 40000]
 * [--correlation 0.5] [--eta 1]`: how many impressions team-draft interleaving and a 50/50 A/B
 * test on clicks per page need to detect the same true NDCG@8 improvement, in the simulated shop
 * (scripts/shop/). Its hidden shoppers click as they do against rankd (position bias
 * 1/(k+1)^η, clicks following the hidden utility); the two rankers are made here, from that
 * utility, so that the challenger is better by exactly `--effect`: each scores a product by its
 * utility plus Gaussian noise fixed per ranker, visit and product (the rankers' noises correlated
 * by `--correlation`: two models trained on the same data agree on much), the control's noise set
 * for an NDCG@8 near a trained model's (0.76), the challenger's found by bisection. The merge is
 * rankd's own team draft (src/experiments/team-draft.ts) with its click crediting rule (a page is a
 * win for the ranker whose items got more clicks); the statistics are the ones of
 * `rankd experiment report` and `rankd promotion decide`. Nothing of rankd reads the utility.
 *
 * Per seed: the true NDCG change, paired over fresh visits; the per-impression effect and variance
 * of each method, from `--impressions` visits each; the impressions each needs for a two-sided
 * test at 95% confidence with 80% power (interleaving: the mean page outcome, win +1 / loss −1 /
 * else 0, against 0; A/B: the difference of mean clicks per page of two arms, each shown half the
 * impressions); and the impressions the mSPRT of `rankd promotion decide` took to decide, the
 * interleaved pages taken as one stream in order. Prints a line per seed, then the medians and the ratio.
 */
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { sequentialTest } from '../src/experiments/sequential-test.js';
import { teamDraft } from '../src/experiments/team-draft.js';
import { seededRandom } from '../src/training/random.js';
import { createShop } from './shop/catalogue.js';
import { type HiddenProduct, PAGE, Shoppers, type Visit } from './shop/shoppers.js';
import { seedList } from './shop-trials.js';

/** z of a two-sided 95% test, and of 80% power. */
const Z_ALPHA = 1.959963984540054;
const Z_POWER = 0.8416212335729143;
/** The control's NDCG@8 aimed at: about what `rankd train` reaches in the shop (docs/reference/performance.md). */
const CONTROL_NDCG = 0.76;

/** What one seed measured. */
export interface SensitivityTrial {
  seed: number;
  /** NDCG@8 of each ranker on fresh visits, and the paired difference with its standard error. */
  control: number;
  challenger: number;
  trueDifference: number;
  trueError: number;
  /** Interleaving: mean page outcome (win +1, loss −1) and its variance; impressions needed. */
  interleaving: {
    mean: number;
    variance: number;
    needed: number;
    /** Pages the sequential test took to decide, and what it decided. */
    sequential: number | undefined;
    sequentialDecision: string;
  };
  /** A/B: mean clicks per page of each arm, their variances; impressions needed (both arms). */
  ab: { control: number; challenger: number; variance: number; needed: number };
}

function normal(random: () => number): number {
  return Math.sqrt(-2 * Math.log(Math.max(1e-12, random()))) * Math.cos(2 * Math.PI * random());
}

/** A visit with each candidate's utility and the two rankers' standard noises (correlated by ρ). */
interface Scored {
  readonly visit: Visit;
  readonly utility: Float64Array;
  readonly noiseControl: Float64Array;
  readonly noiseChallenger: Float64Array;
}

function scoredVisits(shoppers: Shoppers, visits: readonly Visit[], rho: number, random: () => number) {
  return visits.map((visit): Scored => {
    const n = visit.candidates.length;
    const utility = Float64Array.from(visit.candidates, (p) =>
      shoppers.utility(p, visit.query, visit.shopper),
    );
    const noiseControl = new Float64Array(n);
    const noiseChallenger = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      const shared = normal(random);
      noiseControl[i] = shared;
      noiseChallenger[i] = rho * shared + Math.sqrt(1 - rho * rho) * normal(random);
    }
    return { visit, utility, noiseControl, noiseChallenger };
  });
}

/** The ranker's full order of the visit's candidates: utility + σ × its noise, descending. */
function ranking(scored: Scored, sigma: number, noise: Float64Array): HiddenProduct[] {
  const order = [...scored.visit.candidates.keys()];
  const score = (i: number) => (scored.utility[i] as number) + sigma * (noise[i] as number);
  order.sort((a, b) => score(b) - score(a));
  return order.map((i) => scored.visit.candidates[i] as HiddenProduct);
}

function meanNdcg(
  shoppers: Shoppers,
  visits: readonly Scored[],
  sigma: number,
  noise: (s: Scored) => Float64Array,
) {
  let sum = 0;
  for (const s of visits) sum += shoppers.ndcg(ranking(s, sigma, noise(s)).slice(0, PAGE), s.visit);
  return sum / visits.length;
}

/** The σ whose mean NDCG@8 on `visits` is `target` (NDCG falls as σ grows), by bisection. */
function sigmaFor(target: number, ndcgOf: (sigma: number) => number): number {
  let low = 0;
  let high = 20;
  for (let i = 0; i < 16; i++) {
    const mid = (low + high) / 2;
    if (ndcgOf(mid) > target) low = mid;
    else high = mid;
  }
  return (low + high) / 2;
}

const meanOf = (xs: readonly number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
const varianceOf = (xs: readonly number[]) => {
  const m = meanOf(xs);
  return xs.reduce((s, x) => s + (x - m) ** 2, 0) / (xs.length - 1);
};

/** Runs one seed; see the module's comment. */
export function runSensitivitySeed(
  seed: number,
  options: { effect: number; impressions: number; correlation: number; eta: number },
): SensitivityTrial {
  const shop = createShop(seed);
  const shoppers = new Shoppers(seed, options.eta);
  const random = seededRandom(seed * 1_000_003 + 11);
  const visitsOf = (count: number, prefix: string) =>
    scoredVisits(shoppers, shop.visits(count, prefix, random), options.correlation, random);
  // Calibration: the control near a trained model's NDCG, the challenger better by the effect.
  const calibration = visitsOf(3000, 'calibrate');
  const sigmaControl = sigmaFor(CONTROL_NDCG, (s) =>
    meanNdcg(shoppers, calibration, s, (v) => v.noiseControl),
  );
  const controlLevel = meanNdcg(shoppers, calibration, sigmaControl, (v) => v.noiseControl);
  const sigmaChallenger = sigmaFor(controlLevel + options.effect, (s) =>
    meanNdcg(shoppers, calibration, s, (v) => v.noiseChallenger),
  );
  const pages = (s: Scored) => ({
    control: ranking(s, sigmaControl, s.noiseControl),
    challenger: ranking(s, sigmaChallenger, s.noiseChallenger),
  });

  // The truth, on fresh visits: paired NDCG@8 difference.
  const truth = visitsOf(5000, 'truth').map((s) => {
    const { control, challenger } = pages(s);
    return [
      shoppers.ndcg(control.slice(0, PAGE), s.visit),
      shoppers.ndcg(challenger.slice(0, PAGE), s.visit),
    ];
  });
  const differences = truth.map(([c, h]) => (h as number) - (c as number));

  // Interleaving: each visit's page merged by team draft, clicks credited to the ranker that placed the item.
  const clicks = seededRandom(seed * 31 + 5);
  const interleavedOutcome = (s: Scored) => {
    const { control, challenger } = pages(s);
    const merged = teamDraft(control, challenger, (p) => p.id, clicks).slice(0, PAGE);
    const teamOf = new Map(merged.map((m) => [m.item.id, m.team]));
    let byControl = 0;
    let byChallenger = 0;
    for (const r of shoppers.react(
      merged.map((m) => m.item),
      s.visit,
      clicks,
    )) {
      if (r.type !== 'click') continue;
      if (teamOf.get(r.productId) === 'control') byControl += 1;
      else byChallenger += 1;
    }
    return Math.sign(byChallenger - byControl);
  };
  const outcomes = visitsOf(options.impressions, 'interleave').map(interleavedOutcome);
  const iMean = meanOf(outcomes);
  const iVariance = varianceOf(outcomes);

  // A/B: both arms' pages on the same visits (the same click draws: a sharper estimate of the
  // difference); each arm's variance as a real A/B test sees it.
  const clicksOn = (page: readonly HiddenProduct[], visit: Visit, draws: () => number) =>
    shoppers.react(page.slice(0, PAGE), visit, draws).filter((r) => r.type === 'click').length;
  const armControl: number[] = [];
  const armChallenger: number[] = [];
  for (const s of visitsOf(options.impressions, 'ab')) {
    const { control, challenger } = pages(s);
    const draw = Math.floor(clicks() * 2 ** 31);
    armControl.push(clicksOn(control, s.visit, seededRandom(draw)));
    armChallenger.push(clicksOn(challenger, s.visit, seededRandom(draw)));
  }
  const abDelta = meanOf(armChallenger) - meanOf(armControl);
  const abVariance = (varianceOf(armControl) + varianceOf(armChallenger)) / 2;

  // The interleaved pages above as one stream, looked at after each page with the sequential test.
  let wins = 0;
  let losses = 0;
  let sequential: number | undefined;
  let sequentialDecision = 'undecided';
  for (const [i, outcome] of outcomes.entries()) {
    if (outcome === 0) continue;
    if (outcome > 0) wins += 1;
    else losses += 1;
    sequentialDecision = sequentialTest(wins, losses).decision;
    if (sequentialDecision === 'undecided') continue;
    sequential = i + 1;
    break;
  }

  const z2 = (Z_ALPHA + Z_POWER) ** 2;
  return {
    seed,
    control: meanOf(truth.map(([c]) => c as number)),
    challenger: meanOf(truth.map(([, h]) => h as number)),
    trueDifference: meanOf(differences),
    trueError: Math.sqrt(varianceOf(differences) / differences.length),
    interleaving: {
      mean: iMean,
      variance: iVariance,
      needed: (z2 * iVariance) / iMean ** 2,
      sequential,
      sequentialDecision,
    },
    ab: {
      control: meanOf(armControl),
      challenger: meanOf(armChallenger),
      variance: abVariance,
      // Two arms of n each: the difference of their means has variance 2σ²/n; the total is 2n.
      needed: (2 * (z2 * 2 * abVariance)) / abDelta ** 2,
    },
  };
}

const median = (xs: readonly number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};

const round = (x: number) => Math.round(x).toLocaleString('en-US');

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      seeds: { type: 'string', default: '1-20' },
      effect: { type: 'string', default: '0.02' },
      impressions: { type: 'string', default: '40000' },
      correlation: { type: 'string', default: '0.5' },
      eta: { type: 'string', default: '1' },
    },
  });
  const options = {
    effect: Number(values.effect),
    impressions: Number(values.impressions),
    correlation: Number(values.correlation),
    eta: Number(values.eta),
  };
  const trials: SensitivityTrial[] = [];
  for (const seed of seedList(values.seeds)) {
    const t = runSensitivitySeed(seed, options);
    trials.push(t);
    console.log(
      `seed ${t.seed}: NDCG@8 ${t.control.toFixed(3)} → ${t.challenger.toFixed(3)} (true change ${t.trueDifference >= 0 ? '+' : ''}${t.trueDifference.toFixed(4)} ± ${t.trueError.toFixed(4)}); ` +
        `interleaving: outcome ${t.interleaving.mean.toFixed(4)} (variance ${t.interleaving.variance.toFixed(3)}), needs ${round(t.interleaving.needed)}, ` +
        `mSPRT: ${t.interleaving.sequential === undefined ? `undecided after ${round(options.impressions)}` : `${t.interleaving.sequentialDecision} after ${round(t.interleaving.sequential)}`}; ` +
        `A/B: clicks per page ${t.ab.control.toFixed(4)} → ${t.ab.challenger.toFixed(4)} (variance ${t.ab.variance.toFixed(3)}), needs ${round(t.ab.needed)}`,
    );
  }
  const interleaving = median(trials.map((t) => t.interleaving.needed));
  const ab = median(trials.map((t) => t.ab.needed));
  const decided = trials.flatMap((t) =>
    t.interleaving.sequential === undefined ? [] : [t.interleaving.sequential],
  );
  const wrong = trials.filter((t) => t.interleaving.sequentialDecision === 'challenger_loses').length;
  console.log(
    `median true NDCG@8 change ${median(trials.map((t) => t.trueDifference)).toFixed(4)} over ${trials.length} seeds ` +
      `(correlation ${options.correlation}, η ${options.eta})`,
  );
  console.log(
    `impressions needed (95% confidence, 80% power), median: interleaving ${round(interleaving)}, A/B ${round(ab)}; ratio ${(ab / interleaving).toFixed(1)}×`,
  );
  console.log(
    `mSPRT (rankd promotion decide): decided in ${decided.length} of ${trials.length} seeds (${wrong} against the challenger), median ${decided.length === 0 ? '-' : round(median(decided))} interleaved pages`,
  );
}
