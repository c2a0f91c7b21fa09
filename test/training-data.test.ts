/**
 * The trainer's data side (src/training/): histogram bins as properties (constant features, all
 * missing, ties, order), NDCG's rules (skipped groups, ties), building and splitting data sets.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { binFeatures } from '../src/training/bins.js';
import { datasetFromRows, ndcgAt, splitByGroups, TrainingInputError } from '../src/training/index.js';
import { ndcgByGroup } from '../src/training/ndcg.js';
import { rankGroup, rerankGroup } from '../src/training/rank-order.js';

/** A column of values: finite floats, with repeats and missing values likely. */
const column = fc.array(
  fc.oneof(
    fc.double({ min: -1e6, max: 1e6, noNaN: true }),
    fc.constantFrom(0, 1, -1, 2.5, Number.NaN),
    fc.integer({ min: -3, max: 3 }),
  ),
  { minLength: 1, maxLength: 400 },
);

describe('binFeatures', () => {
  test('property: bins keep the values in order, ties together, missing apart, within maxBins, and match the cuts', () => {
    fc.assert(
      fc.property(column, fc.integer({ min: 3, max: 256 }), (values, maxBins) => {
        const binned = binFeatures(Float64Array.from(values), values.length, 1, maxBins);
        const cuts = binned.cuts[0] as Float32Array;
        const missingBin = cuts.length + 1;
        assert.ok(missingBin + 1 <= maxBins, `${missingBin + 1} bins for maxBins ${maxBins}`);
        assert.equal((binned.offsets[1] as number) - (binned.offsets[0] as number), missingBin + 1);
        for (let i = 1; i < cuts.length; i++) assert.ok((cuts[i - 1] as number) < (cuts[i] as number));
        values.forEach((value, r) => {
          const bin = binned.bins[r] as number;
          assert.equal(binned.columns[r], bin);
          if (Number.isNaN(value)) {
            assert.equal(bin, missingBin);
            return;
          }
          const x = Math.fround(value);
          // Bin b holds exactly cuts[b-1] ≤ x < cuts[b]: the split condition XGBoost writes.
          if (bin > 0) assert.ok((cuts[bin - 1] as number) <= x);
          if (bin < cuts.length) assert.ok(x < (cuts[bin] as number));
          values.forEach((other, s) => {
            if (Number.isNaN(other)) {
              return;
            }
            const y = Math.fround(other);
            const otherBin = binned.bins[s] as number;
            if (x === y) assert.equal(bin, otherBin);
            if (x < y) assert.ok(bin <= otherBin);
          });
          // upper lies above every value, so "every value left" is a split.
          assert.ok(x < (binned.upper[0] as number));
        });
      }),
      { numRuns: 150, seed: 22 },
    );
  });

  test('property: a constant feature has one value bin and no cut; an all-missing one only its missing bin', () => {
    fc.assert(
      fc.property(
        fc.double({ noNaN: true, min: -1e30, max: 1e30 }),
        fc.integer({ min: 1, max: 300 }),
        (value, rows) => {
          const values = new Float64Array(rows * 2);
          for (let r = 0; r < rows; r++) {
            values[r * 2] = value;
            values[r * 2 + 1] = Number.NaN;
          }
          const binned = binFeatures(values, rows, 2);
          assert.equal(binned.cuts[0]?.length, 0);
          assert.equal(binned.cuts[1]?.length, 0);
          for (let r = 0; r < rows; r++) {
            assert.equal(binned.bins[r * 2], 0);
            assert.equal(binned.bins[r * 2 + 1], 1);
          }
          assert.ok(Number.isNaN(binned.upper[1]), 'no value: no threshold above them');
        },
      ),
      { numRuns: 100, seed: 22 },
    );
  });

  test('many distinct values share at most 255 value bins of about equal counts', () => {
    const rows = 10_000;
    const values = Float64Array.from({ length: rows }, (_, i) => (i * 7919) % rows);
    const binned = binFeatures(values, rows, 1);
    assert.equal(binned.cuts[0]?.length, 254);
    const counts = new Uint32Array(256);
    for (const bin of binned.bins) counts[bin] = (counts[bin] as number) + 1;
    const used = Array.from(counts.subarray(0, 255));
    assert.ok(
      Math.max(...used) - Math.min(...used) <= 2,
      `bin counts from ${Math.min(...used)} to ${Math.max(...used)}`,
    );
  });
});

