import { TrainingInputError } from '../errors/index.js';
import type { RankingDataset } from './dataset.js';

/** The query groups `[fromGroup, toGroup)` of a data set, as a data set of their own (copies). */
export function sliceGroups(dataset: RankingDataset, fromGroup: number, toGroup: number): RankingDataset {
  const width = dataset.features.length;
  let firstRow = 0;
  for (let g = 0; g < fromGroup; g++) firstRow += dataset.groups[g] as number;
  let endRow = firstRow;
  for (let g = fromGroup; g < toGroup; g++) endRow += dataset.groups[g] as number;
  return {
    features: dataset.features,
    rows: endRow - firstRow,
    values: dataset.values.slice(firstRow * width, endRow * width),
    labels: dataset.labels.slice(firstRow, endRow),
    groups: dataset.groups.slice(fromGroup, toGroup),
    ...(dataset.weights === undefined ? {} : { weights: dataset.weights.slice(firstRow, endRow) }),
  };
}

/**
 * A time split by query group: the latest `validationFraction` of the groups for validation, the
 * rest for training; no group is cut in two. Throws a {@link TrainingInputError} when either part
 * would be empty.
 *
 * @example
 * import { type RankingDataset, splitByGroups } from 'rankd/training';
 * declare const dataset: RankingDataset; // 20 groups
 * const { train, validation } = splitByGroups(dataset, 0.2); // the last 4 for validation
 */
export function splitByGroups(
  dataset: RankingDataset,
  validationFraction = 0.2,
): { train: RankingDataset; validation: RankingDataset } {
  if (!(validationFraction > 0 && validationFraction < 1)) {
    throw new TrainingInputError(
      `validationFraction is ${validationFraction}; it must lie strictly between 0 and 1`,
    );
  }
  const total = dataset.groups.length;
  if (total < 2) {
    throw new TrainingInputError(
      `${total} query groups cannot be split into training and validation groups (at least 2 needed)`,
    );
  }
  const validationGroups = Math.min(total - 1, Math.max(1, Math.round(total * validationFraction)));
  const trainGroups = total - validationGroups;
  return {
    train: sliceGroups(dataset, 0, trainGroups),
    validation: sliceGroups(dataset, trainGroups, total),
  };
}
