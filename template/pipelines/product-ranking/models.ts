/**
 * The ranking model: a hand-weighted sum of features. It is where a trained model would go
 * (load it in `initialize()`, score in `score()`); the weights below are a readable baseline
 * that ranks for a reason.
 * @module
 */
import { defineModel, featureColumns, getFeature } from 'rankd';
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

/** Value `i` of a feature column; 0 when missing (every feature used here has a numeric default). */
function at(column: Float64Array, i: number): number {
  const value = column[i];
  return value !== undefined && Number.isFinite(value) ? value : 0;
}

/** The product features the model reads, in the order `score` takes them apart. */
const PRODUCT_FEATURES = [
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
] as const;

/**
 * Scores products: relevance to the query (`text_match`), then quality and popularity
 * (`product_stats`, `product_sales`, `realtime_product`), then fit to the user (`user_affinity`,
 * `user_profile`). Stock is left to the business logic (see business-logic.ts).
 */
export const RankingModel = defineModel({
  name: 'RankingModel',
  version: '1',
  entity: Product,
  features: [...PRODUCT_FEATURES, 'user_profile:price_sensitivity'],
  score(products, request) {
    const user = request.user as object | undefined;
    const sensitivity = user ? getFeature(user, 'user_profile:price_sensitivity') : 0;
    const priceSensitivity =
      typeof sensitivity === 'number' && Number.isFinite(sensitivity) ? sensitivity : 0;
    // One column per feature, read for all products at once (cheaper than a getFeature per value
    // when there are a thousand candidates).
    const [
      title,
      category,
      description,
      brand,
      searchScore,
      logPrice,
      popularity,
      ctr,
      purchases,
      rating,
      reviews,
      conversion,
      similarity,
      preferredBrand,
    ] = featureColumns(products, PRODUCT_FEATURES);
    return products.map((_, i) => {
      const reviewCount = at(reviews, i);
      const smoothedRating =
        reviewCount > 0
          ? (at(rating, i) * reviewCount + PRIOR_RATING * PRIOR_REVIEWS) / (reviewCount + PRIOR_REVIEWS)
          : PRIOR_RATING;
      const relevance =
        WEIGHTS.title * at(title, i) +
        WEIGHTS.category * at(category, i) +
        WEIGHTS.description * at(description, i) +
        WEIGHTS.brand * at(brand, i);
      const quality =
        WEIGHTS.searchScore * at(searchScore, i) +
        WEIGHTS.popularity * at(popularity, i) +
        WEIGHTS.ctr * at(ctr, i) +
        WEIGHTS.purchases * Math.log1p(at(purchases, i)) +
        WEIGHTS.rating * (smoothedRating - PRIOR_RATING) +
        WEIGHTS.conversion * at(conversion, i);
      const personal = user
        ? WEIGHTS.similarity * at(similarity, i) +
          WEIGHTS.preferredBrand * at(preferredBrand, i) -
          WEIGHTS.price * priceSensitivity * at(logPrice, i)
        : 0;
      return relevance + quality + personal;
    });
  },
});
