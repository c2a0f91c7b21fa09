/**
 * Real-time features: computed in memory for every request, before the model runs, and read
 * like stored ones with `getFeature(product, 'group:feature')`. text-match.ts has the query's.
 * @module
 */
import { defineRealtimeFeatures, embeddingSimilarity, Feature, getFeature, UserEntity } from 'rankd';
import { Product } from './schemas.js';

/** Per product, from its own fields: the model reads them like any other feature. */
export const ProductFacts = defineRealtimeFeatures({
  name: 'realtime_product',
  entity: Product,
  features: {
    search_score: Feature.float({ default: 0, description: "The search engine's score; 0 when not sent" }),
    in_stock: Feature.boolean({ default: true, description: 'number_in_stock > 0; true when unknown' }),
  },
  compute: (product) => ({
    search_score: product.search_score ?? null,
    in_stock: product.number_in_stock == null ? null : product.number_in_stock > 0,
  }),
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
