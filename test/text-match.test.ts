/**
 * Property tests of the template's text matching against a plain reference (the properties are in
 * test/helpers/text-match-properties.ts). Each property runs in a worker thread: a scan that never
 * ends (as `countTerm` did for the query "y") fails its test instead of hanging the run.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { fold, QueryMatcher, tokenize } from '../template/pipelines/product-ranking/text-match.js';
import { runInWorker } from './helpers/in-worker.js';

const PROPERTIES = new URL('./helpers/text-match-properties.ts', import.meta.url);

describe('template text matching', () => {
  for (const property of ['fold', 'stem', 'tokenize', 'countTerm', 'countTermAnyTerm', 'match']) {
    test(`${property} agrees with the reference on arbitrary text`, async () => {
      assert.equal(await runInWorker<string>(PROPERTIES, { property }), property);
    });
  }

  test('a one-letter query word that folds to "y" matches that word (ran forever before)', async () => {
    const scores = await runInWorker<unknown>(
      new URL('./helpers/text-match-one-letter.ts', import.meta.url),
      null,
    );
    assert.deepEqual(scores, [1, 1, 1, 1, 1]);
  });

  test('a letter with a compatibility form is lowered: "ℌ" matches "h"', () => {
    assert.equal(fold('ℌ'), 'h');
    assert.deepEqual(tokenize('ℌ 𝐇ello'), ['h', 'hello']);
    const products = [{ title: 'h' }, { title: 'x' }];
    assert.ok(new QueryMatcher('ℌ', products).match(products[0] as object).title > 0);
  });

  test('a letter past U+FFFF is a word character: "𠀀" is a word, not a separator', () => {
    assert.deepEqual(tokenize('𠀀 a𐐀b'), ['𠀀', 'a𐐨b']);
  });
});
