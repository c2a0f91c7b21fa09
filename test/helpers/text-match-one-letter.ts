/**
 * The queries that made the template's term scan loop forever (the term "y": an empty prefix),
 * each matched by rankd's textMatcher against a product titled "y". Run in a worker by
 * test/text-match.test.ts.
 * @module
 */
import { textMatcher } from '../../src/text/text-matcher.js';
import { answerFromWorker } from './in-worker.js';

await answerFromWorker(() => {
  const matcher = textMatcher({ fields: { title: { k1: 0 }, description: {} } });
  const products = [{ title: 'y', description: 'y y' }, { title: 'blue candle' }];
  return ['y', 'Y', 'ý', 'ｙ', 'blue y candle'].map((query) => {
    const scores = matcher.match(query, products[0] as object, products);
    return scores.title > 0 && scores.description > 0 ? 1 : 0;
  });
});
