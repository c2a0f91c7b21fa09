/**
 * Business logic: rules applied after the model, on the candidates sorted by score. The pipeline
 * re-sorts after every step.
 * @module
 */
import { defineBusinessLogic, getFeature } from 'rankd';
import { Product } from './schemas.js';

/**
 * What a sold-out product loses: about what popularity and quality add at most, so it falls
 * below in-stock products that match the query as well, yet stays above those matching it less.
 */
const SOLD_OUT_PENALTY = 1;

/** Pushes sold-out products down (`number_in_stock` 0; unknown stock counts as in stock). */
export const SoldOutDemotion = defineBusinessLogic({
  name: 'SoldOutDemotion',
  entity: Product,
  features: ['realtime_product:in_stock'],
  apply(candidates) {
    for (const candidate of candidates) {
      if (getFeature(candidate.entity, 'realtime_product:in_stock') === false)
        candidate.score -= SOLD_OUT_PENALTY;
    }
    return candidates;
  },
});
