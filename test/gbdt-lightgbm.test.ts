/**
 * LightGBM text models written by hand (test/fixtures/gbdt/lightgbm/, LightGBM is not in Debian):
 * every expected value below is worked out from the model file, in the comment beside it.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { parseLightgbmText } from '../src/models/gbdt/lightgbm-text.js';
import { loadGbdtModel } from '../src/models/gbdt/load-gbdt.js';
import type { TreeEnsemble } from '../src/models/gbdt/tree-ensemble.js';

const FIXTURES = new URL('./fixtures/gbdt/lightgbm/', import.meta.url);
const fixture = (name: string) => new URL(name, FIXTURES).pathname;
const text = (name: string) => readFileSync(fixture(name), 'utf8');
const LAYOUTS = ['heap', 'pointer', 'pointer-walk'] as const;

/** The margins of `rows` (all of one width) as a plain array. */
function margins(model: TreeEnsemble, rows: readonly (readonly number[])[]): number[] {
  const cols = rows[0]?.length ?? 0;
  return Array.from(model.predictMargin(Float64Array.from(rows.flat()), rows.length, cols));
}

const sigmoid = (x: number) => 1 / (1 + Math.exp(-x));

describe('LightGBM numerical splits (numerical.txt)', () => {
  // Tree 0: n0 price <= 0.5 (None: NaN→0) ? leaf 1 : n1
  //         n1 rating <= 1.5 (NaN type, default right) ? n2 : leaf 4
  //         n2 age <= -1 (None: NaN→0, and 0 > -1 so right) ? leaf 2 : leaf 3
  // Tree 1: rating <= 0 (NaN type, default left) ? 0.5 : -0.5
  // Tree 2: a single leaf, 0.25.
  const cases: Array<[number[], number, string]> = [
    [[0.5, 0, 0], 1 + 0.5 + 0.25, 'price == 0.5 goes left (<=); rating 0 <= 0 left'],
    [
      [Number.NaN, Number.NaN, Number.NaN],
      1 + 0.5 + 0.25,
      'None: NaN price is 0 → left; NaN type default left',
    ],
    [[0.6, Number.NaN, 5], 4 + 0.5 + 0.25, 'NaN rating: default right in tree 0, default left in tree 1'],
    [
      [0.5000000000000001, 1.5, Number.NaN],
      3 - 0.5 + 0.25,
      'one ulp above 0.5 goes right; NaN age is 0 > -1',
    ],
    [[1, 1.5000000000000002, -1], 4 - 0.5 + 0.25, 'one ulp above 1.5 goes right'],
    [[1, -3, -1], 2 + 0.5 + 0.25, 'age == -1 goes left'],
    [[1, 1e-36, -2], 2 + 0.5 + 0.25, 'rating 1e-36 is read as 0 (|x| <= 1e-35), so 0 <= 0 goes left'],
    [
      [Number.NEGATIVE_INFINITY, Number.POSITIVE_INFINITY, 0],
      1 - 0.5 + 0.25,
      'infinities compare as numbers',
    ],
    [[0.75, -1e-300, Number.NaN], 3 + 0.5 + 0.25, 'NaN age (None) is 0 → right'],
  ];

  for (const layout of LAYOUTS) {
    test(`${layout} layout: every documented case`, () => {
      const model = parseLightgbmText(text('numerical.txt'), 'numerical.txt', { layout });
      assert.equal(model.layout, layout === 'heap' ? 'heap' : 'pointer');
      const got = margins(
        model,
        cases.map(([row]) => row),
      );
      cases.forEach(([row, expected, why], i) => {
        assert.equal(got[i], expected, `${JSON.stringify(row)}: ${why}`);
      });
    });
  }

  test('regression is raw: predict equals the margin; header fields are read', async () => {
    const model = await loadGbdtModel(fixture('numerical.txt'));
    const row = Float64Array.of(1, -3, -1);
    assert.deepEqual(Array.from(model.predict(row, 1, 3)), [2.75]);
    assert.equal(model.objective, 'regression');
    assert.deepEqual(model.featureNames, ['price', 'rating', 'age']);
    assert.equal(model.numFeatures, 3);
    assert.equal(model.numTrees, 3);
  });

  test('average_output (random forest) divides the sum by the number of trees', () => {
    const rf = text('numerical.txt').replace(
      'objective=regression\n',
      'objective=regression\naverage_output\n',
    );
    const model = parseLightgbmText(rf, 'rf.txt');
    assert.deepEqual(Array.from(model.predict(Float64Array.of(1, -3, -1), 1, 3)), [2.75 / 3]);
  });

  test('regression sqrt squares the margin back, keeping its sign', () => {
    const sqrt = text('numerical.txt').replace('objective=regression\n', 'objective=regression sqrt\n');
    const model = parseLightgbmText(sqrt, 'sqrt.txt');
    assert.deepEqual(Array.from(model.predict(Float64Array.of(1, -3, -1), 1, 3)), [2.75 * 2.75]);
  });
});

