/**
 * The ranking pipeline on the sample data (data/, feature-store/data/). `testApp` serves the app
 * in process on a throwaway redis-server and loads the samples into it; requests go through the
 * HTTP routes, validation to business logic, without a socket.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { type TestApp, testApp } from 'rankd/testing';
import app from '../pipelines/main.js';

let shop: TestApp;

before(async () => {
  shop = await testApp(app, { sampleData: new URL('..', import.meta.url) });
});

after(() => shop.close());

/** Ranks the products `ids` for `query`, with any other request fields; resolves with the ids in ranked order. */
async function rank(query: string, ids: readonly string[], fields: object = {}): Promise<string[]> {
  const response = await shop.post('/api/v1/ranking', {
    request_id: 'test',
    query: { query },
    candidates: ids.map((id) => ({ product_id: id })),
    user_page_size: ids.length,
    candidate_page_size: ids.length,
    ...fields,
  });
  assert.equal(response.statusCode, 200, response.body);
  return response.json().ranked_candidates.map((entry: { candidate_id: string }) => entry.candidate_id);
}

/** The sample products whose title holds the word "candle" or "candles". */
const candles = readFileSync(new URL('../data/products.jsonl', import.meta.url), 'utf8')
  .split('\n')
  .filter((line) => /"title":"[^"]*\bCandles?\b/i.test(line))
  .map((line) => (JSON.parse(line) as { product_id: string }).product_id);

const someProducts = Array.from({ length: 24 }, (_, i) => `p${i + 1}`);

test('products with the query in their title come first', async () => {
  const ranked = await rank('candle', someProducts);
  const expected = someProducts.filter((id) => candles.includes(id)).length;
  assert.ok(expected > 3, 'the sample has candles among the first 24 products');
  assert.deepEqual(
    ranked.slice(0, expected).sort(),
    someProducts.filter((id) => candles.includes(id)).sort(),
  );
});

test('case, accents and plurals do not change the match', async () => {
  assert.deepEqual(await rank('CANDLES', someProducts), await rank('candle', someProducts));
  assert.deepEqual(await rank('cándle', someProducts), await rank('candle', someProducts));
});

test('a sold-out candle ranks below the candles in stock, and in_stock_only leaves it out', async () => {
  // p6 is sold out (number_in_stock 0); p1 and p35 are candles in stock.
  const ranked = await rank('candle', ['p6', 'p12', 'p1', 'p35']);
  assert.ok(
    ranked.indexOf('p6') > ranked.indexOf('p1') && ranked.indexOf('p6') > ranked.indexOf('p35'),
    `${ranked}`,
  );
  assert.deepEqual(
    (await rank('candle', ['p6', 'p12', 'p1', 'p35'], { in_stock_only: true })).includes('p6'),
    false,
  );
});

test('a page holds user_page_size candidates, best first', async () => {
  const page = await rank('candle', someProducts, { user_page_size: 3 });
  assert.deepEqual(page, (await rank('candle', someProducts)).slice(0, 3));
});
