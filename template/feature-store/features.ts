/**
 * Stored feature views: rows of typed features per entity, kept in Redis and read at the start
 * of every request. Load rows from `feature-store/data/<view>.jsonl` with `rankd load-sample`.
 * A row older than its view's TTL (by its event time, the upload time unless the row says
 * otherwise) counts as missing, and missing features read as their defaults.
 * @module
 */
import { defineFeatureView, Feature, UserEntity } from 'rankd';
import { Product } from '../pipelines/product-ranking/schemas.js';

const DAY = 24 * 60 * 60;

/** Engagement and catalogue statistics of a product, refreshed daily by the shop's jobs. */
export const ProductStats = defineFeatureView({
  name: 'product_stats',
  entity: Product,
  ttlSeconds: 30 * DAY,
  description: 'Engagement and catalogue statistics of a product',
  features: {
    purchase_past_15_days: Feature.integer({ default: 0 }),
    ctr_7d: Feature.float({ default: 0, description: 'Clicks per impression in search, last 7 days' }),
    add_to_cart_rate_7d: Feature.float({ default: 0 }),
    views_7d: Feature.integer({ default: 0 }),
    rating: Feature.float({ default: 0, description: 'Average review rating, 1 to 5; 0 without reviews' }),
    review_count: Feature.integer({ default: 0 }),
    return_rate: Feature.float({ default: 0 }),
    margin: Feature.float({ default: 0, description: 'Gross margin as a share of the price' }),
    days_since_launch: Feature.integer({ default: 0 }),
    popularity: Feature.float({ default: 0, description: 'A 0-1 popularity index' }),
    embedding: Feature.vector(8, { description: 'Style embedding, shared space with user_profile' }),
  },
});

/** Sales figures of a product over the last 30 days. */
export const ProductSales = defineFeatureView({
  name: 'product_sales',
  entity: Product,
  ttlSeconds: 30 * DAY,
  description: 'Sales of a product over the last 30 days',
  features: {
    revenue_30d: Feature.float({ default: 0 }),
    units_30d: Feature.integer({ default: 0 }),
    orders_30d: Feature.integer({ default: 0 }),
    conversion_30d: Feature.float({ default: 0, description: 'Orders per product-page session' }),
    refund_rate_30d: Feature.float({ default: 0 }),
    avg_discount_30d: Feature.float({ default: 0 }),
    repeat_purchase_rate_90d: Feature.float({ default: 0 }),
    sessions_30d: Feature.integer({ default: 0 }),
    wishlist_adds_30d: Feature.integer({ default: 0 }),
    sales_rank_30d: Feature.integer({ default: 0, description: '1 = best seller by revenue; 0 = unranked' }),
  },
});

/** What the shop knows of a user's taste. */
export const UserProfile = defineFeatureView({
  name: 'user_profile',
  entity: UserEntity,
  ttlSeconds: 90 * DAY,
  description: "A user's taste",
  features: {
    price_sensitivity: Feature.float({ default: 0.5, description: '0 = ignores price, 1 = very sensitive' }),
    preferred_brand: Feature.string({ description: 'The brand the user buys most' }),
    embedding: Feature.vector(8, { description: 'Style embedding, shared space with product_stats' }),
  },
});

/** Every view of the app, for `defineApp`. */
export const featureViews = [ProductStats, ProductSales, UserProfile];
