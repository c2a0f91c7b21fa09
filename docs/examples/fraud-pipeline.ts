import { defineApp, defineEntity, defineModel, defineSingleEntityPipeline, Type } from 'rankd';

/** An order to score; its other fields come from the index, or from the request. */
export const Order = defineEntity({
  name: 'order',
  fields: {
    amount: Type.Union([Type.Number(), Type.Null()], { default: null }),
    country: Type.Union([Type.String(), Type.Null()], { default: null }),
  },
});

export const FraudModel = defineModel({
  name: 'FraudModel',
  entity: Order,
  score: (orders) => orders.map((order) => (order.amount ?? 0) / 1000 + (order.country === 'US' ? 0 : 0.5)),
});

/** POST /api/v1/fraud {"request_id": "f1", "order": {"order_id": "o1"}} → {"data": <score>} */
export const FraudPipeline = defineSingleEntityPipeline({
  name: 'FraudPipeline',
  path: '/fraud',
  entity: Order,
  model: FraudModel,
  // Optional: the answer's shape (the default is {"data": score}).
  respond: (score) => ({ risk: score, review: score > 1 }),
  responseSchema: Type.Object({ risk: Type.Number(), review: Type.Boolean() }, { title: 'FraudAnswer' }),
});

export default defineApp({ name: 'payments', entities: [Order], pipelines: [FraudPipeline] });
