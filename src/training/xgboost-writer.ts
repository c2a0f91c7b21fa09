import type { TrainedTree } from './trained-tree.js';

/** The XGBoost release whose JSON model format is written (loaded by later releases too). */
const FORMAT_VERSION = [1, 7, 4];

/**
 * A float array in the document. XGBoost's JSON reader is typed: a float field holding `0`
 * instead of `0.0` is refused ("Invalid cast, from Integer to Number"), and `JSON.stringify`
 * drops the `.0`. {@link xgboostJsonText} writes these with it.
 */
export class FloatList {
  constructor(readonly values: ArrayLike<number>) {}

  /** Plain numbers, for `JSON.stringify` (which loses the float typing). */
  toJSON(): number[] {
    return Array.from(this.values);
  }
}

function treeDocument(tree: TrainedTree, id: number, numFeatures: number): Record<string, unknown> {
  const nodes = tree.left.length;
  return {
    base_weights: new FloatList(tree.baseWeight),
    categories: [],
    categories_nodes: [],
    categories_segments: [],
    categories_sizes: [],
    default_left: Array.from(tree.defaultLeft),
    id,
    left_children: Array.from(tree.left),
    loss_changes: new FloatList(tree.gain),
    parents: Array.from(tree.parent, (p) => (p < 0 ? 2147483647 : p)),
    right_children: Array.from(tree.right),
    split_conditions: new FloatList(tree.threshold),
    split_indices: Array.from(tree.feature),
    split_type: new Array<number>(nodes).fill(0),
    sum_hessian: new FloatList(tree.hessian),
    tree_param: {
      num_deleted: '0',
      num_feature: String(numFeatures),
      num_nodes: String(nodes),
      size_leaf_vector: '0',
    },
  };
}

/**
 * A ranking model as the document XGBoost's `Booster.save_model("m.json")` writes for
 * `rank:ndcg`: the trees, the base score, the feature names. rankd's GBDT evaluator and XGBoost
 * (`xgb.Booster(model_file=...)`) both load it. Float arrays are {@link FloatList}s.
 */
export function xgboostDocument(
  trees: readonly TrainedTree[],
  features: readonly string[],
  baseScore: number,
): Record<string, unknown> {
  return {
    learner: {
      attributes: {},
      feature_names: [...features],
      feature_types: [],
      gradient_booster: {
        model: {
          gbtree_model_param: {
            num_parallel_tree: '1',
            num_trees: String(trees.length),
            size_leaf_vector: '0',
          },
          tree_info: trees.map(() => 0),
          trees: trees.map((tree, id) => treeDocument(tree, id, features.length)),
        },
        name: 'gbtree',
      },
      learner_model_param: {
        base_score: Math.fround(baseScore).toExponential(),
        boost_from_average: '1',
        num_class: '0',
        num_feature: String(features.length),
        num_target: '1',
      },
      objective: {
        lambda_rank_param: { fix_list_weight: '0', num_pairsample: '1' },
        name: 'rank:ndcg',
      },
    },
    version: FORMAT_VERSION,
  };
}

/** A float as XGBoost's reader wants it: always with a fraction or an exponent. */
function floatText(value: number): string {
  const text = String(value);
  return /[.eE]/.test(text) || !Number.isFinite(value) ? text : `${text}.0`;
}

/** The text of a document from {@link xgboostDocument}, every float written as a float. */
export function xgboostJsonText(document: unknown): string {
  const floats: string[] = [];
  // `toJSON` runs before a replacer sees the value: look at the holder's own entry instead.
  const json = JSON.stringify(
    document,
    function (this: Record<string, unknown>, key: string, value: unknown) {
      const original = this[key];
      if (original instanceof FloatList) {
        floats.push(`[${Array.from(original.values, floatText).join(',')}]`);
        return `@@float-list-${floats.length - 1}@@`;
      }
      return value;
    },
  );
  return json.replace(/"@@float-list-(\d+)@@"/g, (_match, i: string) => floats[Number(i)] as string);
}
