/**
 * The ranking model: a hand-weighted sum of features. It is where a trained model would go
 * (load it in `initialize()`, score in `score()`); the weights below are a readable baseline
 * that ranks for a reason.
 * @module
 */
import { defineModel, getFeature } from 'rankd';
import { Product } from './schemas.js';

/** Feature weights; the comment gives each term's usual range in the sample data. */
const WEIGHTS = {
  // Relevance to the query dominates: a title holding all the query's words adds 5, more than
  // quality and personalization together add in practice.
  title: 5, // 0..1
  category: 1.5, // 0..1
  description: 1.5, // 0..1 (BM25, scaled)
  brand: 1, // 0..1
  // Quality and popularity order products of similar relevance.
  searchScore: 0.5, // 0..1
  popularity: 0.5, // 0..1
  ctr: 2, // 0..0.15
  purchases: 0.08, // × ln(1 + purchases in 15 days): 0..5.5
  rating: 0.2, // × (smoothed rating − 4): −0.6..0.2
  conversion: 3, // 0..0.05
  // Personalization, when the request names a user with a stored profile.
  similarity: 0.4, // −1..1, cosine of style embeddings
  preferredBrand: 0.3, // 0 or 1
  price: 0.1, // × price sensitivity (0..1) × ln(1 + price) (0..5.3), subtracted
} as const;

/** Ratings of products with few reviews are pulled towards this prior. */
const PRIOR_RATING = 4;
const PRIOR_REVIEWS = 10;

/** A numeric feature of `entity`; 0 when missing (every feature used here has a numeric default). */
function num(entity: object, name: string): number {
  const value = getFeature(entity, name);
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

/**
 * Scores products: relevance to the query (`text_match`), then quality and popularity
 * (`product_stats`, `product_sales`, `realtime_product`), then fit to the user (`user_affinity`,
 * `user_profile`). Stock is left to the business logic (see business-logic.ts).
 */
export const RankingModel = defineModel({
  name: 'RankingModel',
  version: '1',
  entity: Product,
  features: [
    'text_match:title',
    'text_match:category',
    'text_match:description',
    'text_match:brand',
    'realtime_product:search_score',
    'realtime_product:log_price',
    'product_stats:popularity',
    'product_stats:ctr_7d',
    'product_stats:purchase_past_15_days',
    'product_stats:rating',
    'product_stats:review_count',
    'product_sales:conversion_30d',
    'user_affinity:embedding_similarity',
    'user_affinity:preferred_brand',
    'user_profile:price_sensitivity',
  ],
  score(products, request) {
    const user = request.user as object | undefined;
    const priceSensitivity = user ? num(user, 'user_profile:price_sensitivity') : 0;
    return products.map((product) => {
      const reviews = num(product, 'product_stats:review_count');
      const rating =
        reviews > 0
          ? (num(product, 'product_stats:rating') * reviews + PRIOR_RATING * PRIOR_REVIEWS) /
            (reviews + PRIOR_REVIEWS)
          : PRIOR_RATING;
      const relevance =
        WEIGHTS.title * num(product, 'text_match:title') +
        WEIGHTS.category * num(product, 'text_match:category') +
        WEIGHTS.description * num(product, 'text_match:description') +
        WEIGHTS.brand * num(product, 'text_match:brand');
      const quality =
        WEIGHTS.searchScore * num(product, 'realtime_product:search_score') +
        WEIGHTS.popularity * num(product, 'product_stats:popularity') +
        WEIGHTS.ctr * num(product, 'product_stats:ctr_7d') +
        WEIGHTS.purchases * Math.log1p(num(product, 'product_stats:purchase_past_15_days')) +
        WEIGHTS.rating * (rating - PRIOR_RATING) +
        WEIGHTS.conversion * num(product, 'product_sales:conversion_30d');
      const personal = user
        ? WEIGHTS.similarity * num(product, 'user_affinity:embedding_similarity') +
          (getFeature(product, 'user_affinity:preferred_brand') === true ? WEIGHTS.preferredBrand : 0) -
          WEIGHTS.price * priceSensitivity * num(product, 'realtime_product:log_price')
        : 0;
      return relevance + quality + personal;
    });
  },
});
