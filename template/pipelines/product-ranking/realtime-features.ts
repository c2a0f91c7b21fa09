/**
 * Real-time features: computed in memory for every request, before the model runs, and read
 * like stored ones with `getFeature(product, 'group:feature')`. They turn raw fields and stored
 * features into what the model weighs (text-match.ts has the query's).
 * @module
 */
import { defineRealtimeFeatures, embeddingSimilarity, Feature, getFeature, UserEntity } from 'rankd';
import { Product } from './schemas.js';

/** Ratings of products with few reviews are pulled towards this prior, as if it had this many reviews. */
const PRIOR_RATING = 4;
const PRIOR_REVIEWS = 10;

/** Per product, from its own fields and its stored statistics. */
export const ProductFacts = defineRealtimeFeatures({
  name: 'realtime_product',
  entity: Product,
  features: {
    search_score: Feature.float({ default: 0, description: "The search engine's score; 0 when not sent" }),
    in_stock: Feature.boolean({ default: true, description: 'number_in_stock > 0; true when unknown' }),
    log_purchases: Feature.float({ default: 0, description: 'ln(1 + purchases in 15 days)' }),
    rating_vs_prior: Feature.float({ default: 0, description: 'Rating, smoothed by review count, minus 4' }),
  },
  requires: ['product_stats:purchase_past_15_days', 'product_stats:rating', 'product_stats:review_count'],
  compute(product) {
    const purchases = Number(getFeature(product, 'product_stats:purchase_past_15_days'));
    const rating = Number(getFeature(product, 'product_stats:rating'));
    const reviews = Number(getFeature(product, 'product_stats:review_count'));
    return {
      search_score: product.search_score ?? null,
      in_stock: product.number_in_stock == null ? null : product.number_in_stock > 0,
      // The 100th sale says less than the first.
      log_purchases: Math.log1p(purchases),
      // Two reviews of 5 stars should not beat two hundred of 4.8.
      rating_vs_prior:
        (rating * reviews + PRIOR_RATING * PRIOR_REVIEWS) / (reviews + PRIOR_REVIEWS) - PRIOR_RATING,
    };
  },
});

/**
 * How well each product suits the request's user (per pair product × user), from stored
 * features. Requests without a user get the defaults.
 */
export const UserAffinity = defineRealtimeFeatures({
  name: 'user_affinity',
  entity: Product,
  with: UserEntity,
  features: {
    embedding_similarity: Feature.float({ default: 0, description: 'cosine(product, user embeddings)' }),
    preferred_brand: Feature.boolean({ default: false, description: "The product is the user's brand" }),
    price_penalty: Feature.float({ default: 0, description: 'Price sensitivity × ln(1 + price)' }),
  },
  requires: [
    'product_stats:embedding',
    'user_profile:embedding',
    'user_profile:preferred_brand',
    'user_profile:price_sensitivity',
  ],
  compute(product, user) {
    const brand = getFeature(user, 'user_profile:preferred_brand');
    const sensitivity = Number(getFeature(user, 'user_profile:price_sensitivity'));
    return {
      embedding_similarity: embeddingSimilarity(
        product,
        'product_stats:embedding',
        user,
        'user_profile:embedding',
      ),
      preferred_brand: brand !== null && brand === product.brand,
      // Price differences matter relatively: 10 → 20 as much as 50 → 100.
      price_penalty: product.price == null ? null : sensitivity * Math.log1p(Math.max(0, product.price)),
    };
  },
});
