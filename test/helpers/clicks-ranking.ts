import {
  defineFeatureView,
  defineModel,
  defineRankingPipeline,
  Feature,
  getFeature,
  ProductEntity,
} from '../../src/index.js';

/**
 * `product_stats`: one integer feature per product, `clicks` (0 by default): what the cluster
 * failover tests and benchmark store beside each product.
 */
export const ProductClicks = defineFeatureView({
  name: 'product_stats',
  entity: ProductEntity,
  features: { clicks: Feature.integer({ default: 0 }) },
});

/** `Ranking`: products ranked by their stored clicks, so that every ranking reads every candidate's row. */
export const RankByClicks = defineRankingPipeline({
  name: 'Ranking',
  candidate: ProductEntity,
  model: defineModel({
    name: 'Clicks',
    features: ['product_stats:clicks'],
    score: (products) => products.map((p) => Number(getFeature(p, 'product_stats:clicks'))),
  }),
});
