import { ModelInvalidError } from '../../errors/index.js';
import { JsonObject, parseLenientJson } from './json-fields.js';
import { GbdtModelError } from './model-error.js';
import { TreeEnsemble, type TreeEnsembleOptions } from './tree-ensemble.js';
import { type EnsembleSource, MissingRule, type OutputTransform, type TreeSource } from './tree-source.js';

type Link = 'identity' | 'logit' | 'log';

/** Objectives with one output per row: how base_score maps to a margin, and margin to prediction. */
const OBJECTIVES: Record<string, { link: Link; transform: OutputTransform }> = {
  'reg:squarederror': { link: 'identity', transform: { kind: 'identity' } },
  'reg:linear': { link: 'identity', transform: { kind: 'identity' } },
  'reg:squaredlogerror': { link: 'identity', transform: { kind: 'identity' } },
  'reg:pseudohubererror': { link: 'identity', transform: { kind: 'identity' } },
  'reg:absoluteerror': { link: 'identity', transform: { kind: 'identity' } },
  'reg:quantileerror': { link: 'identity', transform: { kind: 'identity' } },
  'reg:logistic': { link: 'logit', transform: { kind: 'sigmoid', scale: 1 } },
  'binary:logistic': { link: 'logit', transform: { kind: 'sigmoid', scale: 1 } },
  'binary:logitraw': { link: 'logit', transform: { kind: 'identity' } },
  'count:poisson': { link: 'log', transform: { kind: 'exp' } },
  'reg:gamma': { link: 'log', transform: { kind: 'exp' } },
  'reg:tweedie': { link: 'log', transform: { kind: 'exp' } },
  'rank:pairwise': { link: 'identity', transform: { kind: 'identity' } },
  'rank:ndcg': { link: 'identity', transform: { kind: 'identity' } },
  'rank:map': { link: 'identity', transform: { kind: 'identity' } },
};

/** The objectives {@link parseXgboostJson} evaluates. */
export const XGBOOST_OBJECTIVES: readonly string[] = Object.keys(OBJECTIVES);

/**
 * base_score as XGBoost keeps it: in prediction space ("5E-1" is a probability of 0.5 for
 * logistic objectives), a string in 1.x, a one-element vector string ("[5E-1]") from 2.1 on.
 */
function parseBaseScore(raw: unknown, path: string): number {
  const text = typeof raw === 'number' ? String(raw) : typeof raw === 'string' ? raw.trim() : undefined;
  const inner = text?.replace(/^\[(.*)\]$/, '$1').trim();
  if (inner === undefined || inner === '' || inner.includes(',')) {
    throw new ModelInvalidError(`${path} is ${JSON.stringify(raw)}, not one number`);
  }
  const value = Number(inner);
  if (!Number.isFinite(value)) throw new ModelInvalidError(`${path} is ${JSON.stringify(raw)}, not a number`);
  return value;
}

/** XGBoost's ProbToMargin, in float32 like XGBoost, so base margins match bit for bit. */
function baseMargin(link: Link, baseScore: number, path: string): number {
  const f = Math.fround;
  const score = f(baseScore);
  if (link === 'identity') return score;
  if (link === 'log') {
    if (!(score > 0))
      throw new ModelInvalidError(`${path} is ${baseScore}; a log-link objective needs it > 0`);
    return f(Math.log(score));
  }
  if (!(score > 0 && score < 1)) {
    throw new ModelInvalidError(
      `${path} is ${baseScore}; a logistic objective needs it strictly between 0 and 1`,
    );
  }
  return f(-Math.log(f(f(1 / score) - 1)));
}