describe('ndcgAt', () => {
  const dcg = (labels: number[]) =>
    labels.reduce((sum, label, i) => sum + (2 ** label - 1) / Math.log2(i + 2), 0);

  test('the ranking by the labels scores 1; the reverse scores its DCG over the ideal', () => {
    const labels = [3, 2, 1, 0, 0];
    assert.equal(ndcgAt([5, 4, 3, 2, 1], labels, [5], 10), 1);
    assert.ok(
      Math.abs(ndcgAt([1, 2, 3, 4, 5], labels, [5], 10) - dcg([0, 0, 1, 2, 3]) / dcg(labels)) < 1e-12,
    );
    // @2 counts only the top two places.
    assert.equal(ndcgAt([1, 2, 3, 4, 5], labels, [5], 2), 0);
  });

  test('groups without a positive label are skipped; with none at all the mean is NaN', () => {
    const byGroup = ndcgByGroup([1, 2, 1, 2], [0, 0, 1, 0], [2, 2], 10);
    assert.ok(Number.isNaN(byGroup[0]));
    assert.equal(ndcgAt([1, 2, 1, 2], [0, 0, 1, 0], [2, 2], 10), byGroup[1]);
    assert.ok(Number.isNaN(ndcgAt([1, 2], [0, 0], [2], 10)));
  });

  test('property: tied scores rank the lower label first, whatever the row order', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 30 }), (labels) => {
        fc.pre(labels.some((label) => label > 0));
        const tied = ndcgAt(new Float64Array(labels.length), labels, [labels.length], 10);
        const worst = [...labels].sort((a, b) => a - b);
        const best = [...labels].sort((a, b) => b - a);
        assert.ok(Math.abs(tied - dcg(worst.slice(0, 10)) / dcg(best.slice(0, 10))) < 1e-12, String(tied));
        assert.equal(
          ndcgAt(new Float64Array(labels.length), [...labels].reverse(), [labels.length], 10),
          tied,
        );
      }),
      { numRuns: 100, seed: 22 },
    );
  });
});

describe('ranking a group', () => {
  test('property: re-ranking from any earlier order gives the one ranking (score, then lower label, then row)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom(0, 1, 2, 0.5, Number.NaN), fc.integer({ min: 0, max: 3 })), {
          minLength: 1,
          maxLength: 80,
        }),
        fc.integer({ min: 0, max: 5 }),
        (rows, offset) => {
          const scores = [...new Array<number>(offset).fill(9), ...rows.map(([score]) => score)];
          const labels = [...new Array<number>(offset).fill(0), ...rows.map(([, label]) => label)];
          const order = new Uint32Array(rows.length);
          rankGroup(scores, labels, offset, rows.length, order);
          const start = Array.from({ length: rows.length }, (_, i) => offset + i).reverse();
          const ranked = Uint32Array.from([...new Array<number>(offset).fill(0), ...start]);
          rerankGroup(scores, labels, ranked, offset, rows.length);
          assert.deepEqual(Array.from(ranked.subarray(offset)), Array.from(order));
          for (let i = 1; i < order.length; i++) {
            const a = order[i - 1] as number;
            const b = order[i] as number;
            const sa = Number.isNaN(scores[a]) ? -Infinity : (scores[a] as number);
            const sb = Number.isNaN(scores[b]) ? -Infinity : (scores[b] as number);
            assert.ok(
              sa > sb ||
                (sa === sb &&
                  ((labels[a] as number) < (labels[b] as number) || (labels[a] === labels[b] && a < b))),
            );
          }
        },
      ),
      { numRuns: 200, seed: 22 },
    );
  });
});

describe('data sets', () => {
  test('datasetFromRows groups rows by query (first appearance order), by name or by column; anything not a number is missing', () => {
    const data = datasetFromRows(
      ['a:x', 'a:y'],
      [
        { group: 'q2', label: 1, values: { 'a:x': 1, 'a:y': null } },
        { group: 'q1', label: 0, values: [2, 3] },
        { group: 'q2', label: 2, values: { 'a:x': 'text', 'a:y': 5 } },
      ],
    );
    assert.deepEqual(Array.from(data.groups), [2, 1]);
    assert.deepEqual(Array.from(data.labels), [1, 2, 0]);
    assert.deepEqual(Array.from(data.values), [1, Number.NaN, Number.NaN, 5, 2, 3]);
    assert.throws(() => datasetFromRows(['a:x'], [{ group: 1, label: -1, values: [0] }]), /label -1/);
    assert.throws(
      () => datasetFromRows(['a:x'], [{ group: 1, label: 1, values: [0, 1] }]),
      TrainingInputError,
    );
  });

  test('property: splitByGroups keeps whole groups, in order, the latest ones for validation', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 5 }), { minLength: 2, maxLength: 40 }),
        fc.double({ min: 0.05, max: 0.95, noNaN: true }),
        (sizes, fraction) => {
          let r = 0;
          const rows = sizes.flatMap((size, g) =>
            Array.from({ length: size }, () => ({ group: g, label: 0, values: [r++] })),
          );
          const data = datasetFromRows(['a:row'], rows);
          const { train, validation } = splitByGroups(data, fraction);
          assert.ok(train.groups.length >= 1 && validation.groups.length >= 1);
          assert.deepEqual([...train.groups, ...validation.groups], sizes);
          assert.deepEqual([...train.values, ...validation.values], [...data.values]);
          assert.equal(train.rows + validation.rows, data.rows);
        },
      ),
      { numRuns: 100, seed: 22 },
    );
    assert.throws(
      () => splitByGroups(datasetFromRows(['a:x'], [{ group: 1, label: 1, values: [0] }])),
      /at least 2/,
    );
  });
});
