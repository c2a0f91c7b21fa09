import { TrainingInputError } from '../errors/index.js';
import { binFeatures } from './bins.js';
import { checkDataset, type RankingDataset } from './dataset.js';
import { LambdaObjective } from './lambda-objective.js';
import { ndcgAt } from './ndcg.js';
import { seededRandom } from './random.js';
import { resolveTrainOptions, type TrainOptions } from './train-options.js';
import { TrainedModel, type TreeHistory } from './trained-model.js';
import type { TrainedTree } from './trained-tree.js';
import { treeLeafValue } from './trained-tree.js';
import { TreeGrower } from './tree-grower.js';

/** Where training is, after each tree (its NDCG@ndcgAt on each set). */
export interface TrainProgress {
  /** Trees grown so far. */
  tree: number;
  /** The most trees training will grow. */
  trees: number;
  trainNdcg?: number;
  validNdcg?: number;
}

/** Every row starts at 0: ranking only compares scores, so the base moves nothing. */
const BASE_SCORE = 0;

/** The features a tree may use: all, or `featureFraction` of them drawn with the seeded generator. */
function drawFeatures(all: number, fraction: number, random: () => number, into: Int32Array): number {
  if (fraction >= 1) {
    for (let f = 0; f < all; f++) into[f] = f;
    return all;
  }
  const count = Math.max(1, Math.round(all * fraction));
  const pool = Array.from({ length: all }, (_, f) => f);
  for (let i = 0; i < count; i++) {
    const j = i + Math.floor(random() * (all - i));
    [pool[i], pool[j]] = [pool[j] as number, pool[i] as number];
  }
  const chosen = pool.slice(0, count).sort((a, b) => a - b);
  into.set(chosen);
  return count;
}

function sameFeatures(train: RankingDataset, validation: RankingDataset): void {
  const a = train.features;
  const b = validation.features;
  if (a.length !== b.length || a.some((name, i) => name !== b[i])) {
    throw new TrainingInputError(
      'the validation set has other features than the training set (same names, same order)',
    );
  }
}

/**
 * Trains a LambdaMART ranking model: gradient-boosted trees on histogram bins, fitted to |ΔNDCG|-weighted
 * pairwise gradients with Newton leaf values and L2 regularisation (XGBoost's `rank:ndcg` with
 * `tree_method=hist`), on one thread. With a validation set it reports NDCG@ndcgAt after each tree and
 * stops early, keeping the trees up to the best one. Throws a {@link TrainingInputError} on a bad
 * option or a data set with nothing to learn (no group with a positive label).
 *
 * @example
 * ```ts
 * import { writeFile } from 'node:fs/promises';
 * import { type RankingDataset, splitByGroups, trainLambdaMart } from 'rankd/training';
 *
 * declare const dataset: RankingDataset;
 * const { train, validation } = splitByGroups(dataset, 0.2); // the latest 20% of groups
 * const model = trainLambdaMart(train, { trees: 50 }, validation, (p) => console.log(p.tree, p.validNdcg));
 * await writeFile('ranker.json', model.toXGBoostJsonText()); // loads in gbdtModel and in XGBoost
 * ```
 */
export function trainLambdaMart(
  train: RankingDataset,
  options: TrainOptions = {},
  validation?: RankingDataset,
  onProgress?: (progress: TrainProgress) => void,
): TrainedModel {
  const resolved = resolveTrainOptions(options);
  checkDataset(train, 'training set');
  if (validation !== undefined) {
    checkDataset(validation, 'validation set');
    sameFeatures(train, validation);
  }
  const width = train.features.length;
  const k = resolved.ndcgAt;
  const objective = new LambdaObjective(train.labels, train.groups, k, train.weights);
  if (objective.scoredGroups === 0) {
    throw new TrainingInputError('no query group of the training set has a positive label: nothing to learn');
  }
  if (
    validation !== undefined &&
    Number.isNaN(
      ndcgAt(new Float64Array(validation.rows), validation.labels, validation.groups, k, validation.weights),
    )
  ) {
    throw new TrainingInputError(
      'no query group of the validation set has a positive label: nothing to validate on',
    );
  }
  const binned = binFeatures(train.values, train.rows, width, resolved.maxBins);
  const grower = new TreeGrower(binned, resolved);
  const random = seededRandom(resolved.seed);
  const active = new Int32Array(width);
  const grad = new Float64Array(train.rows);
  const hess = new Float64Array(train.rows);
  const scores = new Float32Array(train.rows).fill(BASE_SCORE);
  const validScores = validation ? new Float32Array(validation.rows).fill(BASE_SCORE) : undefined;
  const trees: TrainedTree[] = [];
  const history: TreeHistory[] = [];
  let best = -1;
  let bestNdcg = Number.NEGATIVE_INFINITY;
  let pending: Omit<TreeHistory, 'trainNdcg' | 'lossAfter'> | undefined;
  const settle = (trainNdcg: number, lossAfter: number) => {
    if (pending === undefined) return;
    const entry: TreeHistory = { ...pending, trainNdcg, lossAfter };
    history.push(entry);
    onProgress?.({
      tree: entry.tree,
      trees: resolved.trees,
      trainNdcg,
      ...(entry.validNdcg === undefined ? {} : { validNdcg: entry.validNdcg }),
    });
    pending = undefined;
  };
  for (let t = 0; t < resolved.trees; t++) {
    const stats = objective.gradients(scores, grad, hess, resolved.reportLoss);
    settle(stats.ndcg, stats.previousLoss);
    const activeCount = drawFeatures(width, resolved.featureFraction, random, active);
    const tree = grower.grow(grad, hess, active, activeCount, scores);
    trees.push(tree);
    let validNdcg: number | undefined;
    if (validation !== undefined && validScores !== undefined) {
      for (let r = 0; r < validation.rows; r++) {
        validScores[r] = (validScores[r] as number) + treeLeafValue(tree, validation.values, r * width);
      }
      validNdcg = ndcgAt(validScores, validation.labels, validation.groups, k, validation.weights);
    }
    pending = { tree: t + 1, lossBefore: stats.loss, ...(validNdcg === undefined ? {} : { validNdcg }) };
    if (validNdcg !== undefined && resolved.earlyStoppingRounds > 0) {
      if (validNdcg > bestNdcg) {
        bestNdcg = validNdcg;
        best = t;
      } else if (t - best >= resolved.earlyStoppingRounds) {
        break;
      }
    } else {
      best = t;
    }
  }
  const last = objective.gradients(scores, grad, hess, resolved.reportLoss);
  settle(last.ndcg, last.previousLoss);
  return new TrainedModel(train.features, trees.slice(0, best + 1), BASE_SCORE, history, best, resolved);
}
