import { TrainingInputError } from '../errors/index.js';

/**
 * A learning-to-rank data set: rows of feature values, a graded label per row, and the rows cut into
 * query groups (one per request). A group's rows are consecutive; groups are in time order, so the
 * last are the newest (what {@link splitByGroups} holds out).
 */
export interface RankingDataset {
  /** Column names, in the order of `values`' columns (`group:feature`, as models list them). */
  readonly features: readonly string[];
  /** Number of rows. */
  readonly rows: number;
  /** Row-major values, `rows × features.length`; NaN (and ±Infinity) is a missing value. */
  readonly values: Float64Array;
  /** Each row's grade: 0 is not relevant, higher is better (gain 2^label − 1). At most 31. */
  readonly labels: Float64Array;
  /** The number of rows of each query group, in order; they add up to `rows`. */
  readonly groups: Uint32Array;
  /**
   * Per row, how much it counts as the better row of a pair (its pairs with every lower-labelled
   * row of its group) and its gain in validation NDCG: the inverse of its examination
   * propensity, to learn from clicks without their position bias (docs/reference/training.md).
   * Positive and finite. @defaultValue 1 for every row
   */
  readonly weights?: Float64Array;
}

/** The largest label: 2^label − 1 must stay an exact integer in float32, as XGBoost's gain. */
export const MAX_LABEL = 31;

/**
 * Checks that a data set's parts fit together (sizes, group counts adding up, labels that are
 * grades) and throws a {@link TrainingInputError} naming the first problem.
 */
export function checkDataset(dataset: RankingDataset, name = 'data set'): void {
  const { features, rows, values, labels, groups, weights } = dataset;
  if (!Number.isInteger(rows) || rows < 0) throw new TrainingInputError(`${name}: rows is ${rows}`);
  if (rows === 0) throw new TrainingInputError(`${name}: no rows`);
  if (values.length !== rows * features.length) {
    throw new TrainingInputError(
      `${name}: ${values.length} values for ${rows} rows × ${features.length} features (${rows * features.length} expected)`,
    );
  }
  if (labels.length !== rows) {
    throw new TrainingInputError(`${name}: ${labels.length} labels for ${rows} rows`);
  }
  if (weights !== undefined) {
    if (weights.length !== rows)
      throw new TrainingInputError(`${name}: ${weights.length} weights for ${rows} rows`);
    for (let r = 0; r < rows; r++) {
      const weight = weights[r] as number;
      if (!(weight > 0 && Number.isFinite(weight)))
        throw new TrainingInputError(`${name}: row ${r} has weight ${weight}; weights are positive numbers`);
    }
  }
  let total = 0;
  for (let g = 0; g < groups.length; g++) {
    if (groups[g] === 0) throw new TrainingInputError(`${name}: query group ${g} has no rows`);
    total += groups[g] as number;
  }
  if (total !== rows) {
    throw new TrainingInputError(`${name}: the query groups hold ${total} rows, the data set ${rows}`);
  }
  for (let r = 0; r < rows; r++) {
    const label = labels[r] as number;
    if (!(Number.isInteger(label) && label >= 0 && label <= MAX_LABEL)) {
      throw new TrainingInputError(
        `${name}: row ${r} has label ${label}; labels are whole grades from 0 to ${MAX_LABEL}`,
      );
    }
  }
}
