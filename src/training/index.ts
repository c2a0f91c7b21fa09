/**
 * `rankd/training`: training ranking models offline: LambdaMART gradient-boosted trees written as XGBoost JSON, the file
 * rankd's `gbdtModel` serves. `rankd train` builds its data set from the event log and calls
 * {@link trainLambdaMart}.
 *
 * @example
 * const { train, validation } = splitByGroups(datasetFromRows(features, rows), 0.2);
 * const model = trainLambdaMart(train, { trees: 300, maxDepth: 6 }, validation);
 * console.log(ndcgAt(model.predict(validation.values, validation.rows), validation.labels, validation.groups, 10));
 */
export { TrainingInputError } from '../errors/index.js';
export type { RankingDataset } from './dataset.js';
export { datasetFromRows, type RankingRow } from './dataset-from-rows.js';
export { type TrainProgress, trainLambdaMart } from './lambdamart.js';
export { ndcgAt } from './ndcg.js';
export { splitByGroups } from './split-dataset.js';
export type { TrainOptions } from './train-options.js';
export { type FeatureImportance, TrainedModel, type TreeHistory } from './trained-model.js';