describe('LightGBM MissingType Zero (zero-missing.txt)', () => {
  // Tree 0: clicks <= 0.25, Zero type, default right ? 1 : 10
  // Tree 1: dwell <= -0.5, Zero type, default left ? 100 : 1000
  // Zero type: NaN becomes 0, and any |x| <= 1e-35 takes the default direction.
  const cases: Array<[number[], number, string]> = [
    [[0, 0], 10 + 100, 'zero takes the default direction in both trees'],
    [[Number.NaN, Number.NaN], 10 + 100, 'NaN is 0, so default direction too'],
    [[1e-36, -1e-36], 10 + 100, 'within 1e-35 of 0 counts as zero'],
    [[-1e-35, 1e-35], 10 + 100, '±1e-35 (below 1e-35f) still counts as zero'],
    [[2e-35, -0.25], 1 + 1000, 'beyond 1e-35 is compared: 2e-35 <= 0.25 left; -0.25 > -0.5 right'],
    [[0.25, -0.5], 1 + 100, 'equal to the threshold goes left'],
    [[0.3, 1], 10 + 1000, 'above the threshold goes right'],
    [[-3, -3], 1 + 100, 'negative values are compared like any other'],
  ];
  for (const layout of LAYOUTS) {
    test(`${layout} layout: every documented case`, () => {
      const model = parseLightgbmText(text('zero-missing.txt'), 'zero-missing.txt', { layout });
      const got = margins(
        model,
        cases.map(([row]) => row),
      );
      cases.forEach(([row, expected, why], i) => {
        assert.equal(got[i], expected, `${JSON.stringify(row)}: ${why}`);
      });
    });
  }

  test('lambdarank is raw', () => {
    const model = parseLightgbmText(text('zero-missing.txt'), 'zero-missing.txt');
    assert.deepEqual(Array.from(model.predict(Float64Array.of(0.3, 1), 1, 2)), [1010]);
  });
});

describe('LightGBM categorical splits (categorical.txt)', () => {
  // Tree 0: n0 brand in {0, 3, 33} (bitset words 9 = bits 0 and 3, 2 = bit 33) ? 2 : n1
  //         n1 score <= 0 (None: NaN→0) ? -1 : 0.5
  // Tree 1: brand in {2} (word 4) ? 0.25 : -0.25
  // A categorical value is truncated toward zero; NaN and negatives go right.
  const cases: Array<[number[], number, string]> = [
    [[0, 0], 2 - 0.25, 'category 0 is in the set'],
    [[0, 3], 2 - 0.25, 'category 3 is in the set'],
    [[0, 33], 2 - 0.25, 'category 33 is in the second bitset word'],
    [[1, 3.7], 2 - 0.25, '3.7 truncates to 3'],
    [[-1, -0.5], 2 - 0.25, '-0.5 truncates to 0, which is in the set'],
    [[-1, -1], -1 - 0.25, '-1 is negative: right, then score -1 <= 0'],
    [[1, Number.NaN], 0.5 - 0.25, 'NaN goes right'],
    [[1, 2], 0.5 + 0.25, 'category 2: not in tree 0 set, in tree 1 set'],
    [[1, 2.9], 0.5 + 0.25, '2.9 truncates to 2'],
    [[0, 32], -1 - 0.25, 'category 32 (bit 0 of word 1) is not in the set'],
    [[Number.NaN, 64], -1 - 0.25, 'category 64 is past the bitset: right; NaN score is 0 → left'],
    [[1, 1e10], 0.5 - 0.25, 'beyond int32: right'],
  ];

  test('pointer layout (auto picks it for categorical splits): every documented case', () => {
    const model = parseLightgbmText(text('categorical.txt'), 'categorical.txt');
    assert.equal(model.layout, 'pointer');
    const rows = cases.map(([row]) => row);
    const got = margins(model, rows);
    cases.forEach(([row, expected, why], i) => {
      assert.equal(got[i], expected, `${JSON.stringify(row)}: ${why}`);
    });
    const predictions = model.predict(Float64Array.from(rows.flat()), rows.length, 2);
    cases.forEach(([row, expected], i) => {
      assert.ok(Math.abs((predictions[i] as number) - sigmoid(expected)) < 1e-15, `sigmoid for ${row}`);
    });
  });

  test('binary sigmoid:2 scales the margin before the sigmoid', () => {
    const scaled = text('categorical.txt').replace('sigmoid:1', 'sigmoid:2');
    const model = parseLightgbmText(scaled, 'scaled.txt');
    const [p] = model.predict(Float64Array.of(1, 2), 1, 2);
    assert.ok(Math.abs((p as number) - sigmoid(2 * 0.75)) < 1e-15);
  });

  test('the heap layout refuses categorical splits', () => {
    assert.throws(
      () => parseLightgbmText(text('categorical.txt'), 'categorical.txt', { layout: 'heap' }),
      /categorical.txt: .*heap layout cannot hold categorical splits/,
    );
  });
});
