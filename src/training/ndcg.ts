import { rankGroup } from './rank-order.js';

/** 1 / log2(position + 2) for positions 0..n−1, DCG's discount. */
export function discounts(n: number): Float64Array {
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) out[i] = 1 / Math.log2(i + 2);
  return out;
}

/**
 * NDCG@k of each query group: DCG of the top `k` rows ranked by `scores` (gain 2^label − 1,
 * discount 1/log2(position + 2)) over the best DCG the labels allow. Ties in score rank the lower
 * label first (see `rankGroup`), so constant scores earn nothing. A group with no positive label
 * has no ideal DCG and is skipped: its entry is NaN. With `weights` (inverse propensities) each
 * row's gain is multiplied by its weight, the ideal DCG too: the position-corrected NDCG.
 */
export function ndcgByGroup(
  scores: ArrayLike<number>,
  labels: ArrayLike<number>,
  groups: ArrayLike<number>,
  k: number,
  weights?: ArrayLike<number>,
): Float64Array {
  // Weighted gains order ties and the ideal as labels do: a gain is increasing in its label.
  const gains =
    weights === undefined
      ? undefined
      : Float64Array.from(
          { length: labels.length },
          (_, r) => (2 ** (labels[r] as number) - 1) * (weights[r] as number),
        );
  const gainOf = (r: number) => (gains === undefined ? 2 ** (labels[r] as number) - 1 : (gains[r] as number));
  const tieOrder = gains ?? labels;
  let largest = 0;
  for (let g = 0; g < groups.length; g++) largest = Math.max(largest, groups[g] as number);
  const order = new Uint32Array(largest);
  const ideal = new Float64Array(largest);
  const discount = discounts(Math.min(k, largest));
  const out = new Float64Array(groups.length);
  let start = 0;
  for (let g = 0; g < groups.length; g++) {
    const count = groups[g] as number;
    const top = Math.min(k, count);
    for (let i = 0; i < count; i++) ideal[i] = gainOf(start + i);
    const sorted = ideal.subarray(0, count).sort().reverse();
    let best = 0;
    for (let i = 0; i < top; i++) best += (sorted[i] as number) * (discount[i] as number);
    if (best > 0) {
      rankGroup(scores, tieOrder, start, count, order);
      let dcg = 0;
      for (let i = 0; i < top; i++) dcg += gainOf(order[i] as number) * (discount[i] as number);
      out[g] = dcg / best;
    } else {
      out[g] = Number.NaN;
    }
    start += count;
  }
  return out;
}

/**
 * Mean NDCG@k over the query groups that have a positive label (the others cannot be ranked better
 * or worse); NaN when none has. `weights` (inverse propensities) multiply each row's gain, the ideal
 * DCG's too: the position-corrected NDCG.
 *
 * @example
 * import { ndcgAt } from 'rankd/training';
 * // Two groups of three rows, the first ordered perfectly, the second backwards.
 * ndcgAt([3, 2, 1, 1, 2, 3], [2, 1, 0, 2, 1, 0], [3, 3], 10);
 */
export function ndcgAt(
  scores: ArrayLike<number>,
  labels: ArrayLike<number>,
  groups: ArrayLike<number>,
  k: number,
  weights?: ArrayLike<number>,
): number {
  let sum = 0;
  let counted = 0;
  for (const value of ndcgByGroup(scores, labels, groups, k, weights)) {
    if (!Number.isNaN(value)) {
      sum += value;
      counted++;
    }
  }
  return counted === 0 ? Number.NaN : sum / counted;
}
