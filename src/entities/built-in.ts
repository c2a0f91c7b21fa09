import { defineEntity } from './define-entity.js';

/**
 * The built-in product type: identifier `product_id`. Apps extend it with their fields.
 *
 * @example
 * import { ProductEntity, Type } from 'rankd';
 * export const Product = ProductEntity.extend({ fields: { price: Type.Number({ default: 0 }) } });
 */
export const ProductEntity = defineEntity({
  name: 'product',
  description: 'A product; identifier `product_id`.',
});
/**
 * A search query; its identifier is the query text itself (`query`).
 *
 * @example
 * import { defineFeatureView, Feature, QueryEntity } from 'rankd';
 * const features = { popularity: Feature.float({ default: 0 }) }; // by query text
 * export const QueryStats = defineFeatureView({ name: 'query_stats', entity: QueryEntity, features });
 */
export const QueryEntity = defineEntity({ name: 'query', idField: 'query', description: 'A search query.' });
/**
 * A user; identifier `user_id`.
 *
 * @example
 * import { UserEntity } from 'rankd';
 * // A pipeline's `entities`: the request names its user, {"user": {"user_id": "u1"}}, hydrated.
 * const entities = { user: UserEntity };
 */
export const UserEntity = defineEntity({ name: 'user', description: 'A user; identifier `user_id`.' });
/**
 * A brand; identifier `brand_id`.
 *
 * @example
 * import { BrandEntity, ProductEntity } from 'rankd';
 * // A product's `brand_id` hydrates its brand into `brand`.
 * export const Product = ProductEntity.extend({ references: { brand_id: { entity: BrandEntity, as: 'brand' } } });
 */
export const BrandEntity = defineEntity({ name: 'brand', description: 'A brand; identifier `brand_id`.' });
/**
 * A category; identifier `category_id`.
 *
 * @example
 * import { CategoryEntity, Type } from 'rankd';
 * export const Category = CategoryEntity.extend({ fields: { path: Type.Array(Type.String(), { default: [] }) } });
 */
export const CategoryEntity = defineEntity({
  name: 'category',
  description: 'A category; identifier `category_id`.',
});
/**
 * A request, as an entity of the index; identifier `request_id`.
 *
 * @example
 * import { defineFeatureView, Feature, RequestEntity } from 'rankd';
 * const features = { retries: Feature.integer({ default: 0 }) };
 * export const RequestStats = defineFeatureView({ name: 'request_stats', entity: RequestEntity, features });
 */
export const RequestEntity = defineEntity({
  name: 'request',
  description: 'A request; identifier `request_id`.',
});

/** The types every rankd app knows, in this order. */
export const BUILT_IN_ENTITY_TYPES = [
  ProductEntity,
  QueryEntity,
  BrandEntity,
  CategoryEntity,
  UserEntity,
  RequestEntity,
] as const;
