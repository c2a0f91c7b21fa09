/**
 * Real-time feature groups named as the predecessor named them (`RealtimeProductFeature`, a class
 * name) work: computed, read with `get_feature` under their full name, logged as FEATURE events.
 * A name that cannot work is refused with the rule and its reason.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  AppDefinitionError,
  defineModel,
  defineRealtimeFeatures,
  Feature,
  get_feature,
} from '../src/index.js';
import { starterApp, TemplateProduct } from './helpers/ranking-app.js';
import { postJson, useTestServer } from './helpers/server.js';

const RealtimeProductFeature = defineRealtimeFeatures({
  name: 'RealtimeProductFeature',
  entity: TemplateProduct,
  features: { search_score: Feature.float({ default: 0 }) },
  compute: (product) => ({ search_score: product.search_score ?? null }),
});

const Model = defineModel({
  name: 'SearchScore',
  entity: TemplateProduct,
  features: ['RealtimeProductFeature:search_score'],
  score: (products) => products.map((p) => Number(get_feature(p, 'RealtimeProductFeature:search_score'))),
});

const fixture = useTestServer({
  env: { EVENTS_KINDS: 'FEATURE,MODEL' },
  app: starterApp('wyvern-names', { realtimeFeatures: [RealtimeProductFeature], model: Model }),
});

test('a group named RealtimeProductFeature is computed and read by its full name', async () => {
  const res = await postJson(fixture.server, '/api/v1/ranking', {
    request_id: 'names-1',
    include_events: true,
    candidates: [
      { product_id: 'p1', search_score: 0.2 },
      { product_id: 'p2', search_score: 0.9 },
    ],
  });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.deepEqual(res.body.ranked_candidates, [
    { candidate_id: 'p2', ranked_score: 0.9 },
    { candidate_id: 'p1', ranked_score: 0.2 },
  ]);
  const names = res.body.events
    .filter((e: { event_type: string }) => e.event_type === 'FEATURE')
    .map((e: { event_data: { feature_name: string } }) => e.event_data.feature_name);
  assert.ok(names.includes('RealtimeProductFeature:search_score'), JSON.stringify(names));
});

test('a name that cannot be a group says the rule and why', () => {
  for (const name of ['Realtime:Product', 'realtime product', '1Feature', '']) {
    assert.throws(
      () => defineRealtimeFeatures({ name, entity: TemplateProduct, features: {}, compute: () => ({}) }),
      (error: unknown) =>
        error instanceof AppDefinitionError &&
        /use a letter, then letters, digits or _ \(at most 64\)/.test(error.message) &&
        /"group:feature"/.test(error.message),
    );
  }
});
