import { TrainingInputError } from '../errors/index.js';
import { discounts } from './ndcg.js';
import { seededRandom } from './random.js';

/**
 * Two rankers' scores for the same logged pages, and what users did on them: what
 * {@link compareCounterfactually} compares.
 */
export interface LoggedPages {
  /** Rows per page (request), in order; they add up to the rows. */
  readonly groups: ArrayLike<number>;
  /** Each row's gain: 2^label − 1 of its feedback (0 without). */
  readonly gains: ArrayLike<number>;
  /** Each row's inverse examination propensity at the position it was shown (1: uncorrected). */
  readonly weights: ArrayLike<number>;
  readonly candidate: ArrayLike<number>;
  readonly serving: ArrayLike<number>;
}

/** How {@link compareCounterfactually} decides. */
export interface ComparisonOptions {
  /** The confidence of the interval. @defaultValue 0.95 */
  readonly confidence?: number;
  /** Bootstrap resamples of the pages. @defaultValue 2000 */
  readonly resamples?: number;
  /** Seeds the resampling: the same pages give the same interval. @defaultValue 0 */
  readonly seed?: number;
}

/** `better`: the interval lies above 0; `worse`: below; `inconclusive`: it holds 0. */
export type ComparisonVerdict = 'better' | 'worse' | 'inconclusive';

/** What the comparison found. */
export interface ComparisonResult {
  /** The candidate's position-corrected DCG share (below): between 0 and 1. */
  readonly candidate: number;
  readonly serving: number;
  /** candidate − serving. */
  readonly difference: number;
  /** The bootstrap percentile interval of the difference, at {@link confidence}. */
  readonly interval: readonly [number, number];
  readonly confidence: number;
  /** Pages compared, and those with feedback (the others weigh nothing). */
  readonly pages: number;
  readonly pagesWithFeedback: number;
  readonly verdict: ComparisonVerdict;
}

/**
 * Each row's DCG discount 1/log2(rank + 2) when `scores` re-rank its page, rows of equal score
 * sharing the mean of their ranks' discounts (no order of arrival is credited).
 */
function rerankedDiscounts(scores: ArrayLike<number>, groups: ArrayLike<number>): Float64Array {
  const out = new Float64Array(scores.length);
  let largest = 0;
  for (let g = 0; g < groups.length; g++) largest = Math.max(largest, groups[g] as number);
  const discount = discounts(largest);
  const value = (r: number) => {
    const s = scores[r] as number;
    return Number.isNaN(s) ? Number.NEGATIVE_INFINITY : s;
  };
  let start = 0;
  for (let g = 0; g < groups.length; g++) {
    const count = groups[g] as number;
    const order = Array.from({ length: count }, (_, i) => start + i).sort((a, b) => value(b) - value(a));
    for (let i = 0; i < count; ) {
      let end = i + 1;
      while (end < count && value(order[end] as number) === value(order[i] as number)) end++;
      let sum = 0;
      for (let j = i; j < end; j++) sum += discount[j] as number;
      for (let j = i; j < end; j++) out[order[j] as number] = sum / (end - i);
      i = end;
    }
    start += count;
  }
  return out;
}

/**
 * Compares two rankers on logged pages, position-corrected: each re-ranks every page from what
 * was logged, and gets the self-normalised inverse-propensity estimate (SNIPS) of its DCG share,
 *
 *   V = Σ_pages Σ_rows w·g·d(rank) / Σ_pages Σ_rows w·g,
 *
 * g a row's gain, w the inverse of its examination propensity where it was shown, d the DCG
 * discount of the rank the ranker gives it: the share of the best discount that the ranker gives
 * to what users chose, each choice counted as often as users would have made it had they looked
 * everywhere. The difference's interval comes from resampling whole pages (the bootstrap, both
 * rankers on the same resample: a paired difference). The verdict is `better` only when the
 * whole interval lies above 0. Throws a {@link TrainingInputError} when no page got feedback.
 */
export function compareCounterfactually(
  pages: LoggedPages,
  options: ComparisonOptions = {},
): ComparisonResult {
  const confidence = options.confidence ?? 0.95;
  const resamples = options.resamples ?? 2000;
  const { groups, gains, weights } = pages;
  const candidateDiscount = rerankedDiscounts(pages.candidate, groups);
  const servingDiscount = rerankedDiscounts(pages.serving, groups);
  const count = groups.length;
  // Per page: the weighted gain (denominator) and each ranker's weighted discounted gain.
  const mass = new Float64Array(count);
  const candidateSum = new Float64Array(count);
  const servingSum = new Float64Array(count);
  let start = 0;
  let withFeedback = 0;
  for (let g = 0; g < count; g++) {
    const rows = groups[g] as number;
    for (let r = start; r < start + rows; r++) {
      const weighted = (gains[r] as number) * (weights[r] as number);
      if (weighted === 0) continue;
      mass[g] = (mass[g] as number) + weighted;
      candidateSum[g] = (candidateSum[g] as number) + weighted * (candidateDiscount[r] as number);
      servingSum[g] = (servingSum[g] as number) + weighted * (servingDiscount[r] as number);
    }
    if ((mass[g] as number) > 0) withFeedback++;
    start += rows;
  }
  const total = (values: Float64Array) => values.reduce((s, v) => s + v, 0);
  const massTotal = total(mass);
  if (!(massTotal > 0))
    throw new TrainingInputError(`none of the ${count} pages compared got feedback: nothing to compare on`);
  const candidate = total(candidateSum) / massTotal;
  const serving = total(servingSum) / massTotal;
  const differences = new Float64Array(resamples);
  const random = seededRandom(options.seed ?? 0);
  for (let b = 0; b < resamples; b++) {
    let m = 0;
    let d = 0;
    for (let i = 0; i < count; i++) {
      const g = Math.floor(random() * count);
      m += mass[g] as number;
      d += (candidateSum[g] as number) - (servingSum[g] as number);
    }
    differences[b] = m > 0 ? d / m : 0;
  }
  differences.sort();
  const tail = (1 - confidence) / 2;
  const at = (q: number) =>
    differences[Math.min(resamples - 1, Math.max(0, Math.floor(q * resamples)))] as number;
  const interval = [at(tail), at(1 - tail)] as const;
  return {
    candidate,
    serving,
    difference: candidate - serving,
    interval,
    confidence,
    pages: count,
    pagesWithFeedback: withFeedback,
    verdict: interval[0] > 0 ? 'better' : interval[1] < 0 ? 'worse' : 'inconclusive',
  };
}
