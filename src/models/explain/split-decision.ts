import { LIGHTGBM_ZERO } from '../gbdt/float-bits.js';
import { categoricalFlags, categorySlot } from '../gbdt/split-encoding.js';
import { MissingRule, type SplitSemantics, type TreeSource } from '../gbdt/tree-source.js';

/**
 * The child of split `node` that a row goes to, decided literally by the source library's rules
 * (see {@link SplitSemantics}), as the flat scoring layouts decide it with their derived columns.
 * Explanations walk the parsed trees with it: they are off the hot path, and a plain rule is easy
 * to check against the libraries' documentation.
 */
export function childFor(
  semantics: SplitSemantics,
  tree: TreeSource,
  node: number,
  row: ArrayLike<number>,
): number {
  const left = tree.left[node] as number;
  const right = tree.right[node] as number;
  const defaultLeft = tree.defaultLeft[node] === 1;
  let x = row[tree.feature[node] as number] ?? Number.NaN;
  // As on input to the evaluator: XGBoost reads float32; LightGBM flushes |x| ≤ 1e-35 to 0.
  if (semantics === 'xgboost') x = Math.fround(x);
  else if (x <= LIGHTGBM_ZERO && x >= -LIGHTGBM_ZERO) x = 0;

  const bits = tree.categories?.get(node);
  if (bits !== undefined) {
    const slot = categorySlot(x, categoricalFlags(semantics, defaultLeft), bits, 0, bits.length);
    return slot === 0 ? left : right;
  }
  const threshold = tree.threshold[node] as number;
  if (semantics === 'xgboost') {
    if (Number.isNaN(x)) return defaultLeft ? left : right;
    return x < Math.fround(threshold) ? left : right;
  }
  const rule = tree.missing[node];
  if (rule === MissingRule.NAN_AS_ZERO && Number.isNaN(x)) x = 0;
  if (Number.isNaN(x) || (rule === MissingRule.ZERO_DEFAULT && x === 0)) return defaultLeft ? left : right;
  return x <= threshold ? left : right;
}
