/**
 * rankd's text matching (`textMatcher`, `tokenize`: src/text/). The property tests compare it with
 * a plain reference over arbitrary text (test/helpers/text-match-properties.ts), each in a worker
 * thread: a scan that never ends (as the template's once did for the query "y") fails its test
 * instead of hanging the run.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { textMatcher, tokenize } from '../src/index.js';
import { fold, stem } from '../src/text/words.js';
import { runInWorker } from './helpers/in-worker.js';

const PROPERTIES = new URL('./helpers/text-match-properties.ts', import.meta.url);

describe('text matching', () => {
  for (const property of ['fold', 'stem', 'tokenize', 'countTerm', 'countTermAnyTerm', 'match']) {
    test(`${property} agrees with the reference on arbitrary text`, async () => {
      assert.equal(await runInWorker<string>(PROPERTIES, { property }), property);
    });
  }

  test('a one-letter query word that folds to "y" matches that word (ran forever before)', async () => {
    const matched = await runInWorker<unknown>(
      new URL('./helpers/text-match-one-letter.ts', import.meta.url),
      null,
    );
    assert.deepEqual(matched, [1, 1, 1, 1, 1]);
  });

  test('a letter with a compatibility form is lowered: "ℌ" matches "h"', () => {
    assert.equal(fold('ℌ'), 'h');
    assert.deepEqual(tokenize('ℌ 𝐇ello'), ['h', 'hello']);
    const products = [{ title: 'h' }, { title: 'x' }];
    assert.ok(textMatcher({ fields: ['title'] }).match('ℌ', products[0] as object, products).title > 0);
  });

  test('a letter past U+FFFF is a word character: "𠀀" is a word, not a separator', () => {
    assert.deepEqual(tokenize('𠀀 a𐐀b'), ['𠀀', 'a𐐨b']);
  });

  test('plurals are made singular, and only plurals', () => {
    const pairs = {
      candles: 'candle',
      berries: 'berry',
      glasses: 'glass',
      boxes: 'box',
      matches: 'match',
      dishes: 'dish',
      glass: 'glass',
      bus: 'bus',
      iris: 'iris',
      yes: 'yes',
      ties: 'tie',
      running: 'running',
    };
    for (const [word, expected] of Object.entries(pairs)) assert.equal(stem(word), expected, word);
    assert.deepEqual(tokenize('Crème Brûlée CANDLES, 2-pack'), ['creme', 'brulee', 'candle', '2', 'pack']);
  });

  const products = [
    {
      title: 'Soy Candle',
      description: 'A candle of soy wax, vanilla scent',
      brand: 'Ember',
      tags: ['home'],
    },
    { title: 'Vanilla Candles', description: 'Two candles. Candle wax: paraffin.', brand: 'Glow', tags: [] },
    { title: 'Ceramic Mug', description: 'A mug', brand: 'Ember', tags: ['kitchen', 'candle holder'] },
  ];
  const matcher = textMatcher({
    fields: { title: { k1: 0 }, description: {}, brand: { k1: 0 }, tags: { k1: 0 } },
  });

  test('each field gets a score in [0, 1]; a short field with k1 0 scores the share of query words it holds', () => {
    const [soy, vanilla, mug] = products.map((p) => matcher.match('vanilla candle', p, products));
    assert.deepEqual(Object.keys(soy ?? {}), ['title', 'description', 'brand', 'tags']);
    // "vanilla" is rarer (1 title of 3) than "candle" (2 of 3): it weighs more.
    assert.ok((vanilla?.title ?? 0) === 1, 'both words in the title');
    assert.ok((soy?.title ?? 0) > 0 && (soy?.title ?? 0) < 0.5, `candle only: ${soy?.title}`);
    assert.equal(mug?.title, 0);
    assert.ok((mug?.tags ?? 0) > 0, 'an array field: any of its texts');
    for (const scores of [soy, vanilla, mug])
      for (const value of Object.values(scores ?? {})) assert.ok(value >= 0 && value <= 1);
    // More occurrences in a description of similar length score higher, short of the bound.
    assert.ok((vanilla?.description ?? 0) > 0 && (vanilla?.description ?? 0) < 1);
  });

  test('a query without words, or without matches, scores 0 everywhere', () => {
    for (const query of ['', '  ,;-', 'nothing here']) {
      assert.deepEqual(matcher.match(query, products[0] as object, products), {
        title: 0,
        description: 0,
        brand: 0,
        tags: 0,
      });
    }
  });

  test('match keeps the work per candidate list; anything but an array stands for the entity alone', () => {
    const prepared = matcher.prepare('soy candle', products);
    assert.deepEqual(prepared.terms, ['soy', 'candle']);
    assert.equal(prepared.idf.length, 2);
    for (const p of products) assert.deepEqual(matcher.match('soy candle', p, products), prepared.scores(p));
    assert.deepEqual(
      matcher.match('soy candle', products[0] as object, undefined),
      matcher.prepare('soy candle', [products[0] as object]).scores(products[0] as object),
    );
  });

  test('a long query keeps its first maxQueryTerms distinct words', () => {
    const short = textMatcher({ fields: ['title'], maxQueryTerms: 2 });
    assert.deepEqual(short.prepare('a b a c d', []).terms, ['a', 'b']);
    assert.equal(
      textMatcher({ fields: ['title'] }).prepare(Array.from({ length: 50 }, (_, i) => `w${i}`).join(' '), [])
        .terms.length,
      32,
    );
  });

  test('bad options are refused when the matcher is made', () => {
    assert.throws(() => textMatcher({ fields: [] }), /names no field/);
    assert.throws(() => textMatcher({ fields: { title: { k1: -1 } } }), /k1 must be a number ≥ 0/);
    assert.throws(() => textMatcher({ fields: { title: { b: 2 } } }), /b must be in \[0, 1\]/);
    assert.throws(() => textMatcher({ fields: ['title'], maxQueryTerms: 0 }), /maxQueryTerms/);
  });
});
