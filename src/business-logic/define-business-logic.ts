import type { EntityOf, EntityType } from '../entities/define-entity.js';
import type { RankdRequest } from '../features/define-realtime-features.js';
import type { Component } from '../request/component.js';

type MaybePromise<T> = T | Promise<T>;

/**
 * A candidate with its current score, as business logic sees it.
 *
 * @example
 * ```ts
 * import { defineBusinessLogic, type ScoredCandidate } from 'rankd';
 * import { Product } from './pipelines/product-ranking/schemas.js';
 *
 * const halveUnpriced = (candidate: ScoredCandidate<typeof Product>) => {
 *   if (candidate.entity.price == null) candidate.score /= 2;
 *   return candidate;
 * };
 * export const Unpriced = defineBusinessLogic({
 *   name: 'Unpriced',
 *   entity: Product,
 *   apply: (candidates) => candidates.map(halveUnpriced),
 * });
 * ```
 */
export interface ScoredCandidate<E extends EntityType = EntityType> {
  /** The hydrated candidate. */
  readonly entity: EntityOf<E>;
  /** Its id (the candidate's id field, as a string). */
  readonly id: string;
  score: number;
}

/**
 * What a step did to one candidate, as an explanation says it: `boost`, "boost ×1.2 (brand = Acme)".
 *
 * @example
 * ```ts
 * import type { StepNote } from 'rankd';
 *
 * // What a custom step's `describe` returns for a candidate it moved.
 * const note: StepNote = { action: 'demote', description: 'demoted: out of stock (−1)' };
 * console.log(note.description);
 * ```
 */
export interface StepNote {
  /** One word: `boost`, `pin`, `filter`, `demote`, `dedupe`, `diversity`, `custom`, ... */
  readonly action: string;
  /** In words and figures: "pinned to position 1", "demoted: out of stock". */
  readonly description: string;
}

/**
 * Given to a step's `apply` only when the request asked for an explanation (else undefined, so
 * steps pay nothing): the step says what it did to a candidate, or why it dropped it.
 *
 * @example
 * ```ts
 * import { defineBusinessLogic } from 'rankd';
 *
 * // A step that halves scores below 1 and says so when the request is explained.
 * export const HalveWeak = defineBusinessLogic({
 *   name: 'HalveWeak',
 *   apply(candidates, _request, trace) {
 *     for (const candidate of candidates) {
 *       if (candidate.score >= 1) continue;
 *       candidate.score /= 2;
 *       trace?.note(candidate, 'demote', 'halved: score below 1');
 *     }
 *     return candidates;
 *   },
 * });
 * ```
 */
export interface StepTrace {
  /** Says what the step did to `candidate` (or why it dropped it): one word, then words and figures. */
  note(candidate: ScoredCandidate, action: string, description: string): void;
}

/**
 * One candidate before and after a step, as a custom step's `describe` is told it. Positions count from 1.
 *
 * @example
 * ```ts
 * import type { StepChange, StepNote } from 'rankd';
 *
 * // A `describe` for a step that only ever lowers scores.
 * function describe(change: StepChange): StepNote | undefined {
 *   if (change.score_after === null) return { action: 'filter', description: 'dropped' };
 *   const lost = change.score_before - change.score_after;
 *   return lost > 0 ? { action: 'demote', description: `−${lost.toFixed(2)}` } : undefined;
 * }
 * console.log(describe);
 * ```
 */
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
 *
 * @example
 * ```ts
 * import type { BusinessLogicStep } from 'rankd';
 * import { Product } from './pipelines/product-ranking/schemas.js';
 *
 * // A step without defineBusinessLogic: any object of this shape will do.
 * export const Cheapest: BusinessLogicStep<typeof Product> = {
 *   name: 'Cheapest',
 *   apply: (candidates) =>
 *     candidates.map((c) => ({ ...c, score: c.score - (c.entity.price ?? 0) / 100 })),
 * };
 * ```
 */
export interface BusinessLogicStep<E extends EntityType = EntityType> extends Component {
  /** Returns the candidates to keep, with their new scores; they arrive sorted by descending score. */
  apply(
    candidates: Array<ScoredCandidate<E>>,
    request: RankdRequest,
    trace?: StepTrace,
  ): MaybePromise<Array<ScoredCandidate<E>>>;
  /**
   * Optional: says in words what the step did to a candidate whose score or position it changed
   * (or that it dropped), for explanations; called only when one is asked for. Without it (and
   * without a note through `trace`), an explanation gives the scores and positions before and after.
   *
   * @example
   * ```ts
   * describe: (c) => (c.score_after! < c.score_before ? 'demoted: out of stock' : undefined)
   * ```
   */
  describe?(change: StepChange<E>, request: RankdRequest): string | StepNote | undefined;
  /**
   * Whether the step decides what stands together on a page and where (`pin`, `dedupe`,
   * `diversity` and `filter` do) rather than what a candidate is worth. On an interleaved page
   * (docs/reference/experiments.md) such a step runs again on the merged page. @defaultValue false
   */
  readonly positional?: boolean;
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

/**
 * Declares a business-logic step.
 *
 * @example
 * ```ts
 * import { defineBusinessLogic, getFeature } from 'rankd';
 * import { Product } from './pipelines/product-ranking/schemas.js';
 *
 * // Pushes sold-out products down; reads a real-time feature, so it lists it.
 * export const SoldOutDemotion = defineBusinessLogic({
 *   name: 'SoldOutDemotion',
 *   entity: Product,
 *   features: ['realtime_product:in_stock'],
 *   apply(candidates) {
 *     for (const candidate of candidates)
 *       if (getFeature(candidate.entity, 'realtime_product:in_stock') === false) candidate.score -= 1;
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
