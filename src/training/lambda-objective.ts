import { discounts } from './ndcg.js';
import { rerankGroup } from './rank-order.js';
import { sigmoid } from './sigmoid-table.js';

/** What one pass of {@link LambdaObjective.gradients} measured at the current scores. */
export interface ObjectiveStats {
  /** Mean NDCG@k over the groups with a positive label. */
  ndcg: number;
  /** This pass's objective (weights from the current ranking), mean per group; NaN unless measured. */
  loss: number;
  /** The previous pass's objective (its weights) at the current scores; NaN on the first pass or unless measured. */
  previousLoss: number;
}

/** XGBoost's floor under a pair's hessian, so a leaf never divides by nothing. */
const MIN_PAIR_HESSIAN = 1e-16;

/**
 * LambdaMART's gradients, as XGBoost's `rank:ndcg`: for each pair of rows of a group with
 * different labels (i above j), the pairwise logistic loss log(1 + e^−(s_i − s_j)) weighted by
 * |ΔNDCG|, the change in the group's NDCG (exponential gain 2^label − 1, over the whole list)
 * were the two swapped in the current ranking. Gradient (p − 1)·w on i and its negative on j,
 * hessian 2·w·p(1 − p) on both, p = σ(s_i − s_j). Unlike XGBoost 1.x, which samples one pair
 * per row, every pair is used: the gradients carry no sampling noise. With row weights, w is
 * multiplied by the weight of i, the higher-labelled row (inverse propensity weighting: a click
 * at a position users rarely look at stands for the clicks that look would have brought).
 */
export class LambdaObjective {
  private readonly starts: Uint32Array;
  /** Rows of each group ordered by label, highest first. */
  private readonly byLabel: Uint32Array;
  /** For each entry of `byLabel`: the group-relative index where rows of a lower label start. */
  private readonly lowerFrom: Uint32Array;
  private readonly gain: Float64Array;
  /** 1 / ideal DCG of the whole group (0 when no label is positive: no gradients). */
  private readonly inverseIdeal: Float64Array;
  /** 1 / ideal DCG@k, for the NDCG reported. */
  private readonly inverseIdealAtK: Float64Array;
  private readonly discount: Float64Array;
  private readonly position: Int32Array;
  private readonly previousPosition: Int32Array;
  /** Every group's rows in the order of the last ranking: the next one starts from it. */
  private readonly ranked: Uint32Array;
  private passes = 0;
  /** Groups with a positive label: the ones that count. */
  readonly scoredGroups: number;

  constructor(
    private readonly labels: Float64Array,
    private readonly groups: Uint32Array,
    private readonly k: number,
    /** Per row: the factor of its pairs as the higher-labelled row (inverse propensity); none is 1. */
    private readonly weights?: Float64Array,
  ) {
    const rows = labels.length;
    this.starts = new Uint32Array(groups.length + 1);
    let largest = 0;
    for (let g = 0; g < groups.length; g++) {
      const count = groups[g] as number;
      this.starts[g + 1] = (this.starts[g] as number) + count;
      largest = Math.max(largest, count);
    }
    this.discount = discounts(largest);
    this.gain = labels.map((label) => 2 ** label - 1);
    this.byLabel = new Uint32Array(rows);
    this.lowerFrom = new Uint32Array(rows);
    this.inverseIdeal = new Float64Array(groups.length);
    this.inverseIdealAtK = new Float64Array(groups.length);
    this.position = new Int32Array(rows);
    this.previousPosition = new Int32Array(rows);
    this.ranked = Uint32Array.from({ length: rows }, (_, r) => r);
    let scored = 0;
    for (let g = 0; g < groups.length; g++) {
      const start = this.starts[g] as number;
      const count = groups[g] as number;
      const rowsByLabel = Array.from({ length: count }, (_, i) => start + i).sort(
        (a, b) => (labels[b] as number) - (labels[a] as number) || a - b,
      );
      this.byLabel.set(rowsByLabel, start);
      let ideal = 0;
      let idealAtK = 0;
      for (let i = 0; i < count; i++) {
        const term = (this.gain[rowsByLabel[i] as number] as number) * (this.discount[i] as number);
        ideal += term;
        if (i < k) idealAtK += term;
      }
      this.inverseIdeal[g] = ideal > 0 ? 1 / ideal : 0;
      this.inverseIdealAtK[g] = idealAtK > 0 ? 1 / idealAtK : 0;
      if (ideal > 0) scored++;
      let end = count;
      for (let i = count - 1; i >= 0; i--) {
        if (i < count - 1 && labels[rowsByLabel[i] as number] !== labels[rowsByLabel[i + 1] as number])
          end = i + 1;
        this.lowerFrom[start + i] = end;
      }
    }
    this.scoredGroups = scored;
  }

