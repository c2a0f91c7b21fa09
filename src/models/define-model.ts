import type { EntityOf, EntityType } from '../entities/define-entity.js';
import type { RankdRequest } from '../features/define-realtime-features.js';
import type { Component } from '../request/component.js';
import type { Explanation } from './explain/explanation.js';
import type { Scores } from './scores.js';

type MaybePromise<T> = T | Promise<T>;

export type { Scores } from './scores.js';

/** A model: scores a batch of entities. Reads features with `getFeature`. */
export interface Model<E extends EntityType = EntityType> extends Component {
  /** Recorded in MODEL events, so training data says which model scored. */
  readonly version?: string;
  score(entities: ReadonlyArray<EntityOf<E>>, request: RankdRequest): MaybePromise<Scores>;
  /**
   * Optional: scores the batch as `score` does and says why, one {@link Explanation} per entity
   * (inputs, and each input's contribution where the model can tell). Off the scoring path: only
   * called when explanations are asked for. `explainModel` explains a model without one too.
   */
  explain?(entities: ReadonlyArray<EntityOf<E>>, request: RankdRequest): MaybePromise<readonly Explanation[]>;
}

/**
 * Declares a model.
 *
 * @example
 * ```ts
 * const RankingModel = defineModel({
 *   name: 'RankingModel', entity: Product, features: ['text_match:title'],
 *   score: (products) => products.map((p) => Number(getFeature(p, 'text_match:title'))),
 * });
 * ```
 */
export function defineModel<E extends EntityType>(options: Model<E> & { entity?: E }): Model<E> {
  return options;
}
