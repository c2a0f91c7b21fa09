/**
 * How well each product's text matches the request's search query: the `text_match` features,
 * computed per pair product × query with rankd's `textMatcher`.
 * @module
 */
import { defineRealtimeFeatures, Feature, QueryEntity, textMatcher } from 'rankd';
import { Product } from './schemas.js';

/**
 * The product text a query is matched against, one score per field. Case, accents and plurals
 * are ignored ("Crème Candles" matches "creme candle"), and a query word counts more the fewer
 * candidates hold it (BM25). Titles, brands and categories are short: there only whether a word
 * occurs counts (`k1: 0`); in descriptions, how often and in how long a text counts too.
 */
const productText = textMatcher({
  fields: {
    title: { k1: 0 },
    description: {},
    brand: { k1: 0 },
    category: { from: ['category', 'categories'], k1: 0 },
  },
});

/** The query's match with the title, description, brand and categories, each in [0, 1]. */
export const TextMatch = defineRealtimeFeatures({
  name: 'text_match',
  entity: Product,
  with: QueryEntity,
  features: {
    title: Feature.float({ default: 0, description: 'Query words in the title, the rarer the more' }),
    description: Feature.float({ default: 0, description: 'BM25 of the description, scaled to [0, 1)' }),
    brand: Feature.float({ default: 0, description: 'Query words in the brand' }),
    category: Feature.float({ default: 0, description: 'Query words in the category and categories' }),
  },
  // Word weights come from all the request's candidates: the matcher works them out once per request.
  compute: (product, query, request) =>
    productText.match(String(query.query ?? ''), product, request.candidates),
});
