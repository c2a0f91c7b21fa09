import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { radixSortByScore } from '../src/business-logic/radix-score-sort.js';

/** Positions in the input, in the order a stable comparison sort by descending score puts them. */
function comparisonOrder(scores: readonly number[]): number[] {
  return scores
    .map((score, i) => ({ score, i }))
    .sort((a, b) => b.score - a.score)
    .map((item) => item.i);
}

function radixOrder(scores: readonly number[]): number[] {
  return radixSortByScore(scores.map((score, i) => ({ score, i }))).map((item) => item.i);
}

// Few distinct values (many ties), both zeros, subnormals and the extremes, long enough to take
// the radix path (64 items or more) as well as the short one.
const score = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(0, -0, 1, -1, 0.5, 5e-324, -5e-324, Number.MAX_VALUE, -Number.MAX_VALUE),
  fc.integer({ min: -3, max: 3 }).map((n) => n / 2),
);

test('radixSortByScore orders like a stable comparison sort, ties and signed zeros included', () => {
  fc.assert(
    fc.property(fc.array(score, { maxLength: 600, size: 'large' }), (scores) => {
      assert.deepEqual(radixOrder(scores), comparisonOrder(scores));
    }),
    { numRuns: 300 },
  );
});

test('radixSortByScore sorts in place and returns the same array', () => {
  const items = Array.from({ length: 200 }, (_, i) => ({ score: (i * 37) % 101 }));
  assert.equal(radixSortByScore(items), items);
  for (let i = 1; i < items.length; i++) assert.ok((items[i - 1]?.score ?? 0) >= (items[i]?.score ?? 0));
});

test('radixSortByScore leaves non-finite scores to the comparison sort', () => {
  const scores = Array.from({ length: 100 }, (_, i) => (i % 7 === 0 ? Number.POSITIVE_INFINITY : i % 5));
  assert.deepEqual(radixOrder(scores), comparisonOrder(scores));
});
