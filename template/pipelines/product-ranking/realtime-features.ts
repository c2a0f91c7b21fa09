/**
 * Real-time features: computed in memory for every request, before the model runs, and read
 * like stored ones with `getFeature(product, 'group:feature')`.
 * @module
 */
import { defineRealtimeFeatures, Feature, getFeature, QueryEntity, UserEntity } from 'rankd';
import { Product } from './schemas.js';
import { matcherFor } from './text-match.js';

/**
 * How well each product matches the request's search query (per pair product × query), each
 * in [0, 1]. See text-match.ts for the tokenizing and the weights.
 */
export const TextMatch = defineRealtimeFeatures({
  name: 'text_match',
  entity: Product,
  with: QueryEntity,
  features: {
    title: Feature.float({ default: 0, description: 'Share of the query terms in the title' }),
    description: Feature.float({ default: 0, description: 'BM25 of the description, scaled to [0, 1)' }),
    brand: Feature.float({ default: 0, description: 'Share of the query terms in the brand' }),
    category: Feature.float({ default: 0, description: 'Share of the query terms in the categories' }),
  },
  compute(product, query, request) {
    // Term weights come from all the request's candidates: the matcher is built once for them.
    return matcherFor(request, String(query.query ?? '')).match(product);
  },
});

/** Per product, from its own fields: the model reads them like any other feature. */
export const ProductFacts = defineRealtimeFeatures({
  name: 'realtime_product',
  entity: Product,
  features: {
    search_score: Feature.float({ default: 0, description: "The search engine's score; 0 when not sent" }),
    log_price: Feature.float({
      default: 0,
      description: 'ln(1 + price): price differences matter relatively',
    }),
    in_stock: Feature.boolean({ default: true, description: 'number_in_stock > 0; true when unknown' }),
  },
  compute(product) {
    return {
      search_score: product.search_score ?? null,
      log_price: product.price == null ? null : Math.log1p(Math.max(0, product.price)),
      in_stock: product.number_in_stock == null ? null : product.number_in_stock > 0,
    };
  },
});

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let normA = 0;
  let normB = 0;
  for (let i = 0; i < a.length && i < b.length; i++) {
    const x = a[i] ?? 0;
    const y = b[i] ?? 0;
    dot += x * y;
    normA += x * x;
    normB += y * y;
  }
  return normA > 0 && normB > 0 ? dot / Math.sqrt(normA * normB) : 0;
}

/**
 * How well each product suits the request's user (per pair product × user), from stored
 * features: the two embeddings' cosine similarity and the user's preferred brand.
 * Requests without a user get the defaults.
 */
export const UserAffinity = defineRealtimeFeatures({
  name: 'user_affinity',
  entity: Product,
  with: UserEntity,
  features: {
    embedding_similarity: Feature.float({ default: 0, description: 'cosine(product, user embeddings)' }),
    preferred_brand: Feature.boolean({ default: false, description: "The product is the user's brand" }),
  },
  requires: ['product_stats:embedding', 'user_profile:embedding', 'user_profile:preferred_brand'],
  compute(product, user) {
    const productEmbedding = getFeature(product, 'product_stats:embedding');
    const userEmbedding = getFeature(user, 'user_profile:embedding');
    const brand = getFeature(user, 'user_profile:preferred_brand');
    return {
      embedding_similarity:
        productEmbedding instanceof Float32Array && userEmbedding instanceof Float32Array
          ? cosine(productEmbedding, userEmbedding)
          : null,
      preferred_brand: brand !== null && brand === product.brand,
    };
  },
});
