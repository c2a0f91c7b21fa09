import type { EntityOf, EntityType } from '../entities/define-entity.js';
import type { Component, RankdRequest } from '../request/component.js';

type MaybePromise<T> = T | Promise<T>;

/** A candidate with its current score, as business logic sees it. */
export interface ScoredCandidate<E extends EntityType = EntityType> {
  /** The hydrated candidate. */
  readonly entity: EntityOf<E>;
  /** The candidate's id field, as a string. */
  readonly id: string;
  score: number;
}

/** What a step did to one candidate, as an explanation says it: `boost`, "boost ×1.2 (brand = Acme)". */
export interface StepNote {
  /** One word: `boost`, `pin`, `filter`, `demote`, `dedupe`, `diversity`, `custom`, ... */
  readonly action: string;
  /** In words and figures: "pinned to position 1", "demoted: out of stock". */
  readonly description: string;
}

/**
 * Given to a step's `apply` only when the request asked for an explanation (else undefined, so
 * steps pay nothing): the step says what it did to a candidate, or why it dropped it.
 */
export interface StepTrace {
  /** One word, then words and figures. */
  note(candidate: ScoredCandidate, action: string, description: string): void;
}

/** One candidate before and after a step, as a custom step's `describe` is told it. Positions count from 1. */
export interface StepChange<E extends EntityType = EntityType> {
  readonly entity: EntityOf<E>;
  readonly id: string;
  readonly score_before: number;
  /** Null when the step dropped the candidate. */
  readonly score_after: number | null;
  readonly position_before: number;
  /** Null when the step dropped the candidate. */
  readonly position_after: number | null;
}

/**
 * A business-logic step: gets the candidates sorted by descending score, returns them with
 * changed scores (or fewer of them); the pipeline re-sorts after every step.
 */
export interface BusinessLogicStep<E extends EntityType = EntityType> extends Component {
  /** The candidates to keep, with their new scores. */
  apply(
    candidates: Array<ScoredCandidate<E>>,
    request: RankdRequest,
    trace?: StepTrace,
  ): MaybePromise<Array<ScoredCandidate<E>>>;
  /**
   * Says in words what the step did to a candidate it moved or dropped, for explanations; called
   * only when one is asked for. Without it (or a `trace` note), an explanation gives the scores and
   * positions before and after.
   *
   * @example
   * describe: (c) => (c.score_after! < c.score_before ? 'demoted: out of stock' : undefined)
   */
  describe?(change: StepChange<E>, request: RankdRequest): string | StepNote | undefined;
  /**
   * Whether the step decides what stands together on a page and where (`pin`, `dedupe`, `diversity`,
   * `filter`) rather than what a candidate is worth: such a step runs again on an interleaved page.
   * @defaultValue false
   */
  readonly positional?: boolean;
}

/**
 * Sorts `items` in place by descending score, stably. Most steps change few scores: a pass that
 * finds the order already right is much cheaper than a sort, which copies the list however sorted.
 */
export function sortByScore<T extends { score: number }>(items: T[]): T[] {
  for (let i = 1; i < items.length; i++) {
    if ((items[i] as T).score > (items[i - 1] as T).score) return items.sort((a, b) => b.score - a.score);
  }
  return items;
}

/**
 * Declares a business-logic step.
 *
 * @example
 * ```ts
 * import { defineBusinessLogic, getFeature } from 'rankd';
 * import { Product } from './pipelines/product-ranking/schemas.js';
 *
 * export const SoldOutDemotion = defineBusinessLogic({
 *   name: 'SoldOutDemotion',
 *   entity: Product,
 *   features: ['realtime_product:in_stock'], // what it reads, declared
 *   apply(candidates) {
 *     for (const c of candidates)
 *       if (getFeature(c.entity, 'realtime_product:in_stock') === false) c.score -= 1;
 *     return candidates;
 *   },
 * });
 * ```
 */
export function defineBusinessLogic<E extends EntityType>(
  options: BusinessLogicStep<E> & { entity?: E },
): BusinessLogicStep<E> {
  return options;
}
