/**
 * The example app that `npm start` serves: the spec's template product (§2.2) on the built-in
 * `ProductEntity`. Ranking pipelines will join it here.
 * @module
 */
import Type, { type TSchema } from 'typebox';
import { defineApp, ProductEntity } from '../../src/index.js';

/** The template's optional fields: the given type or null, null when absent. */
function nullable<T extends TSchema>(type: T) {
  return Type.Union([type, Type.Null()], { default: null });
}

/** The template's product: `product_id` plus catalogue, price, stock and search fields. */
export const Product = ProductEntity.extend({
  fields: {
    brand: nullable(Type.String()),
    category: nullable(Type.String()),
    categories: Type.Array(Type.String(), { default: [] }),
    title: nullable(Type.String()),
    description: nullable(Type.String()),
    price: nullable(Type.Number()),
    number_in_stock: nullable(Type.Integer()),
    search_score: nullable(Type.Number()),
  },
});

export default defineApp({ name: 'example', entities: [Product] });
