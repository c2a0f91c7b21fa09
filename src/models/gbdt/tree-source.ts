/**
 * What the parsers hand to the evaluator: each tree as plain per-node arrays in the source
 * library's own numbering, plus the rules that library evaluates them by. The evaluator turns
 * this into its flat layout once, at load; nothing here is touched while scoring.
 */

/** What a numerical split does with a missing or zero value. */
export const MissingRule = {
  /** NaN goes the node's default direction (XGBoost; LightGBM MissingType NaN). */
  NAN_DEFAULT: 0,
  /** NaN and zero (|x| ≤ 1e-35) go the default direction (LightGBM MissingType Zero). */
  ZERO_DEFAULT: 1,
  /** NaN is compared as 0.0; no default direction (LightGBM MissingType None). */
  NAN_AS_ZERO: 2,
} as const;

/** One of {@link MissingRule}. */
export type MissingRuleValue = (typeof MissingRule)[keyof typeof MissingRule];

/** One tree, node 0 its root. Node `i` is a leaf when `left[i] < 0`. */
export interface TreeSource {
  readonly left: ArrayLike<number>;
  readonly right: ArrayLike<number>;
  /** Index into the input row. */
  readonly feature: ArrayLike<number>;
  /** Compared as the ensemble's {@link SplitSemantics} says; unused for categorical nodes and leaves. */
  readonly threshold: ArrayLike<number>;
  /** The output of leaf nodes (shrinkage already applied); unused for splits. */
  readonly value: ArrayLike<number>;
  /** Per split, a {@link MissingRule}. */
  readonly missing: ArrayLike<number>;
  /** Per split, 1 when missing values go left. */
  readonly defaultLeft: ArrayLike<number>;
  /** Categorical splits: node → bitset of the categories in the split's set (bit c of word c >> 5). */
  readonly categories?: ReadonlyMap<number, Uint32Array>;
  /**
   * Per node, how much training data reached it (XGBoost `sum_hessian`, LightGBM
   * `internal_count`/`leaf_count`): what TreeSHAP weighs a split's two sides by. Absent when the
   * file has none. Explanations read it; the flat scoring layouts never copy it.
   */
  readonly cover?: ArrayLike<number>;
}

/**
 * The library whose comparison rules the trees follow. They differ in every detail that decides
 * a row's leaf, so predictions match the library only if each rule is followed exactly:
 * - `xgboost`: features are cast to float32, a split goes left when `x < threshold` (float32);
 *   a categorical split sends its set right, anything else (negative, ≥ 2^24, unseen) left, NaN
 *   the default way; tree outputs are summed in float32.
 * - `lightgbm`: features stay double, |x| ≤ 1e-35 counts as 0, a split goes left when
 *   `x <= threshold`; a categorical split truncates x toward zero and sends its set left,
 *   anything else (NaN, negative) right; outputs are summed in double.
 */
export type SplitSemantics = 'xgboost' | 'lightgbm';

/** How the summed margin becomes the prediction. */
export type OutputTransform =
  | { readonly kind: 'identity' }
  /** `1 / (1 + exp(-scale · margin))`. */
  | { readonly kind: 'sigmoid'; readonly scale: number }
  /** `exp(margin)`: log-link objectives (Poisson, gamma, Tweedie). */
  | { readonly kind: 'exp' }
  /** `sign(margin) · margin²`: LightGBM regression trained with `reg_sqrt`. */
  | { readonly kind: 'signed-square' };

/** A whole model as parsed, before flattening. */
export interface EnsembleSource {
  readonly semantics: SplitSemantics;
  readonly trees: readonly TreeSource[];
  /** Per tree, a factor on its leaf values (XGBoost DART's weight_drop); absent means 1. */
  readonly treeWeights?: ArrayLike<number>;
  /** The margin every row starts from, already in margin space. */
  readonly baseMargin: number;
  /** Divide the sum by the number of trees (LightGBM random-forest mode). */
  readonly averageOutput?: boolean;
  readonly transform: OutputTransform;
  /** The objective named in the file, for logs and errors. */
  readonly objective: string;
  /** How many input columns the model was trained on; rows must have at least the ones it reads. */
  readonly numFeatures: number;
  readonly featureNames?: readonly string[];
}