function parseTree(tree: JsonObject): TreeSource {
  const left = tree.integers('left_children');
  const categories = new Map<number, Uint32Array>();
  if (tree.has('categories_nodes')) {
    const nodes = tree.integers('categories_nodes');
    const segments = tree.integers('categories_segments');
    const sizes = tree.integers('categories_sizes');
    const all = tree.integers('categories');
    nodes.forEach((node, k) => {
      const start = segments[k] ?? -1;
      const size = sizes[k] ?? -1;
      if (start < 0 || size < 0 || start + size > all.length) {
        throw new ModelInvalidError(
          `${tree.path}: categories of node ${node} lie outside the categories array`,
        );
      }
      const members = all.subarray(start, start + size);
      const max = members.reduce((m, c) => Math.max(m, c), -1);
      const bits = new Uint32Array((max >> 5) + 1);
      for (const c of members) {
        if (c < 0) throw new ModelInvalidError(`${tree.path}: node ${node} has negative category ${c}`);
        bits[c >> 5] = (bits[c >> 5] as number) | (1 << (c & 31));
      }
      categories.set(node, bits);
    });
  }
  if (tree.has('split_type')) {
    tree.integers('split_type').forEach((type, node) => {
      if (type === 1 && (left[node] as number) >= 0 && !categories.has(node)) {
        throw new ModelInvalidError(`${tree.path}: node ${node} is a categorical split without categories`);
      }
    });
  }
  const conditions = tree.numbers('split_conditions');
  // Only for explanations (TreeSHAP); a file without it, or with a damaged one, still scores.
  const cover = tree.has('sum_hessian') ? tree.numbers('sum_hessian') : undefined;
  return {
    left,
    right: tree.integers('right_children'),
    feature: tree.integers('split_indices'),
    threshold: conditions,
    // A leaf's output is its split_condition (learning rate applied); base_weights are not.
    value: conditions,
    missing: new Uint8Array(left.length).fill(MissingRule.NAN_DEFAULT),
    defaultLeft: tree.numbers('default_left'),
    categories,
    ...(cover?.length === left.length ? { cover } : {}),
  };
}

/** Reads an XGBoost JSON model (`Booster.save_model("m.json")`, XGBoost ≥ 1.0) into a source. */
export function xgboostSource(document: unknown): EnsembleSource {
  const root = JsonObject.of(document, '$');
  const learner = root.object('learner');
  const params = learner.object('learner_model_param');
  const numClass = Number(params.value.num_class ?? 0);
  const numTarget = Number(params.value.num_target ?? 1);
  if (numClass > 1 || numTarget > 1) {
    throw new ModelInvalidError(
      `multi-output models (num_class ${numClass}, num_target ${numTarget}) are not supported`,
    );
  }
  const objective = learner.object('objective').string('name');
  // Own keys only: a file naming `constructor` as its objective must not find Object's.
  const rules = Object.hasOwn(OBJECTIVES, objective) ? OBJECTIVES[objective] : undefined;
  if (!rules) {
    throw new ModelInvalidError(
      `objective ${objective} is not supported; supported: ${XGBOOST_OBJECTIVES.join(', ')}`,
    );
  }
  let booster = learner.object('gradient_booster');
  const boosterName = booster.string('name');
  let treeWeights: Float64Array | undefined;
  if (boosterName === 'dart') {
    treeWeights = booster.numbers('weight_drop');
    booster = booster.object('gbtree');
  } else if (boosterName !== 'gbtree') {
    throw new ModelInvalidError(
      `booster ${boosterName} is not supported (only gbtree and dart are tree models)`,
    );
  }
  const model = booster.object('model');
  const trees = model
    .array('trees')
    .map((tree, i) => parseTree(JsonObject.of(tree, `${model.at('trees')}[${i}]`)));
  if (model.has('tree_info') && model.integers('tree_info').some((group) => group !== 0)) {
    throw new ModelInvalidError(
      `${model.at('tree_info')} assigns trees to several outputs; multi-output is not supported`,
    );
  }
  const numFeatures = Number(params.value.num_feature);
  if (!Number.isInteger(numFeatures) || numFeatures < 0) {
    throw new ModelInvalidError(`${params.at('num_feature')} is ${JSON.stringify(params.value.num_feature)}`);
  }
  const names = learner.has('feature_names') ? learner.array('feature_names').map(String) : [];
  return {
    semantics: 'xgboost',
    trees,
    ...(treeWeights ? { treeWeights } : {}),
    baseMargin: baseMargin(
      rules.link,
      parseBaseScore(params.value.base_score, params.at('base_score')),
      params.at('base_score'),
    ),
    transform: rules.transform,
    objective,
    numFeatures,
    ...(names.length > 0 ? { featureNames: names } : {}),
  };
}

/**
 * Parses the text of an XGBoost JSON model into a ready evaluator. `file` names the model in
 * errors, which are {@link GbdtModelError}s saying what is wrong and where.
 */
export function parseXgboostJson(
  text: string,
  file = '<inline>',
  options?: TreeEnsembleOptions,
): TreeEnsemble {
  let document: unknown;
  try {
    document = parseLenientJson(text);
  } catch (error) {
    throw new GbdtModelError(file, `not valid JSON (${(error as Error).message})`, { cause: error });
  }
  try {
    return TreeEnsemble.fromSource(xgboostSource(document), options);
  } catch (error) {
    throw new GbdtModelError(file, `not a usable XGBoost JSON model: ${(error as Error).message}`, {
      cause: error,
    });
  }
}
