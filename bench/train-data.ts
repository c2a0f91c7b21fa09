/**
 * The synthetic learning-to-rank data of `npm run bench -- train`: query groups of 20–50
 * candidates in time order, 24 features (3 of the query, 17 of the candidate, 4 pure noise), some
 * missing, and graded labels 0–4 from a hidden nonlinear utility plus noise. Generated from a seed,
 * so every run and both trainers see the same rows.
 */
import type { RankingDataset } from '../src/training/dataset.js';
import { seededRandom } from '../src/training/random.js';

/** Column names, in order. */
export const TRAIN_FEATURES = [
  'query:intent',
  'query:price_preference',
  'query:length',
  'product:log_price',
  'product:rating',
  'product:log_reviews',
  'product:ctr_30d',
  'product:text_match',
  'product:category_match',
  'product:brand_popularity',
  'product:freshness_days',
  'product:discount',
  'product:in_stock',
  'product:return_rate',
  'product:shipping_days',
  'product:image_quality',
  'product:seller_rating',
  'product:retrieval_rank',
  'product:title_length',
  'product:views_7d',
  'noise:a',
  'noise:b',
  'noise:c',
  'noise:d',
];

/** Label cut points on the utility's quantiles: about 55% 0, 25% 1, 12% 2, 6% 3, 2% 4. */
const LABEL_QUANTILES = [0.55, 0.8, 0.92, 0.98];

/** A data set of at least `minRows` rows in whole groups, the same for the same seed. */
export function syntheticRankingData(minRows: number, seed = 2026): RankingDataset {
  const random = seededRandom(seed);
  const normal = () => {
    const u = 1 - random();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random());
  };
  const maybe = (rate: number, value: number) => (random() < rate ? Number.NaN : value);
  const width = TRAIN_FEATURES.length;
  const groups: number[] = [];
  const values: number[] = [];
  const utility: number[] = [];
  let rows = 0;
  while (rows < minRows) {
    const size = 20 + Math.floor(random() * 31);
    const intent = random();
    const pricePreference = 3 + normal() * 0.8;
    const queryLength = 1 + Math.floor(random() * 5);
    for (let i = 0; i < size; i++) {
      const logPrice = 3 + normal() * 1.1;
      const rating = 1 + 4 * random() ** 0.6;
      const logReviews = Math.max(0, 3 + normal() * 2);
      const ctr = Math.min(1, Math.max(0, 0.05 + 0.04 * normal()));
      const textMatch = Math.max(0, normal() + 0.3 * queryLength - 0.5);
      const categoryMatch = random() < 0.4 ? 1 : 0;
      const brand = random();
      const freshness = -Math.log(1 - random()) * 60;
      const discount = random() < 0.3 ? random() * 0.5 : 0;
      const inStock = random() < 0.92 ? 1 : 0;
      const returnRate = Math.max(0, 0.08 + 0.05 * normal());
      const shipping = 1 + Math.floor(random() * 7);
      const imageQuality = random();
      const sellerRating = Math.min(5, 3.5 + normal() * 0.6);
      const retrievalRank = i + 1;
      const titleLength = 20 + Math.floor(random() * 80);
      const views = Math.exp(2 + normal());
      const hasRating = logReviews > 1.5;
      const row = [
        intent,
        pricePreference,
        queryLength,
        logPrice,
        hasRating ? rating : Number.NaN,
        logReviews,
        maybe(0.15, ctr),
        textMatch,
        categoryMatch,
        brand,
        freshness,
        discount,
        inStock,
        maybe(0.1, returnRate),
        shipping,
        maybe(0.05, imageQuality),
        sellerRating,
        retrievalRank,
        titleLength,
        maybe(0.08, views),
        normal(),
        random(),
        normal(),
        Math.floor(random() * 10),
      ];
      const u =
        1.4 * textMatch * (0.4 + intent) +
        (hasRating ? 1.2 / (1 + Math.exp(-2.5 * (rating - 3.6))) : 0.45) +
        8 * ctr * Math.min(1, logReviews / 4) -
        0.6 * Math.abs(logPrice - pricePreference) +
        0.5 * categoryMatch * (1 - intent) +
        1.1 * discount * (1.2 - intent) +
        (inStock === 1 ? 0 : -1.8) -
        2 * Math.max(0, returnRate - 0.12) +
        0.25 * Math.sin(brand * 6) -
        0.004 * freshness * (shipping > 4 ? 1.5 : 0.5) +
        0.3 * imageQuality +
        0.7 * normal();
      values.push(...row);
      utility.push(u);
    }
    groups.push(size);
    rows += size;
  }
  const sorted = Float64Array.from(utility).sort();
  const cuts = LABEL_QUANTILES.map((q) => sorted[Math.floor(q * rows)] as number);
  const labels = Float64Array.from(utility, (u) => cuts.filter((cut) => u >= cut).length);
  if (values.length !== rows * width) throw new Error('synthetic rows have the wrong width');
  return {
    features: TRAIN_FEATURES,
    rows,
    values: Float64Array.from(values),
    labels,
    groups: Uint32Array.from(groups),
  };
}
