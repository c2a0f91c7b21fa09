import { test } from 'node:test';
import { defineApp, defineRankingPipeline, defineModel } from '../src/index.js';
import { TemplateProduct } from './helpers/ranking-app.js';
import { useTestServer, postJson } from './helpers/server.js';
const Model = defineModel({ name: 'M', entity: TemplateProduct, features: [], score: (ps) => ps.map(() => 1) });
const app = defineApp({ name: 'x', entities: [TemplateProduct], pipelines: [defineRankingPipeline({ name: 'MyRankingPipeline', path: '/ranking', candidate: TemplateProduct, model: Model })] });
const f = useTestServer({ app });
test('probe', async () => {
  const s = f.server;
  const req = { request_id: 'r', query: { query: 'x' }, candidates: [{ product_id: 'p1' }, { product_id: 'p2', pirce: 3 }, {product_id: 7, price: '3', number_in_stock: '4'}], user_page_size: '2', extra: 1 };
  console.log(JSON.stringify(await postJson(s, '/api/v1/ranking', req)));
  console.log(JSON.stringify(await postJson(s, '/api/v1/events/feedback', { events: [{ request_id: 'r', entity_id: 'p1', entity_type: 'product', event: 'click', foo: 1 }] , bar: 2})));
  console.log(JSON.stringify(await postJson(s, '/api/v1/entities/upload', { entity_type: 'product', entities: [{ product_id: 'p1' }], foo: 1 })));
  console.log(JSON.stringify(await postJson(s, '/api/v1/entities/get', { entity_type: 'product', entity_ids: ['p1', 3], foo: 1 })));
  console.log(JSON.stringify(await postJson(s, '/api/v1/entities/upload', { entity_type: 'product', entities: [{ product_id: 'p1', price: "3" }] })));
});
