import type { RankdRequest } from '../../request/component.js';
import type { Model, Scores } from '../define-model.js';
import { featureMatrix } from '../feature-matrix.js';
import { type Explanation, unexplainedRows } from './explanation.js';

type MaybePromise<T> = T | Promise<T>;

/** The reason given for a model that has no `explain` (one written with `defineModel`). */
export const NOT_EXPLAINED = 'the model does not explain its scores';

/** What can be explained: a model, or a snapshot of one (the version a request took). */
interface Explainable {
  score(entities: readonly object[], request: RankdRequest): MaybePromise<Scores>;
  explain?(entities: readonly object[], request: RankdRequest): MaybePromise<readonly Explanation[]>;
}

/**
 * Explains a batch with `scorer`'s own `explain` when it has one; else gives its scores, the
 * inputs `features` and contributions marked not available. Runs inside a request, like `score`.
 */
export async function explainWith(
  scorer: Explainable,
  features: readonly string[],
  entities: readonly object[],
  request: RankdRequest,
): Promise<Explanation[]> {
  if (scorer.explain) return [...(await scorer.explain(entities, request))];
  const scores = await scorer.score(entities, request);
  return unexplainedRows(features, featureMatrix(entities, features), scores, NOT_EXPLAINED);
}

/**
 * Explains a batch of entities with any model: per entity its score, inputs and, for linear and tree
 * models, each input's contribution to the margin. Runs the model inside a request, like `score`.
 *
 * @example
 * ```ts
 * import { explainModel, type RankdRequest } from 'rankd';
 * import { RankingModel } from './pipelines/product-ranking/models.js';
 *
 * // In pipeline code: why the first candidate scored what it did.
 * const why = async (top: object, request: RankdRequest) =>
 *   (await explainModel(RankingModel, [top], request))[0];
 * ```
 */
export function explainModel(
  model: Model,
  entities: readonly object[],
  request: RankdRequest,
): Promise<Explanation[]> {
  // A model's `score` takes its own entity type; any object of the request is one here.
  return explainWith(model as unknown as Explainable, model.features ?? [], entities, request);
}
