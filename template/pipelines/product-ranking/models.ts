/**
 * The ranking models: a hand-weighted sum of features, a readable baseline that ranks for a
 * reason, the trained model that replaces it once `rankd train --promote` has written
 * `models/ranker.json`, and the challenger a promotion by interleaving tries (see
 * docs/guides/train-a-model.md).
 * @module
 */
import { defineModel, featureColumns, gbdtModel } from 'rankd';
import { Product } from './schemas.js';

/** What each feature adds per unit; the comment gives its usual range in the sample data. */
const WEIGHTS = {
  // Relevance to the query dominates: a title holding all the query's words adds 5, more than
  // quality and personalization together add in practice.
  'text_match:title': 5, // 0..1
  'text_match:category': 1.5, // 0..1
  'text_match:description': 1.5, // 0..1
  'text_match:brand': 1, // 0..1
  // Quality and popularity order products of similar relevance (purchases and rating: below).
  'realtime_product:search_score': 0.5, // 0..1
  'product_stats:popularity': 0.5, // 0..1
  'product_stats:ctr_7d': 2, // 0..0.15
  'product_sales:conversion_30d': 3, // 0..0.05
  // Personalization, when the request names a user with a stored profile.
  'user_affinity:embedding_similarity': 0.4, // −1..1
  'user_affinity:preferred_brand': 0.3, // 0 or 1
  'user_affinity:price_penalty': -0.1, // 0..5.3
} as const;

const WEIGHTED = Object.keys(WEIGHTS) as Array<keyof typeof WEIGHTS>;
const weights: number[] = Object.values(WEIGHTS);
const STATS = [
  'product_stats:purchase_past_15_days',
  'product_stats:rating',
  'product_stats:review_count',
] as const;

/** What both models read: every request logs these for each product shown. */
const INPUTS = [...WEIGHTED, ...STATS];

/** Ratings of products with few reviews are pulled towards this prior, as if it had this many reviews. */
const PRIOR_RATING = 4;
const PRIOR_REVIEWS = 10;

/**
 * Calls `add` with each term of each product's score, in the order they are summed: the score
 * is their sum, and each term is what its feature contributes (what explanations show).
 */
function eachTerm(products: readonly object[], add: (i: number, feature: string, term: number) => void) {
  // One column per feature, read for all products at once: cheaper than a getFeature per value
  // when there are a thousand candidates. A missing value (NaN) counts as 0.
  const columns = featureColumns(products, WEIGHTED);
  const [purchases, rating, reviews] = featureColumns(products, STATS);
  for (let i = 0; i < products.length; i++) {
    for (let j = 0; j < WEIGHTED.length; j++)
      add(i, WEIGHTED[j] as string, (weights[j] ?? 0) * (columns[j]?.[i] || 0));
    // Purchases in 15 days count by their logarithm: the 100th sale says less than the first.
    add(i, 'product_stats:purchase_past_15_days', 0.08 * Math.log1p(purchases[i] || 0)); // 0..0.44
    // Two reviews of 5 stars should not beat two hundred of 4.8: the rating, as far as its
    // reviews back it, is the rating's term.
    const n = reviews[i] || 0;
    const smoothed = ((rating[i] || 0) * n + PRIOR_RATING * PRIOR_REVIEWS) / (n + PRIOR_REVIEWS);
    add(i, 'product_stats:rating', 0.2 * (smoothed - PRIOR_RATING)); // −0.12..0.04
  }
}

/**
 * Scores products: relevance to the query (`text_match`), then quality and popularity, then fit
 * to the user (`user_affinity`). Stock is left to the business logic (see business-logic.ts).
 * Explains itself exactly: each feature's term (`"explain": true` in a ranking request).
 */
export const RankingModel = defineModel({
  name: 'RankingModel',
  version: '1',
  entity: Product,
  features: INPUTS,
  score(products) {
    const scores = new Array<number>(products.length).fill(0);
    eachTerm(products, (i, _feature, term) => {
      scores[i] = (scores[i] ?? 0) + term;
    });
    return scores;
  },
  contributions(products) {
    const rows = products.map(() => ({ bias: 0, contributions: {} as Record<string, number> }));
    eachTerm(products, (i, feature, term) => {
      (rows[i] as (typeof rows)[number]).contributions[feature] = term;
    });
    return rows;
  },
});

/**
 * Gradient-boosted trees trained by `rankd train` on the logged features and feedback, loaded
 * from `models/ranker.json` (and reloaded when it changes); until that file exists, the
 * hand-weighted model scores.
 */
export const Ranker = gbdtModel({
  name: 'Ranker',
  entity: Product,
  file: 'models/ranker.json',
  features: INPUTS,
  whenMissing: RankingModel,
});

/**
 * The candidate of a promotion by interleaving: `rankd train --promote --via interleave` writes
 * `models/ranker-challenger.json` and `rankd promotion decide` removes it once decided. While the
 * file is absent the interleaving that names it (ranking-pipeline.ts) is off: requests are served,
 * and cost, as without it.
 */
export const RankerChallenger = gbdtModel({
  name: 'RankerChallenger',
  entity: Product,
  file: 'models/ranker-challenger.json',
  features: INPUTS,
  whenMissing: RankingModel,
});
