import type { EntityType } from '../entities/define-entity.js';
import { type BusinessLogicStep, defineBusinessLogic } from './define-business-logic.js';
import { type KeyBy, keyLabel, keyReader } from './keys.js';
import { componentOf, type StepOptions, sortedByScore } from './step-options.js';

/** How {@link dedupe} is configured. */
export interface DedupeOptions<E extends EntityType = EntityType> extends StepOptions<E> {
  /** What makes two candidates duplicates: `'id'`, an attribute, or a function of the entity. */
  by: KeyBy<E>;
}

/**
 * Keeps the highest-scored candidate per key (on equal scores, the first) and drops the others. A
 * candidate without a key is never a duplicate; with several keys, one is dropped when any of its
 * keys belongs to a candidate kept. The kept candidates keep their order and scores.
 *
 * @example
 * import { dedupe } from 'rankd';
 * import { Product } from './pipelines/product-ranking/schemas.js';
 * export const OnePerTitle = dedupe({ entity: Product, by: (p) => p.title?.trim().toLowerCase() });
 */
export function dedupe<E extends EntityType = EntityType>(options: DedupeOptions<E>): BusinessLogicStep<E> {
  const keysOf = keyReader(options.by);
  return defineBusinessLogic<E>({
    ...componentOf(options, 'dedupe'),
    positional: true,
    apply(candidates, _request, trace) {
      // The id of the candidate kept for each key: the one a dropped candidate duplicates.
      const seen = new Map<string, string>();
      // Sorted again so 'the highest-scored' holds even for a caller that did not sort.
      return sortedByScore(candidates).filter((candidate) => {
        const keys = keysOf(candidate);
        const taken = keys.find((key) => seen.has(key));
        if (taken !== undefined) {
          trace?.note(
            candidate,
            'dedupe',
            `duplicate of ${seen.get(taken)} (${keyLabel(options.by)} = ${taken})`,
          );
          return false;
        }
        for (const key of keys) seen.set(key, candidate.id);
        return true;
      });
    },
  });
}
