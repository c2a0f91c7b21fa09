/**
 * The ranking model: a hand-weighted sum of features, a readable baseline that ranks for a
 * reason. A trained model goes here (load it in `initialize()`, score in `score()`), or takes its
 * place (rankd's `linearModel`, `gbdtModel`, `onnxModel`).
 * @module
 */
import { defineModel, featureColumns } from 'rankd';
import { Product } from './schemas.js';

/** What each feature adds per unit; the comment gives its usual range in the sample data. */
const WEIGHTS = {
  // Relevance to the query dominates: a title holding all the query's words adds 5, more than
  // quality and personalization together add in practice.
  'text_match:title': 5, // 0..1
  'text_match:category': 1.5, // 0..1
  'text_match:description': 1.5, // 0..1
  'text_match:brand': 1, // 0..1
  // Quality and popularity order products of similar relevance.
  'realtime_product:search_score': 0.5, // 0..1
  'product_stats:popularity': 0.5, // 0..1
  'product_stats:ctr_7d': 2, // 0..0.15
  'realtime_product:log_purchases': 0.08, // 0..5.5
  'realtime_product:rating_vs_prior': 0.2, // −0.6..0.2
  'product_sales:conversion_30d': 3, // 0..0.05
  // Personalization, when the request names a user with a stored profile.
  'user_affinity:embedding_similarity': 0.4, // −1..1
  'user_affinity:preferred_brand': 0.3, // 0 or 1
  'user_affinity:price_penalty': -0.1, // 0..5.3
} as const;

const FEATURES = Object.keys(WEIGHTS) as Array<keyof typeof WEIGHTS>;
const weights: number[] = Object.values(WEIGHTS);

/**
 * Scores products: relevance to the query (`text_match`), then quality and popularity, then fit
 * to the user (`user_affinity`). Stock is left to the business logic (see business-logic.ts).
 */
export const RankingModel = defineModel({
  name: 'RankingModel',
  version: '1',
  entity: Product,
  features: FEATURES,
  score(products) {
    // One column per feature, read for all products at once: cheaper than a getFeature per value
    // when there are a thousand candidates. A missing value (NaN) counts as 0.
    const columns = featureColumns(products, FEATURES);
    return products.map((_, i) =>
      columns.reduce((sum, column, j) => sum + (weights[j] ?? 0) * (column[i] || 0), 0),
    );
  },
});
