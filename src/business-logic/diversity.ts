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

/** How {@link diversity} is configured. */
export interface DiversityOptions<E extends EntityType = EntityType> extends StepOptions<E> {
  /** What is capped per page: `'id'`, an attribute (`'brand'`), or a function of the entity. */
  by: KeyBy<E>;
  /** At most this many candidates per value on one page (an integer ≥ 1). */
  maxPerValue: number;
}

/**
 * At most `maxPerValue` candidates per value of `by` on each page of the request's `user_page_size`
 * (default 10), score order otherwise.
 *
 * Greedy, position by position: each takes the best remaining candidate that fits its page (each
 * of its values under the cap), so one over the cap moves down to the first position where it fits.
 * Candidates without a value are never capped; when none fits (one brand left), the page is filled
 * in score order. Every page of the whole candidate list is diversified, on the request's user page
 * boundaries (docs/reference/business-logic.md).
 *
 * Scores change as little as possible: a longest run of never-increasing scores in the new order
 * keeps theirs; each other candidate gets one between its new neighbours, as for pins.
 *
 * @example
 * import { diversity } from 'rankd';
 * export const TwoPerBrand = diversity({ by: 'brand', maxPerValue: 2 }); // on each page the user sees
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
