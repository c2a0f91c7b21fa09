import { defineApp, defineBusinessLogic, defineModel, defineRankingPipeline } from '../../src/index.js';
import { TemplateProduct } from './ranking-app.js';

/** The ranking pipeline of {@link observedApp}: a price model and one business-logic step. */
export const OBSERVED_PIPELINE = 'ObservedRanking';

/** A small ranking app whose requests go through every stage: the metrics, logging and tracing tests serve it. */
export const observedApp = defineApp({
  name: 'observed',
  entities: [TemplateProduct],
  pipelines: [
    defineRankingPipeline({
      name: OBSERVED_PIPELINE,
      path: '/ranking',
      candidate: TemplateProduct,
      model: defineModel({
        name: 'PriceModel',
        entity: TemplateProduct,
        score: (products) => products.map((p) => p.price ?? 0),
      }),
      businessLogic: [
        defineBusinessLogic({ name: 'Keep', entity: TemplateProduct, apply: (candidates) => candidates }),
      ],
    }),
  ],
});

/** Products p0..p{n-1} with prices, for uploads. */
export function observedProducts(n: number): Array<Record<string, unknown>> {
  return Array.from({ length: n }, (_, i) => ({
    product_id: `p${i}`,
    title: `Product ${i}`,
    price: i + 0.5,
  }));
}

/** A ranking request body over p0..p{n-1}, by id only (so hydration reads them). */
export function rankingBody(n: number, requestId = 'r1'): Record<string, unknown> {
  return {
    request_id: requestId,
    candidates: Array.from({ length: n }, (_, i) => ({ product_id: `p${i}` })),
  };
}
