import { defineEntity } from './define-entity.js';

/** The predecessor's `ProductEntity`: identifier `product_id`. Apps extend it with their fields. */
export const ProductEntity = defineEntity({
  name: 'product',
  description: 'A product; identifier `product_id`.',
});
/** A search query; its identifier is the query text itself (`query`). */
export const QueryEntity = defineEntity({ name: 'query', idField: 'query', description: 'A search query.' });
/** A user; identifier `user_id`. */
export const UserEntity = defineEntity({ name: 'user', description: 'A user; identifier `user_id`.' });
/** A brand; identifier `brand_id`. */
export const BrandEntity = defineEntity({ name: 'brand', description: 'A brand; identifier `brand_id`.' });
/** A category; identifier `category_id`. */
export const CategoryEntity = defineEntity({
  name: 'category',
  description: 'A category; identifier `category_id`.',
});
/** A request, as an entity of the index; identifier `request_id`. */
export const RequestEntity = defineEntity({
  name: 'request',
  description: 'A request; identifier `request_id`.',
});

/** The types every rankd app knows, in the predecessor's order. */
export const BUILT_IN_ENTITY_TYPES = [
  ProductEntity,
  QueryEntity,
  BrandEntity,
  CategoryEntity,
  UserEntity,
  RequestEntity,
] as const;
