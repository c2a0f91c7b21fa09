import type { EntityType } from '../entities/define-entity.js';
import { AppDefinitionError } from '../errors/index.js';
import { pageLayout } from '../request/pagination.js';
import {
  type BusinessLogicStep,
  defineBusinessLogic,
  type ScoredCandidate,
} from './define-business-logic.js';
import { fitScores, longestNonIncreasing } from './fit-scores.js';
import { type KeyBy, keyLabel, keyReader } from './keys.js';
import { componentOf, type StepOptions, sortedByScore } from './step-options.js';

/**
 * How {@link diversity} is configured.
 *
 * @example
 * ```ts
 * import { type DiversityOptions, diversity } from 'rankd';
 *
 * const options: DiversityOptions = { by: 'brand', maxPerValue: 2 };
 * export const TwoPerBrand = diversity(options);
 * ```
 */
export interface DiversityOptions<E extends EntityType = EntityType> extends StepOptions<E> {
  /** What is capped per page: `'id'`, an attribute (`'brand'`), or a function of the entity. */
  by: KeyBy<E>;
  /** At most this many candidates per value on one page (an integer ≥ 1). */
  maxPerValue: number;
}

/**
 * At most `maxPerValue` candidates per value of `by` on each page of the request's
 * `user_page_size` (default 10), score order otherwise.
 *
 * Greedy, page by page and position by position: each position takes the best-scored remaining
 * candidate that still fits its page (every one of its values under the cap). A candidate that
 * would exceed the cap thus moves down to the first later position where it fits. Candidates
 * without a value are never capped. When no remaining candidate fits a page (say only one brand is
 * left), the page is filled in score order regardless. Every page of the whole candidate list is
 * diversified, so each user page of the same request is; page boundaries are those of the
 * request's user pages (docs/reference/business-logic.md).
 *
 * Scores change as little as possible: the candidates of a longest run whose scores never
 * increase in the new order keep theirs; each other one gets a score between its new neighbours
 * (as for pins), so the pipeline's stable re-sort keeps this order.
 *
 * @example
 * ```ts
 * import { diversity } from 'rankd';
 *
 * // At most two products of one brand on each page the user sees.
 * export const TwoPerBrand = diversity({ by: 'brand', maxPerValue: 2 });
 * ```
 */
export function diversity<E extends EntityType = EntityType>(
  options: DiversityOptions<E>,
): BusinessLogicStep<E> {
  const cap = options.maxPerValue;
  if (!Number.isInteger(cap) || cap < 1)
    throw new AppDefinitionError(`diversity: maxPerValue must be an integer ≥ 1, got ${cap}`);
  const keysOf = keyReader(options.by);
  return defineBusinessLogic<E>({
    ...componentOf(options, 'diversity'),
    positional: true,
    apply(candidates, request, trace) {
      const sorted = sortedByScore(candidates);
      const { size, offset } = pageLayout(request);
      const keys = sorted.map((candidate) => keysOf(candidate));
      const remaining = sorted.map((_, index) => index);
      const order: number[] = [];
      let onPage = new Map<string, number>();
      while (remaining.length > 0) {
        if ((order.length - offset) % size === 0) onPage = new Map();
        const fits = remaining.findIndex((index) =>
          (keys[index] ?? []).every((key) => (onPage.get(key) ?? 0) < cap),
        );
        const [index] = remaining.splice(Math.max(fits, 0), 1) as [number];
        for (const key of keys[index] ?? []) onPage.set(key, (onPage.get(key) ?? 0) + 1);
        order.push(index);
      }
      const ordered = order.map((index) => sorted[index] as ScoredCandidate<E>);
      if (trace !== undefined) {
        const label = keyLabel(options.by);
        order.forEach((index, position) => {
          if (position <= index) return;
          const values = (keys[index] ?? []).join(', ');
          trace.note(
            sorted[index] as ScoredCandidate<E>,
            'diversity',
            `moved down ${position - index}: at most ${cap} per ${label} on a page (${label} = ${values})`,
          );
        });
      }
      // As many candidates as possible keep their scores: those of a longest non-increasing run.
      const kept = longestNonIncreasing(ordered.map((candidate) => candidate.score));
      return fitScores(ordered, (i) => kept[i] === true);
    },
  });
}
