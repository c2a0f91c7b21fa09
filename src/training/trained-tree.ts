/**
 * One trained tree as parallel per-node arrays, XGBoost's own layout: node 0 is the root, a leaf
 * has `left[node] === -1`. A split sends a row left when its value, as float32, is below
 * `threshold[node]`, and a missing value the way `defaultLeft[node]` says.
 */
export interface TrainedTree {
  readonly left: Int32Array;
  readonly right: Int32Array;
  /** The parent of each node; -1 for the root. */
  readonly parent: Int32Array;
  /** The split's feature column; 0 at leaves. */
  readonly feature: Int32Array;
  /** Splits: the float32 threshold. Leaves: the leaf's value (learning rate applied), as XGBoost's `split_conditions`. */
  readonly threshold: Float32Array;
  /** 1 when missing values go left. */
  readonly defaultLeft: Uint8Array;
  /** Every node's Newton weight −G/(H+λ), before the learning rate (XGBoost's `base_weights`). */
  readonly baseWeight: Float32Array;
  /** The loss reduction of each split; 0 at leaves (XGBoost's `loss_changes`). */
  readonly gain: Float32Array;
  /** The sum of hessians of the rows at each node (XGBoost's `sum_hessian`, the cover). */
  readonly hessian: Float32Array;
  /** The number of training rows at each node. */
  readonly count: Uint32Array;
}

/**
 * The leaf value `tree` gives the row at `offset` of a row-major matrix (XGBoost's float32
 * comparisons); NaN and ±Infinity take the missing-value branch.
 */
export function treeLeafValue(tree: TrainedTree, values: Float64Array, offset: number): number {
  const { left, right, feature, threshold, defaultLeft } = tree;
  let node = 0;
  let next = left[0] as number;
  while (next >= 0) {
    const x = values[offset + (feature[node] as number)] as number;
    // ±Infinity is missing, as NaN is: the served gbdtModel reads features so (numericValue).
    if (!Number.isFinite(x)) {
      node = defaultLeft[node] === 1 ? next : (right[node] as number);
    } else {
      node = Math.fround(x) < (threshold[node] as number) ? next : (right[node] as number);
    }
    next = left[node] as number;
  }
  return threshold[node] as number;
}
