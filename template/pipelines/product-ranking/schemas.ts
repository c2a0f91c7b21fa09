/**
 * The shop's entity types. A ranking request may send candidates as `{ "product_id": "p1" }` only:
 * rankd fills the other fields from the index (`data/products.jsonl` once loaded) before any
 * pipeline code runs, and fields neither sent nor stored get the defaults declared here.
 * @module
 */
import { ProductEntity, Type } from 'rankd';

/** A field that may be absent: the given type or null, and null when nobody set it. */
function nullable<T extends Type.TSchema>(type: T) {
  return Type.Union([type, Type.Null()], { default: null });
}

/** A product of the shop: `product_id` plus catalogue, price, stock and search fields. */
export const Product = ProductEntity.extend({
  description: 'A product of the shop; identifier `product_id`.',
  // What the console shows beside a product's id (else the first text field: `brand`).
  titleField: 'title',
  fields: {
    brand: nullable(Type.String()),
    category: nullable(Type.String()),
    categories: Type.Array(Type.String(), { default: [] }),
    title: nullable(Type.String()),
    description: nullable(Type.String()),
    price: nullable(Type.Number()),
    number_in_stock: nullable(Type.Integer()),
    /** A relevance score from the shop's search engine, when the candidates come from one. */
    search_score: nullable(Type.Number()),
  },
});
