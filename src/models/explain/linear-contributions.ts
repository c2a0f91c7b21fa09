import type { RowContributions } from './tree-shap.js';

/**
 * The exact contributions of a linear model: feature j contributes `weights[j] × row[j]`, the
 * bias is the intercept. A missing value (NaN) contributes 0, as `linearModel` scores it (a
 * missing value counts as 0, as in a sparse training row).
 *
 * Exact in this sense: adding the contributions to the bias one by one, in column order, repeats
 * the scorer's own additions, so the sum is the score bit for bit; in any other order it may
 * differ by the rounding of the additions (within 1e-12 of the score at ordinary magnitudes).
 */
export function linearContributions(
  weights: ArrayLike<number>,
  bias: number,
  row: ArrayLike<number>,
): RowContributions {
  const values = new Float64Array(weights.length);
  for (let col = 0; col < weights.length; col++) {
    const value = row[col] ?? Number.NaN;
    values[col] = Number.isNaN(value) ? 0 : (weights[col] as number) * value;
  }
  return { bias, values };
}

/** `bias` plus each value in order: the margin the contributions add up to, rounded as scoring rounds. */
export function marginOf({ bias, values }: RowContributions): number {
  let sum = bias;
  for (const value of values) sum += value;
  return sum;
}
