import type { EntityType } from '../entities/define-entity.js';
import { type ScoredCandidate, sortByScore } from './define-business-logic.js';

/** Options every ready-made step takes. */
export interface StepOptions<E extends EntityType = EntityType> {
  /**
   * Shown in BUSINESS_LOGIC events (`business_logic_name`).
   * @defaultValue the step's kind: `boost`, `pin`, `filter`, `dedupe` or `diversity`
   */
  name?: string;
  /**
   * Features the step's functions read with `getFeature` (`view:feature`), so they are fetched
   * or computed before the pipeline runs — as for any component.
   */
  features?: readonly string[];
  /** Only types the step's functions: `entity: Product` makes `by`, `keep`, ... receive products. */
  entity?: E;
}

/** The component part of a step: its name and features. */
export function componentOf<E extends EntityType>(options: StepOptions<E>, kind: string) {
  return {
    name: options.name ?? kind,
    ...(options.features ? { features: options.features } : {}),
  };
}

/** A stable sort by descending score, on a copy: the order the pipeline's own re-sort keeps. */
export function sortedByScore<E extends EntityType>(
  candidates: ReadonlyArray<ScoredCandidate<E>>,
): Array<ScoredCandidate<E>> {
  return sortByScore([...candidates]);
}
