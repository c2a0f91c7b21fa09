/**
 * The user features, on fixtures of the test's own: entities and feature rows given to `testApp`
 * are checked and loaded as uploads are, into a throwaway redis-server of this file alone.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type TestApp, testApp } from 'rankd/testing';
import app from '../pipelines/main.js';

let shop: TestApp;

/** Two shelves alike in all but their brand. */
const shelf = { title: 'Oak Wall Shelf', category: 'furniture', price: 80, number_in_stock: 5 };

before(async () => {
  shop = await testApp(app, {
    entities: {
      product: [
        { product_id: 'shelf-a', brand: 'Acme', ...shelf },
        { product_id: 'shelf-z', brand: 'Zenith', ...shelf },
      ],
    },
    features: {
      user_profile: [{ entity_id: 'fan-of-z', preferred_brand: 'Zenith', price_sensitivity: 0.5 }],
    },
  });
});

after(() => shop.close());

/** The two shelves ranked for the query "shelf", for `user` when given. */
async function rankShelves(user?: string): Promise<string[]> {
  const response = await shop.post('/api/v1/ranking', {
    request_id: 'test',
    query: { query: 'shelf' },
    ...(user === undefined ? {} : { user: { user_id: user } }),
    candidates: [{ product_id: 'shelf-a' }, { product_id: 'shelf-z' }],
  });
  assert.equal(response.statusCode, 200, response.body);
  return response.json().ranked_candidates.map((entry: { candidate_id: string }) => entry.candidate_id);
}

test("the user's preferred brand goes first", async () => {
  assert.deepEqual(await rankShelves('fan-of-z'), ['shelf-z', 'shelf-a']);
});

test('without a user, alike products keep the order they came in', async () => {
  assert.deepEqual(await rankShelves(), ['shelf-a', 'shelf-z']);
});
