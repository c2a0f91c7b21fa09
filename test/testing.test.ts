/**
 * `rankd/testing`'s `testApp`: the template app in process on a throwaway redis-server, fixtures
 * loaded as uploads are. Imports the built package (as a project's tests do, and as the template
 * does through `import 'rankd'`): one copy of rankd. Needs `npm run build`.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { testApp } from 'rankd/testing';
import { pingRedis } from '../dist/redis/local-server.js';
import app from '../template/pipelines/main.js';

const portOf = (url: string) => Number(new URL(url).port);

test('serves the app on a Redis of its own, with fixtures loaded, and stops that Redis on close', async () => {
  const shop = await testApp(app, {
    entities: { product: [{ product_id: 'x1', title: 'Beeswax Candle', price: 12 }] },
    features: { product_stats: [{ entity_id: 'x1', popularity: 0.9 }] },
    // The Redis settings are the throwaway server's whatever is given.
    settings: { REDIS_URL: 'redis://127.0.0.1:6379', EVENTS_SINK: 'off' },
  });
  const port = portOf(shop.redisUrl);
  try {
    assert.notEqual(port, 6379);
    assert.equal(shop.server.rankd.config.EVENTS_SINK, 'off');
    const got = await shop.post('/api/v1/entities/get', { entity_type: 'product', entity_ids: ['x1'] });
    assert.equal(got.statusCode, 200, got.body);
    assert.equal(got.json().entities.x1.title, 'Beeswax Candle');
    const features = await shop.post('/api/v1/features/get', {
      feature_view: 'product_stats',
      entity_ids: ['x1'],
    });
    assert.equal(features.statusCode, 200, features.body);
    assert.equal(features.json().results[0].values['product_stats:popularity'], 0.9);
    const ranked = await shop.post('/api/v1/ranking', {
      request_id: 't',
      query: { query: 'candles' },
      candidates: [{ product_id: 'nope' }, { product_id: 'x1' }],
    });
    assert.equal(ranked.statusCode, 200, ranked.body);
    assert.equal(ranked.json().ranked_candidates[0].candidate_id, 'x1');
  } finally {
    await shop.close();
  }
  assert.equal(await pingRedis(port), false, 'its Redis is stopped');
});

test('loads a project’s sample data', async () => {
  const shop = await testApp(app, { sampleData: new URL('../template/', import.meta.url) });
  try {
    const got = await shop.post('/api/v1/entities/get', {
      entity_type: 'product',
      entity_ids: ['p1', 'p60'],
    });
    assert.deepEqual(Object.keys(got.json().entities).sort(), ['p1', 'p60']);
  } finally {
    await shop.close();
  }
});

test('a bad fixture, or one of an unknown type or view, fails the start and names it', async () => {
  await assert.rejects(
    testApp(app, { entities: { product: [{ product_id: 'x1' }, { product_id: 'x2', price: 'cheap' }] } }),
    /entities\.product\[1\]: .*price/,
  );
  await assert.rejects(
    testApp(app, { features: { no_such_view: [] } }),
    /features\.no_such_view: the app has no feature view/,
  );
  await assert.rejects(
    testApp(app, { entities: { widget: [] } }),
    /entities\.widget: the app has no entity type widget/,
  );
});
