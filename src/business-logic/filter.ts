import type { EntityOf, EntityType } from '../entities/define-entity.js';
import type { RankdRequest } from '../request/component.js';
import { type BusinessLogicStep, defineBusinessLogic } from './define-business-logic.js';
import { componentOf, type StepOptions } from './step-options.js';

/** How {@link filter} is configured. */
export interface FilterOptions<E extends EntityType = EntityType> extends StepOptions<E> {
  /** True for the candidates to keep. */
  keep: (entity: EntityOf<E>, score: number, request: RankdRequest) => boolean;
  /** Why a candidate is dropped, as explanations say it: "sold out". @defaultValue `filtered out by <name>` */
  reason?: string;
}

/**
 * Drops the candidates for which `keep` is false; the others keep their order and scores. A page may
 * then hold fewer than `user_page_size`: pagination runs after business logic.
 *
 * @example
 * ```ts
 * import { filter } from 'rankd';
 * import { Product } from './pipelines/product-ranking/schemas.js';
 *
 * export const InStockOnly = filter({
 *   entity: Product,
 *   keep: (product, _score, request) => request.in_stock_only !== true || product.number_in_stock !== 0,
 * });
 * ```
 */
export function filter<E extends EntityType = EntityType>(options: FilterOptions<E>): BusinessLogicStep<E> {
  const component = componentOf(options, 'filter');
  const reason = options.reason ?? `filtered out by ${component.name}`;
  return defineBusinessLogic<E>({
    ...component,
    positional: true,
    apply: (candidates, request, trace) =>
      candidates.filter((candidate) => {
        if (options.keep(candidate.entity, candidate.score, request)) return true;
        trace?.note(candidate, 'filter', reason);
        return false;
      }),
  });
}
