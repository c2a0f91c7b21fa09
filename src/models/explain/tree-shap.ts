/**
 * Path-dependent TreeSHAP (Lundberg, Erion and Lee, "Consistent Individualized Feature
 * Attribution for Tree Ensembles", 2018, Algorithm 2), as XGBoost's `pred_contribs` and
 * LightGBM's `pred_contrib` compute it: each feature's share of a row's margin, with the
 * expectation over the data taken along the tree's own splits, weighted by the node covers the
 * training recorded. The bias is the ensemble's expected margin; bias + Σ contributions is the
 * row's margin.
 *
 * Written for reading, not speed: explanations are asked for one request at a time, off the
 * scoring path. O(leaves × depth²) per tree and row.
 */
import type { EnsembleSource, SplitSemantics, TreeSource } from '../gbdt/tree-source.js';
import { childFor } from './split-decision.js';

/** A row's contributions: `bias + Σ values[j]` is its margin. */
export interface RowContributions {
  /** The expected margin over the training data (base score included); the same for every row. */
  readonly bias: number;
  /** One per input column, in the model's column order. */
  readonly values: Float64Array;
}

/**
 * One feature on the path from the root to the current node, with the fractions of the paths
 * that go through its splits: `zero` when the feature is unknown (the share of training data the
 * splits sent this way), `one` when it is known (1 if the row goes this way, else 0). `weight`
 * is the proportion of feature subsets of each size, Algorithm 2's `w`.
 */
interface PathElement {
  feature: number;
  zero: number;
  one: number;
  weight: number;
}

/** Adds a feature to the path, updating the weights of every subset size (Algorithm 2, EXTEND). */
function extend(path: PathElement[], zero: number, one: number, feature: number): void {
  const depth = path.length;
  path.push({ feature, zero, one, weight: depth === 0 ? 1 : 0 });
  for (let i = depth - 1; i >= 0; i--) {
    const element = path[i] as PathElement;
    const next = path[i + 1] as PathElement;
    next.weight += (one * element.weight * (i + 1)) / (depth + 1);
    element.weight = (zero * element.weight * (depth - i)) / (depth + 1);
  }
}

/** Removes the feature at `index` from the path, undoing its {@link extend} (Algorithm 2, UNWIND). */
function unwind(path: PathElement[], index: number): void {
  const depth = path.length - 1;
  const { one, zero } = path[index] as PathElement;
  let nextOne = (path[depth] as PathElement).weight;
  for (let i = depth - 1; i >= 0; i--) {
    const element = path[i] as PathElement;
    if (one !== 0) {
      const kept = element.weight;
      element.weight = (nextOne * (depth + 1)) / ((i + 1) * one);
      nextOne = kept - (element.weight * zero * (depth - i)) / (depth + 1);
    } else {
      element.weight = (element.weight * (depth + 1)) / (zero * (depth - i));
    }
  }
  // The elements after `index` move down one place; their weights stay where they are.
  for (let i = index; i < depth; i++) {
    const element = path[i] as PathElement;
    const next = path[i + 1] as PathElement;
    element.feature = next.feature;
    element.zero = next.zero;
    element.one = next.one;
  }
  path.pop();
}

/** The total weight the path would have without the feature at `index`, leaving it unchanged. */
function unwoundSum(path: readonly PathElement[], index: number): number {
  const depth = path.length - 1;
  const { one, zero } = path[index] as PathElement;
  let nextOne = (path[depth] as PathElement).weight;
  let total = 0;
  for (let i = depth - 1; i >= 0; i--) {
    const weight = (path[i] as PathElement).weight;
    if (one !== 0) {
      const share = (nextOne * (depth + 1)) / ((i + 1) * one);
      total += share;
      nextOne = weight - (share * zero * (depth - i)) / (depth + 1);
    } else {
      total += weight / zero / ((depth - i) / (depth + 1));
    }
  }
  return total;
}

/** What one recursion step of {@link treeShap} shares. */
interface Walk {
  readonly semantics: SplitSemantics;
  readonly tree: TreeSource;
  readonly cover: ArrayLike<number>;
  readonly row: ArrayLike<number>;
  readonly phi: Float64Array;
  /** The tree's weight in the ensemble (DART, averaging). */
  readonly scale: number;
}