  /**
   * Fills `grad` and `hess` for the current `scores` and measures NDCG; `withLoss` also measures
   * this pass's objective and the previous pass's at these scores (how much the last tree lowered
   * its own), at the cost of an exact logarithm per pair.
   */
  gradients(scores: Float32Array, grad: Float64Array, hess: Float64Array, withLoss: boolean): ObjectiveStats {
    const { labels, groups, byLabel, lowerFrom, gain, discount, position, previousPosition, ranked, k } =
      this;
    const weights = this.weights;
    const hasPrevious = withLoss && this.passes > 0;
    let ndcgSum = 0;
    let loss = 0;
    let previousLoss = 0;
    grad.fill(0);
    hess.fill(0);
    for (let g = 0; g < groups.length; g++) {
      const inverseIdeal = this.inverseIdeal[g] as number;
      if (inverseIdeal === 0) continue;
      const start = this.starts[g] as number;
      const count = groups[g] as number;
      rerankGroup(scores, labels, ranked, start, count);
      let dcg = 0;
      for (let i = 0; i < count; i++) {
        const row = ranked[start + i] as number;
        position[row] = i;
        if (i < k) dcg += (gain[row] as number) * (discount[i] as number);
      }
      ndcgSum += dcg * (this.inverseIdealAtK[g] as number);
      for (let a = 0; a < count; a++) {
        const i = byLabel[start + a] as number;
        const si = scores[i] as number;
        const gi = gain[i] as number;
        const weightI = weights === undefined ? 1 : (weights[i] as number);
        const di = discount[position[i] as number] as number;
        const pdi = hasPrevious ? (discount[previousPosition[i] as number] as number) : 0;
        let gradI = 0;
        let hessI = 0;
        for (let b = lowerFrom[start + a] as number; b < count; b++) {
          const j = byLabel[start + b] as number;
          const d = si - (scores[j] as number);
          const p = sigmoid(d);
          const gainGap = (gi - (gain[j] as number)) * inverseIdeal * weightI;
          const w = gainGap * Math.abs(di - (discount[position[j] as number] as number));
          const gw = (p - 1) * w;
          const hw = 2 * w * Math.max(p * (1 - p), MIN_PAIR_HESSIAN);
          gradI += gw;
          hessI += hw;
          grad[j] = (grad[j] as number) - gw;
          hess[j] = (hess[j] as number) + hw;
          if (withLoss) {
            // log(1 + e^−d), exactly: the loss is compared tree to tree, so no table here.
            const pairLoss = (d >= 0 ? 0 : -d) + Math.log1p(Math.exp(-Math.abs(d)));
            loss += w * pairLoss;
            if (hasPrevious) {
              const previousGap = Math.abs(pdi - (discount[previousPosition[j] as number] as number));
              previousLoss += gainGap * previousGap * pairLoss;
            }
          }
        }
        grad[i] = (grad[i] as number) + gradI;
        hess[i] = (hess[i] as number) + hessI;
      }
    }
    previousPosition.set(position);
    this.passes++;
    const groupsScored = this.scoredGroups || 1;
    return {
      ndcg: this.scoredGroups === 0 ? Number.NaN : ndcgSum / groupsScored,
      loss: withLoss ? loss / groupsScored : Number.NaN,
      previousLoss: hasPrevious ? previousLoss / groupsScored : Number.NaN,
    };
  }
}
