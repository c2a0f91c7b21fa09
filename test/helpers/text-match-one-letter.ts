/**
 * The queries that made the template's `countTerm` loop forever (the term "y": an empty prefix),
 * each matched against a product titled "y". Run in a worker by test/text-match.test.ts.
 * @module
 */
import { QueryMatcher } from '../../template/pipelines/product-ranking/text-match.js';
import { answerFromWorker } from './in-worker.js';

await answerFromWorker(() => {
  const products = [{ title: 'y' }, { title: 'blue candle' }];
  return ['y', 'Y', 'ý', 'ｙ', 'blue y candle'].map((query) => {
    const matcher = new QueryMatcher(query, products);
    return matcher.match(products[0] as object).title > 0 ? 1 : 0;
  });
});
