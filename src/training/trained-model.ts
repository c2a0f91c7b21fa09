import { TrainingInputError } from '../errors/index.js';
import type { ResolvedTrainOptions } from './train-options.js';
import { type TrainedTree, treeLeafValue } from './trained-tree.js';
import { xgboostDocument, xgboostJsonText } from './xgboost-writer.js';

/** What training measured after one tree. */
export interface TreeHistory {
  /** Trees in the model at this point (1 for the first tree). */
  readonly tree: number;
  /** NDCG@ndcgAt on the training set after this tree. */
  readonly trainNdcg: number;
  /** NDCG@ndcgAt on the validation set after this tree, when there is one. */
  readonly validNdcg?: number;
  /**
   * The LambdaMART objective this tree was fitted to, on the training set, before and after it
   * was added: Σ over pairs (higher label i, lower label j) of |ΔNDCG_ij| · log(1 + e^−(s_i − s_j)),
   * with |ΔNDCG| taken from the ranking before the tree, averaged over the query groups. The
   * weights follow the ranking, so this is a different function for each tree: what a tree
   * must not do is make its own worse (`lossAfter ≤ lossBefore`). NaN unless the option
   * `reportLoss` is on.
   */
  readonly lossBefore: number;
  readonly lossAfter: number;
}

/** How much a feature's splits reduced the training objective. */
export interface FeatureImportance {
  readonly feature: string;
  /** Total loss reduction of the feature's splits (XGBoost's `total_gain`). */
  readonly gain: number;
  /** How many splits use it. */
  readonly splits: number;
}

/**
 * A trained LambdaMART model: its trees, what training measured, and the XGBoost JSON file that
 * rankd's `gbdtModel` (and XGBoost) load to give the same scores as {@link predict}.
 *
 * @example
 * ```ts
 * import { writeFile } from 'node:fs/promises';
 * import { type RankingDataset, trainLambdaMart } from 'rankd/training';
 *
 * declare const dataset: RankingDataset;
 * const model = trainLambdaMart(dataset, { trees: 20 });
 * const scores = model.predict(dataset.values, dataset.rows); // one per row
 * await writeFile('ranker.json', model.toXGBoostJsonText()); // for gbdtModel, or XGBoost
 * ```
 */
export class TrainedModel {
  constructor(
    /** Input columns, in order. */
    readonly features: readonly string[],
    /** The trees kept: up to and including the best iteration. */
    readonly trees: readonly TrainedTree[],
    /** Every row's starting score (the file's `base_score`). */
    readonly baseScore: number,
    /** One entry per tree grown, kept or not (trees after `bestIteration` were dropped). */
    readonly history: readonly TreeHistory[],
    /**
     * The 0-based index of the last tree kept: the best on validation NDCG with early stopping,
     * else (no validation set, or `earlyStoppingRounds` 0) the last tree grown.
     */
    readonly bestIteration: number,
    /** The options it was trained with, defaults filled in. */
    readonly options: ResolvedTrainOptions,
  ) {}

  /**
   * Scores a row-major `rows × features` matrix (NaN for missing), as rankd's served `gbdtModel`
   * does: values compared as float32, the leaves summed in float32 in tree order, and ±Infinity
   * read as missing, as the served model reads a feature that is not a finite number.
   */
  predict(values: Float64Array, rows: number): Float64Array {
    const width = this.features.length;
    if (values.length !== rows * width) {
      throw new TrainingInputError(`${values.length} values for ${rows} rows × ${width} features`);
    }
    const out = new Float64Array(rows);
    const scores = new Float32Array(rows).fill(this.baseScore);
    for (const tree of this.trees) {
      for (let r = 0; r < rows; r++)
        scores[r] = (scores[r] as number) + treeLeafValue(tree, values, r * width);
    }
    out.set(scores);
    return out;
  }

  /** Every feature with its total split gain and split count, most important first. */
  featureImportance(): FeatureImportance[] {
    const gain = new Float64Array(this.features.length);
    const splits = new Uint32Array(this.features.length);
    for (const tree of this.trees) {
      for (let node = 0; node < tree.left.length; node++) {
        if ((tree.left[node] as number) < 0) continue;
        const f = tree.feature[node] as number;
        gain[f] = (gain[f] as number) + (tree.gain[node] as number);
        splits[f] = (splits[f] as number) + 1;
      }
    }
    return this.features
      .map((feature, f) => ({ feature, gain: gain[f] as number, splits: splits[f] as number }))
      .sort((a, b) => b.gain - a.gain || a.feature.localeCompare(b.feature));
  }

  /**
   * The model as XGBoost's JSON document (objective `rank:ndcg`). Serialise it with
   * {@link toXGBoostJsonText}: `JSON.stringify` writes `0` for a float 0, which XGBoost refuses.
   */
  toXGBoostJson(): Record<string, unknown> {
    return xgboostDocument(this.trees, this.features, this.baseScore);
  }

  /** The model file: XGBoost JSON text that `gbdtModel` and `xgb.Booster(model_file=...)` load. */
  toXGBoostJsonText(): string {
    return xgboostJsonText(this.toXGBoostJson());
  }
}
