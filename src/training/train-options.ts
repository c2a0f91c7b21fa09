import { TrainingInputError } from '../errors/index.js';

/** How {@link trainLambdaMart} grows its trees. Every field is optional. */
export interface TrainOptions {
  /** The most trees to grow (fewer when early stopping ends training). @defaultValue 300 */
  trees?: number;
  /** Each tree's leaves are scaled by this (XGBoost's `eta`). @defaultValue 0.1 */
  learningRate?: number;
  /**
   * The deepest a leaf may lie (the root is depth 0). 0 means no limit.
   * @defaultValue 6, or no limit when only `maxLeaves` is given
   */
  maxDepth?: number;
  /** The most leaves a tree may have; the best split of all leaves is made first. @defaultValue 2^maxDepth (31 when depth is unlimited) */
  maxLeaves?: number;
  /** The fewest training rows a leaf may hold. @defaultValue 20 */
  minDataInLeaf?: number;
  /** The smallest sum of hessians a leaf may hold (XGBoost's `min_child_weight`). @defaultValue 0.001 */
  minSumHessian?: number;
  /** L2 regularisation of leaf values (XGBoost's `lambda`). @defaultValue 1 */
  lambdaL2?: number;
  /** The share of features each tree may split on, drawn anew per tree with `seed`. @defaultValue 1 */
  featureFraction?: number;
  /**
   * Stop when validation NDCG@ndcgAt has not improved for this many trees, and keep the trees up
   * to the best one. 0 turns it off (every tree is kept). Needs a validation set. @defaultValue 20
   */
  earlyStoppingRounds?: number;
  /** The k of the NDCG@k reported and used for early stopping. @defaultValue 10 */
  ndcgAt?: number;
  /** Seeds feature subsampling: the same seed and data give the same model. @defaultValue 0 */
  seed?: number;
  /** The most histogram bins per feature, the missing-value bin included (3–256). @defaultValue 256 */
  maxBins?: number;
  /**
   * Measure the LambdaMART objective before and after each tree (`TreeHistory.lossBefore` and
   * `lossAfter`): an exact logarithm per pair of rows, which slows training by about a third.
   * @defaultValue false
   */
  reportLoss?: boolean;
}

/** {@link TrainOptions} with every default filled in; `maxDepth` 0 means unlimited. */
export type ResolvedTrainOptions = Readonly<Required<TrainOptions>>;

function check(name: string, value: number, ok: boolean, rule: string): number {
  if (!ok || Number.isNaN(value)) throw new TrainingInputError(`${name} is ${value}; it must be ${rule}`);
  return value;
}

const isInt = Number.isInteger;

/** Fills in the defaults and checks every option, throwing a {@link TrainingInputError} on the first bad one. */
export function resolveTrainOptions(options: TrainOptions = {}): ResolvedTrainOptions {
  const maxDepth = options.maxDepth ?? (options.maxLeaves === undefined ? 6 : 0);
  check(
    'maxDepth',
    maxDepth,
    isInt(maxDepth) && maxDepth >= 0 && maxDepth <= 30,
    'an integer from 0 (no limit) to 30',
  );
  const maxLeaves = options.maxLeaves ?? (maxDepth === 0 ? 31 : 2 ** maxDepth);
  const resolved: ResolvedTrainOptions = {
    trees: options.trees ?? 300,
    learningRate: options.learningRate ?? 0.1,
    maxDepth,
    maxLeaves,
    minDataInLeaf: options.minDataInLeaf ?? 20,
    minSumHessian: options.minSumHessian ?? 1e-3,
    lambdaL2: options.lambdaL2 ?? 1,
    featureFraction: options.featureFraction ?? 1,
    earlyStoppingRounds: options.earlyStoppingRounds ?? 20,
    ndcgAt: options.ndcgAt ?? 10,
    seed: options.seed ?? 0,
    maxBins: options.maxBins ?? 256,
    reportLoss: options.reportLoss ?? false,
  };
  const r = resolved;
  check('trees', r.trees, isInt(r.trees) && r.trees >= 1, 'a positive integer');
  check('learningRate', r.learningRate, r.learningRate > 0 && r.learningRate <= 1, 'above 0 and at most 1');
  check(
    'maxLeaves',
    r.maxLeaves,
    isInt(r.maxLeaves) && r.maxLeaves >= 2 && r.maxLeaves <= 65536,
    'an integer from 2 to 65536',
  );
  check(
    'minDataInLeaf',
    r.minDataInLeaf,
    isInt(r.minDataInLeaf) && r.minDataInLeaf >= 1,
    'a positive integer',
  );
  check(
    'minSumHessian',
    r.minSumHessian,
    r.minSumHessian >= 0 && Number.isFinite(r.minSumHessian),
    'a number ≥ 0',
  );
  check('lambdaL2', r.lambdaL2, r.lambdaL2 >= 0 && Number.isFinite(r.lambdaL2), 'a number ≥ 0');
  check(
    'featureFraction',
    r.featureFraction,
    r.featureFraction > 0 && r.featureFraction <= 1,
    'above 0 and at most 1',
  );
  check(
    'earlyStoppingRounds',
    r.earlyStoppingRounds,
    isInt(r.earlyStoppingRounds) && r.earlyStoppingRounds >= 0,
    'an integer ≥ 0',
  );
  check('ndcgAt', r.ndcgAt, isInt(r.ndcgAt) && r.ndcgAt >= 1, 'a positive integer');
  check('seed', r.seed, isInt(r.seed), 'an integer');
  check(
    'maxBins',
    r.maxBins,
    isInt(r.maxBins) && r.maxBins >= 3 && r.maxBins <= 256,
    'an integer from 3 to 256',
  );
  return Object.freeze(resolved);
}
