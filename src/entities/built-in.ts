import { defineEntity } from './define-entity.js';

/**
 * The built-in product type: identifier `product_id`. Apps extend it with their fields.
 *
 * @example
 * ```ts
 * import { ProductEntity, Type } from 'rankd';
 *
 * // The built-in product (id field `product_id`), with the shop's fields.
 * export const Product = ProductEntity.extend({
 *   fields: {
 *     title: Type.Union([Type.String(), Type.Null()], { default: null }),
 *     price: Type.Union([Type.Number(), Type.Null()], { default: null }),
 *   },
 * });
 * ```
 */
export const ProductEntity = defineEntity({
  name: 'product',
  description: 'A product; identifier `product_id`.',
});
/**
 * A search query; its identifier is the query text itself (`query`).
 *
 * @example
 * ```ts
 * import { defineRealtimeFeatures, Feature, QueryEntity } from 'rankd';
 * import { Product } from './pipelines/product-ranking/schemas.js';
 *
 * // The request's `query` (its text in `query.query`), paired with each candidate.
 * export const QueryLength = defineRealtimeFeatures({
 *   name: 'query_length',
 *   entity: Product,
 *   with: QueryEntity,
 *   features: { words: Feature.integer({ default: 0 }) },
 *   compute: (_product, query) => ({ words: String(query.query ?? '').split(/\s+/).filter(Boolean).length }),
 * });
 * ```
 */
export const QueryEntity = defineEntity({ name: 'query', idField: 'query', description: 'A search query.' });
/**
 * A user; identifier `user_id`.
 *
 * @example
 * ```ts
 * import { defineRankingPipeline, UserEntity } from 'rankd';
 * import { RankingModel } from './pipelines/product-ranking/models.js';
 * import { Product } from './pipelines/product-ranking/schemas.js';
 *
 * // A request may name its user, {"user": {"user_id": "u1"}}, hydrated like the candidates.
 * export const Personal = defineRankingPipeline({
 *   name: 'Personal',
 *   path: '/personal',
 *   candidate: Product,
 *   entities: { user: UserEntity },
 *   model: RankingModel,
 * });
 * ```
 */
export const UserEntity = defineEntity({ name: 'user', description: 'A user; identifier `user_id`.' });
/**
 * A brand; identifier `brand_id`.
 *
 * @example
 * ```ts
 * import { BrandEntity, ProductEntity } from 'rankd';
 *
 * // A product's `brand_id` hydrates its brand into `brand`.
 * export const Product = ProductEntity.extend({
 *   references: { brand_id: { entity: BrandEntity, as: 'brand' } },
 * });
 * ```
 */
export const BrandEntity = defineEntity({ name: 'brand', description: 'A brand; identifier `brand_id`.' });
/**
 * A category; identifier `category_id`.
 *
 * @example
 * ```ts
 * import { CategoryEntity, Type } from 'rankd';
 *
 * export const Category = CategoryEntity.extend({ fields: { path: Type.Array(Type.String(), { default: [] }) } });
 * ```
 */
export const CategoryEntity = defineEntity({
  name: 'category',
  description: 'A category; identifier `category_id`.',
});
/**
 * A request, as an entity of the index; identifier `request_id`.
 *
 * @example
 * ```ts
 * import { defineFeatureView, Feature, RequestEntity } from 'rankd';
 *
 * // Features keyed by request id, e.g. written by a job that scores requests.
 * export const RequestStats = defineFeatureView({
 *   name: 'request_stats',
 *   entity: RequestEntity,
 *   features: { retries: Feature.integer({ default: 0 }) },
 * });
 * ```
 */
export const RequestEntity = defineEntity({
  name: 'request',
  description: 'A request; identifier `request_id`.',
});

/**
 * The types every rankd app knows, in this order.
 */
export const BUILT_IN_ENTITY_TYPES = [
  ProductEntity,
  QueryEntity,
  BrandEntity,
  CategoryEntity,
  UserEntity,
  RequestEntity,
] as const;
