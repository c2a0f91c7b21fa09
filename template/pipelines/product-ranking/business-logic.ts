/**
 * Business logic: rules applied after the model, on the candidates sorted by score. The pipeline
 * re-sorts after every step, and each step logs a BUSINESS_LOGIC event for every score it changes.
 * @module
 */
import { boost, defineBusinessLogic, filter, getFeature } from 'rankd';
import { Product } from './schemas.js';

/**
 * Drops sold-out products (`number_in_stock` 0) when the request asks for `in_stock_only`, as a
 * shop's "hide sold-out items" switch would. Unknown stock counts as in stock. Without the switch,
 * sold-out products stay, demoted by {@link SoldOutDemotion}.
 */
export const InStockOnly = filter({
  name: 'InStockOnly',
  entity: Product,
  keep: (product, _score, request) => request.in_stock_only !== true || product.number_in_stock !== 0,
  reason: 'sold out (in_stock_only)',
});

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
  // What explanations say of a product this step moved.
  describe: (change) =>
    change.score_after !== null && change.score_after < change.score_before
      ? { action: 'demote', description: `demoted: out of stock (−${SOLD_OUT_PENALTY})` }
      : undefined,
});

/**
 * This month's featured brand (a promotion). The boost is small next to relevance — a title
 * holding the query's words adds 5 — so it reorders products that match about equally well and
 * never lifts a product that does not match over one that does. Edit the brands and amounts here.
 */
export const FeaturedBrand = boost({
  name: 'FeaturedBrand',
  entity: Product,
  by: 'brand',
  values: { 'Ember & Wick': 0.3 },
});
