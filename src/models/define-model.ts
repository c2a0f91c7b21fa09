import type { EntityOf, EntityType } from '../entities/define-entity.js';
import type { Component, RankdRequest } from '../request/component.js';
import { contributedRows, type Explanation, type ModelContributions } from './explain/explanation.js';
import { featureMatrix } from './feature-matrix.js';
import type { Scores } from './scores.js';

type MaybePromise<T> = T | Promise<T>;

export type { Scores } from './scores.js';

/** A model: scores a batch of entities. Reads features with `getFeature`. */
export interface Model<E extends EntityType = EntityType> extends Component {
  /** Recorded in MODEL events, so training data says which model scored. */
  readonly version?: string;
  /** One score per entity, in order; a missing or non-finite score ranks as 0. */
  score(entities: ReadonlyArray<EntityOf<E>>, request: RankdRequest): MaybePromise<Scores>;
  /**
   * Scores as `score` does and says why, one {@link Explanation} per entity. Called only when
   * explanations are asked for; `explainModel` explains a model without one too.
   */
  explain?(entities: ReadonlyArray<EntityOf<E>>, request: RankdRequest): MaybePromise<readonly Explanation[]>;
}

/** What {@link defineModel} takes: a model, and optionally its exact contributions. */
export interface ModelOptions<E extends EntityType> extends Model<E> {
  /** Only types `score`'s entities. */
  entity?: E;
  /**
   * For explanations: per entity, the bias and each feature's contribution, `bias + Σ contributions`
   * being the score. Without it (and `explain`), explanations give the model's inputs only.
   */
  contributions?(
    entities: ReadonlyArray<EntityOf<E>>,
    request: RankdRequest,
  ): MaybePromise<readonly ModelContributions[]>;
}

/**
 * Declares a model.
 *
 * @example
 * ```ts
 * import { defineModel, featureColumns } from 'rankd';
 * import { Product } from './pipelines/product-ranking/schemas.js';
 *
 * export const RankingModel = defineModel({
 *   name: 'RankingModel',
 *   entity: Product,
 *   features: ['text_match:title', 'product_stats:popularity'],
 *   score(products) {
 *     const [title, popularity] = featureColumns(products, ['text_match:title', 'product_stats:popularity']);
 *     return products.map((_, i) => 5 * (title[i] || 0) + 0.5 * (popularity[i] || 0)); // one per product
 *   },
 * });
 * ```
 */
export function defineModel<E extends EntityType>(options: ModelOptions<E>): Model<E> {
  const contributions = options.contributions;
  if (contributions === undefined || options.explain !== undefined) return options;
  const features = options.features ?? [];
  return {
    ...options,
    async explain(entities, request) {
      const scores = await options.score(entities, request);
      const rows = await contributions(entities, request);
      return contributedRows(features, featureMatrix(entities, features), rows, scores);
    },
  };
}
