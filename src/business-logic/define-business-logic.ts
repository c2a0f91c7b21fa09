import type { EntityOf, EntityType } from '../entities/define-entity.js';
import type { RankdRequest } from '../features/define-realtime-features.js';
import type { Component } from '../request/component.js';

type MaybePromise<T> = T | Promise<T>;

/** A candidate with its current score, as business logic sees it. */
export interface ScoredCandidate<E extends EntityType = EntityType> {
  /** The hydrated candidate. */
  readonly entity: EntityOf<E>;
  /** Its id (the candidate's id field, as a string). */
  readonly id: string;
  score: number;
}

/**
 * A business-logic step: gets the candidates sorted by descending score, returns them with
 * changed scores (or fewer of them); the pipeline re-sorts after every step.
 */
export interface BusinessLogicStep<E extends EntityType = EntityType> extends Component {
  apply(
    candidates: Array<ScoredCandidate<E>>,
    request: RankdRequest,
  ): MaybePromise<Array<ScoredCandidate<E>>>;
}

/**
 * Sorts `items` in place by descending score, stably (equal scores keep their order), and returns
 * them. Most steps change few scores or none: a pass that finds the order already right is much
 * cheaper than a sort, which copies the list into work arrays however sorted it is.
 */
export function sortByScore<T extends { score: number }>(items: T[]): T[] {
  for (let i = 1; i < items.length; i++) {
    if ((items[i] as T).score > (items[i - 1] as T).score) return items.sort((a, b) => b.score - a.score);
  }
  return items;
}

/** Declares a business-logic step. */
export function defineBusinessLogic<E extends EntityType>(
  options: BusinessLogicStep<E> & { entity?: E },
): BusinessLogicStep<E> {
  return options;
}