function recurse(
  walk: Walk,
  node: number,
  parentPath: readonly PathElement[],
  zero: number,
  one: number,
  feature: number,
): void {
  // Each child extends its own copy: the parent's path is still needed for the other child.
  const path = parentPath.map((element) => ({ ...element }));
  extend(path, zero, one, feature);
  const { tree, cover } = walk;
  const left = tree.left[node] as number;
  if (left < 0) {
    const leaf = (tree.value[node] as number) * walk.scale;
    // Element 0 is the root's placeholder (feature -1), not a feature.
    for (let i = 1; i < path.length; i++) {
      const element = path[i] as PathElement;
      walk.phi[element.feature] =
        (walk.phi[element.feature] as number) + unwoundSum(path, i) * (element.one - element.zero) * leaf;
    }
    return;
  }
  const hot = childFor(walk.semantics, tree, node, walk.row);
  const cold = hot === left ? (tree.right[node] as number) : left;
  const total = cover[node] as number;
  const split = tree.feature[node] as number;
  // A feature split on again below its first split: undo its earlier element and fold its
  // fractions into this split's, so each feature appears once on the path.
  let incomingZero = 1;
  let incomingOne = 1;
  const earlier = path.findIndex((element) => element.feature === split);
  if (earlier > 0) {
    incomingZero = (path[earlier] as PathElement).zero;
    incomingOne = (path[earlier] as PathElement).one;
    unwind(path, earlier);
  }
  recurse(walk, hot, path, ((cover[hot] as number) / total) * incomingZero, incomingOne, split);
  recurse(walk, cold, path, ((cover[cold] as number) / total) * incomingZero, 0, split);
}

/**
 * Adds one tree's contributions for `row` to `phi` (one slot per input column), each leaf value
 * multiplied by `scale`. `cover` is the tree's per-node cover (see `TreeSource.cover`).
 */
export function treeShap(
  semantics: SplitSemantics,
  tree: TreeSource,
  cover: ArrayLike<number>,
  row: ArrayLike<number>,
  phi: Float64Array,
  scale = 1,
): void {
  recurse({ semantics, tree, cover, row, phi, scale }, 0, [], 1, 1, -1);
}

/** The tree's expected output: its leaves averaged with the training data's cover as weights. */
export function expectedValue(tree: TreeSource, cover: ArrayLike<number>, node = 0): number {
  const left = tree.left[node] as number;
  if (left < 0) return tree.value[node] as number;
  const right = tree.right[node] as number;
  const total = cover[node] as number;
  return (
    ((cover[left] as number) * expectedValue(tree, cover, left) +
      (cover[right] as number) * expectedValue(tree, cover, right)) /
    total
  );
}

/**
 * Explains the margins of a parsed tree ensemble (XGBoost or LightGBM) with path-dependent
 * TreeSHAP. Made from the {@link EnsembleSource} the parsers give; the flat scoring layouts are
 * not involved, so explaining costs scoring nothing.
 */
export class TreeShapExplainer {
  /** The expected margin: base margin plus each tree's expected value, weighted as in scoring. */
  readonly bias: number;
  readonly numFeatures: number;
  readonly #source: EnsembleSource;
  readonly #scales: Float64Array;

  private constructor(source: EnsembleSource) {
    this.#source = source;
    this.numFeatures = source.numFeatures;
    const trees = source.trees.length;
    // DART weighs each tree; LightGBM's random forests average them.
    const average = source.averageOutput === true && trees > 0 ? trees : 1;
    this.#scales = Float64Array.from(source.trees, (_, t) => (source.treeWeights?.[t] ?? 1) / average);
    // Scoring divides the whole sum, base margin included, when it averages.
    let bias = source.baseMargin / average;
    source.trees.forEach((tree, t) => {
      bias += (this.#scales[t] as number) * expectedValue(tree, tree.cover ?? []);
    });
    this.bias = bias;
  }

  /**
   * The explainer of `source`, or the reason there is none: TreeSHAP needs every split's cover,
   * which files written without training statistics (hand-made ones) lack.
   */
  static fromSource(source: EnsembleSource): TreeShapExplainer | { readonly unavailable: string } {
    const lacking = source.trees.findIndex(
      (tree) => (tree.left[0] as number) >= 0 && (tree.cover?.length ?? 0) !== tree.left.length,
    );
    if (lacking >= 0) {
      return {
        unavailable: `tree ${lacking} of the model file has no node covers (XGBoost sum_hessian, LightGBM internal_count and leaf_count), which contributions need`,
      };
    }
    return new TreeShapExplainer(source);
  }

  /** The contributions of one row (`numFeatures` values, NaN for missing). */
  explainRow(row: ArrayLike<number>): RowContributions {
    const values = new Float64Array(this.numFeatures);
    const { semantics, trees } = this.#source;
    trees.forEach((tree, t) => {
      if ((tree.left[0] as number) < 0) return; // a single leaf: all of it is in the bias
      treeShap(semantics, tree, tree.cover as ArrayLike<number>, row, values, this.#scales[t]);
    });
    return { bias: this.bias, values };
  }

  /** The contributions of `rows` rows of `cols` values each, row-major in `matrix`. */
  explain(matrix: Float64Array, rows: number, cols: number): RowContributions[] {
    return Array.from({ length: rows }, (_, row) =>
      this.explainRow(matrix.subarray(row * cols, (row + 1) * cols)),
    );
  }
}
