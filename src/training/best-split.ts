import type { FeatureBins } from './bins.js';
import type { Histogram } from './histogram.js';

/** The best split found for a node, or `gain` 0 when none is allowed. */
export interface SplitChoice {
  gain: number;
  feature: number;
  /** The last value bin sent left. */
  bin: number;
  threshold: number;
  defaultLeft: boolean;
  leftGrad: number;
  leftHess: number;
  leftCount: number;
}

/** What a split must respect. */
export interface SplitRules {
  readonly lambdaL2: number;
  readonly minDataInLeaf: number;
  readonly minSumHessian: number;
}

/** XGBoost's smallest loss reduction worth a split (`kRtEps`). */
const MIN_GAIN = 1e-6;

/**
 * Scans the active features' histograms for the split with the largest loss reduction
 * G_L²/(H_L+λ) + G_R²/(H_R+λ) − G²/(H+λ), trying the missing values on each side (XGBoost's
 * learned default direction). Ties keep the first feature and the lowest bin, so the same data
 * always gives the same tree.
 */
export function bestSplit(
  hist: Histogram,
  binned: FeatureBins,
  active: Int32Array,
  activeCount: number,
  totalGrad: number,
  totalHess: number,
  totalCount: number,
  rules: SplitRules,
): SplitChoice {
  const { lambdaL2, minDataInLeaf, minSumHessian } = rules;
  const parentScore = (totalGrad * totalGrad) / (totalHess + lambdaL2);
  const best: SplitChoice = {
    gain: 0,
    feature: -1,
    bin: -1,
    threshold: 0,
    defaultLeft: false,
    leftGrad: 0,
    leftHess: 0,
    leftCount: 0,
  };
  let bestGain = MIN_GAIN;
  const { offsets, cuts, upper } = binned;
  const { sums, counts } = hist;
  for (let a = 0; a < activeCount; a++) {
    const f = active[a] as number;
    const first = offsets[f] as number;
    const missingBin = (offsets[f + 1] as number) - 1;
    const valueBins = missingBin - first;
    const missGrad = sums[missingBin * 2] as number;
    const missHess = sums[missingBin * 2 + 1] as number;
    const missCount = counts[missingBin] as number;
    const featureCuts = cuts[f] as Float32Array;
    const above = upper[f] as number;
    let gl = 0;
    let hl = 0;
    let cl = 0;
    for (let b = 0; b < valueBins; b++) {
      const binCount = counts[first + b] as number;
      if (binCount === 0) continue;
      gl += sums[(first + b) * 2] as number;
      hl += sums[(first + b) * 2 + 1] as number;
      cl += binCount;
      const last = b === valueBins - 1;
      // After the last value bin only "every value left, missing right" is a split.
      if (last && (missCount === 0 || Number.isNaN(above))) break;
      const threshold = last ? above : (featureCuts[b] as number);
      // Missing values right.
      let cr = totalCount - cl;
      let hr = totalHess - hl;
      if (cl >= minDataInLeaf && cr >= minDataInLeaf && hl >= minSumHessian && hr >= minSumHessian) {
        const gr = totalGrad - gl;
        const gain = (gl * gl) / (hl + lambdaL2) + (gr * gr) / (hr + lambdaL2) - parentScore;
        if (gain > bestGain) {
          bestGain = gain;
          Object.assign(best, { gain, feature: f, bin: b, threshold, defaultLeft: false });
          best.leftGrad = gl;
          best.leftHess = hl;
          best.leftCount = cl;
        }
      }
      if (missCount === 0 || last) continue;
      // Missing values left.
      const glm = gl + missGrad;
      const hlm = hl + missHess;
      const clm = cl + missCount;
      cr = totalCount - clm;
      hr = totalHess - hlm;
      if (clm >= minDataInLeaf && cr >= minDataInLeaf && hlm >= minSumHessian && hr >= minSumHessian) {
        const gr = totalGrad - glm;
        const gain = (glm * glm) / (hlm + lambdaL2) + (gr * gr) / (hr + lambdaL2) - parentScore;
        if (gain > bestGain) {
          bestGain = gain;
          Object.assign(best, { gain, feature: f, bin: b, threshold, defaultLeft: true });
          best.leftGrad = glm;
          best.leftHess = hlm;
          best.leftCount = clm;
        }
      }
    }
  }
  return best;
}
