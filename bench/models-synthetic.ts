/**
 * A synthetic gradient-boosted model for `npm run bench -- models`, generated in TypeScript so the
 * benchmark needs no Python: full binary trees of a given depth over `features` inputs, with
 * float32 thresholds, random missing-value directions and small leaves, written as an XGBoost
 * JSON model (the format `Booster.save_model` writes) so it goes through the real loader.
 */

/** One tree as parallel per-node arrays (XGBoost's JSON field layout); node 0 is the root. */
export interface SyntheticTree {
  left: number[];
  right: number[];
  feature: number[];
  threshold: number[];
  defaultLeft: number[];
  /** split_conditions of leaves hold their value; 0 elsewhere. */
  leafValue: number[];
}

/** What was generated, kept alongside the JSON so other runtimes can be fed the same trees. */
export interface SyntheticModel {
  trees: SyntheticTree[];
  features: number;
  baseScore: number;
  json: string;
}

/** xorshift32: deterministic across runs and machines. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 2 ** 32;
  };
}

/** Roughly normal (sum of uniforms), enough to spread thresholds like a trained model's. */
function normal(random: () => number): number {
  return random() + random() + random() + random() - 2;
}

function fullTree(random: () => number, depth: number, features: number): SyntheticTree {
  const splits = 2 ** depth - 1;
  const nodes = 2 ** (depth + 1) - 1;
  const tree: SyntheticTree = {
    left: [],
    right: [],
    feature: [],
    threshold: [],
    defaultLeft: [],
    leafValue: [],
  };
  for (let i = 0; i < nodes; i++) {
    const split = i < splits;
    tree.left.push(split ? 2 * i + 1 : -1);
    tree.right.push(split ? 2 * i + 2 : -1);
    tree.feature.push(split ? Math.floor(random() * features) : 0);
    tree.threshold.push(split ? Math.fround(normal(random)) : 0);
    tree.defaultLeft.push(split && random() < 0.5 ? 1 : 0);
    tree.leafValue.push(split ? 0 : Math.fround((random() - 0.5) * 0.1));
  }
  return tree;
}

/**
 * XGBoost's JSON reader is typed: float fields must be written as floats, so an integral value
 * needs its `.0`. Float arrays go through `JSON.stringify` as placeholders and are spliced in.
 */
class FloatArrays {
  private readonly texts: string[] = [];

  mark(values: readonly number[]): string {
    this.texts.push(`[${values.map((v) => (Number.isInteger(v) ? v.toFixed(1) : String(v))).join(',')}]`);
    return `@floats${this.texts.length - 1}@`;
  }

  splice(json: string): string {
    return json.replace(/"@floats(\d+)@"/g, (_, i: string) => this.texts[Number(i)] as string);
  }
}

/** Generates the model: `trees` full trees of `depth`, as XGBoost JSON for reg:squarederror. */
export function syntheticModel(trees: number, depth: number, features: number, seed = 42): SyntheticModel {
  const random = seededRandom(seed);
  const generated = Array.from({ length: trees }, () => fullTree(random, depth, features));
  const baseScore = 0.5;
  const floats = new FloatArrays();
  const document = {
    learner: {
      attributes: {},
      feature_names: [],
      feature_types: [],
      gradient_booster: {
        model: {
          gbtree_model_param: { num_parallel_tree: '1', num_trees: String(trees) },
          tree_info: generated.map(() => 0),
          trees: generated.map((tree, id) => ({
            id,
            left_children: tree.left,
            right_children: tree.right,
            parents: tree.left.map((_, i) => (i === 0 ? 2147483647 : (i - 1) >> 1)),
            split_indices: tree.feature,
            split_conditions: floats.mark(
              tree.left.map((l, i) => (l < 0 ? tree.leafValue[i] : tree.threshold[i]) as number),
            ),
            split_type: tree.left.map(() => 0),
            default_left: tree.defaultLeft,
            base_weights: floats.mark(tree.leafValue),
            loss_changes: floats.mark(tree.left.map(() => 0)),
            sum_hessian: floats.mark(tree.left.map(() => 1)),
            categories: [],
            categories_nodes: [],
            categories_segments: [],
            categories_sizes: [],
            tree_param: {
              num_deleted: '0',
              num_feature: String(features),
              num_nodes: String(tree.left.length),
            },
          })),
        },
        name: 'gbtree',
      },
      learner_model_param: {
        base_score: '5E-1',
        boost_from_average: '1',
        num_class: '0',
        num_feature: String(features),
        num_target: '1',
      },
      objective: { name: 'reg:squarederror', reg_loss_param: { scale_pos_weight: '1' } },
    },
    version: [1, 7, 4],
  };
  return { trees: generated, features, baseScore, json: floats.splice(JSON.stringify(document)) };
}

/** `rows` × `features` row-major candidates, `missingRate` of the values NaN. */
export function syntheticRows(rows: number, features: number, missingRate: number, seed = 7): Float64Array {
  const random = seededRandom(seed);
  return Float64Array.from({ length: rows * features }, () =>
    random() < missingRate ? Number.NaN : normal(random),
  );
}
