/**
 * The XGBoost evaluator against the real library: test/fixtures/gbdt/make-xgboost-fixtures.py
 * trained the models with Debian's python3-xgboost and recorded XGBoost's own margins and
 * predictions for rows with missing values and values on (and one float32 step around) split
 * thresholds.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import type { TreeEnsemble } from '../src/models/gbdt/tree-ensemble.js';
import { parseXgboostJson } from '../src/models/gbdt/xgboost-json.js';

const DIR = new URL('./fixtures/gbdt/xgboost/', import.meta.url);
const modelText = (name: string) => readFileSync(new URL(`${name}.model.json`, DIR), 'utf8');

interface Cases {
  note: string;
  xgboost_version: string;
  objective: string;
  inputs: Array<Array<number | null>>;
  margin: number[];
  prediction: number[];
}

function cases(name: string): Cases & { matrix: Float64Array; rows: number; cols: number } {
  const parsed = JSON.parse(readFileSync(new URL(`${name}.cases.json`, DIR), 'utf8')) as Cases;
  const cols = parsed.inputs[0]?.length ?? 0;
  const matrix = Float64Array.from(parsed.inputs.flat(), (v) => (v === null ? Number.NaN : v));
  return { ...parsed, matrix, rows: parsed.inputs.length, cols };
}

/** Within 1e-6, relative for values above 1 in magnitude. */
function assertClose(actual: ArrayLike<number>, expected: readonly number[], what: string): void {
  assert.equal(actual.length, expected.length);
  for (let i = 0; i < expected.length; i++) {
    const want = expected[i] as number;
    const got = actual[i] as number;
    const tolerance = 1e-6 * Math.max(1, Math.abs(want));
    assert.ok(Math.abs(got - want) <= tolerance, `${what} row ${i}: ${got} vs XGBoost's ${want}`);
  }
}

const FIXTURES = ['regression', 'binary-logistic', 'rank-pairwise', 'poisson', 'dart', 'categorical'];

for (const name of FIXTURES) {
  describe(`XGBoost ${name}`, () => {
    const expected = cases(name);
    const layouts =
      name === 'categorical'
        ? (['pointer', 'pointer-walk'] as const)
        : (['heap', 'pointer', 'pointer-walk'] as const);
    for (const layout of layouts) {
      test(`${layout} layout matches XGBoost ${expected.xgboost_version} (${expected.note})`, () => {
        const model = parseXgboostJson(modelText(name), `${name}.model.json`, { layout });
        assert.equal(model.layout, layout === 'heap' ? 'heap' : 'pointer');
        assert.equal(model.objective, expected.objective);
        const margin = model.predictMargin(expected.matrix, expected.rows, expected.cols);
        // Same float32 comparisons and float32 sums in the same order: the same bits.
        assert.deepEqual(Array.from(margin), expected.margin, 'margins bit for bit');
        assertClose(
          model.predict(expected.matrix, expected.rows, expected.cols),
          expected.prediction,
          'prediction',
        );
      });
    }
    test('auto layout: heap for numerical trees, pointer for categorical ones', () => {
      const model = parseXgboostJson(modelText(name), `${name}.model.json`);
      assert.equal(model.layout, name === 'categorical' ? 'pointer' : 'heap');
    });
  });
}

// biome-ignore lint/suspicious/noExplicitAny: tests reach into the model file's JSON freely
type ModelJson = Record<string, any>;

/** The model with its JSON edited by `edit`. */
function edited(name: string, edit: (document: ModelJson) => void): TreeEnsemble {
  const document = JSON.parse(modelText(name).replaceAll('NaN', 'null')) as ModelJson;
  edit(document);
  return parseXgboostJson(JSON.stringify(document), `${name}-edited.json`);
}

describe('XGBoost base_score', () => {
  const expected = cases('binary-logistic');
  const allMissing = Float64Array.of(...new Array(expected.cols).fill(Number.NaN));

  test('is a probability for logistic objectives: the margin starts at logit(base_score)', () => {
    const noTrees = edited('binary-logistic', (d) => {
      d.learner.gradient_booster.model.trees = [];
      d.learner.gradient_booster.model.tree_info = [];
    });
    const [margin] = noTrees.predictMargin(allMissing, 1, expected.cols);
    assert.equal(margin, Math.fround(Math.log(0.3 / 0.7)));
    const [probability] = noTrees.predict(allMissing, 1, expected.cols);
    assert.ok(Math.abs((probability as number) - 0.3) < 1e-7);
  });

  test('the vector form of XGBoost ≥ 2.1 ("[3E-1]") and boolean default_left read the same', () => {
    const newer = edited('binary-logistic', (d) => {
      d.version = [2, 1, 0];
      d.learner.learner_model_param.base_score = '[3E-1]';
      for (const tree of d.learner.gradient_booster.model.trees) {
        tree.default_left = tree.default_left.map((v: number) => v === 1);
      }
    });
    assert.deepEqual(
      Array.from(newer.predictMargin(expected.matrix, expected.rows, expected.cols)),
      expected.margin,
    );
  });

  test('is a plain margin for squared error', () => {
    const noTrees = edited('regression', (d) => {
      d.learner.gradient_booster.model.trees = [];
      d.learner.learner_model_param.base_score = '1.25E0';
    });
    assert.deepEqual(Array.from(noTrees.predict(allMissing, 1, expected.cols)), [1.25]);
  });

  test('a logistic base_score outside (0, 1) is refused, naming the file and field', () => {
    assert.throws(
      () =>
        edited('binary-logistic', (d) => {
          d.learner.learner_model_param.base_score = '1E0';
        }),
      /binary-logistic-edited\.json: .*learner\.learner_model_param\.base_score is 1.*strictly between 0 and 1/,
    );
  });
});

describe('XGBoost model metadata', () => {
  test('feature names, feature count and tree count', () => {
    const model = parseXgboostJson(modelText('binary-logistic'), 'binary-logistic.model.json');
    assert.deepEqual(model.featureNames, ['f_0', 'f_1', 'f_2', 'f_3', 'f_4', 'f_5']);
    assert.equal(model.numFeatures, 6);
    assert.equal(model.numTrees, 20);
    assert.equal(parseXgboostJson(modelText('regression')).featureNames, undefined);
  });

  test('rows narrower than the features the splits read are refused', () => {
    const model = parseXgboostJson(modelText('regression'));
    assert.throws(() => model.predict(new Float64Array(4), 1, 4), /reads 6 features per row; rows have 4/);
  });

  test('wider rows are fine: extra columns are ignored', () => {
    const expected = cases('regression');
    const wide = new Float64Array(expected.rows * (expected.cols + 2)).fill(123);
    for (let r = 0; r < expected.rows; r++) {
      wide.set(expected.matrix.subarray(r * expected.cols, (r + 1) * expected.cols), r * (expected.cols + 2));
    }
    const model = parseXgboostJson(modelText('regression'));
    assert.deepEqual(
      Array.from(model.predictMargin(wide, expected.rows, expected.cols + 2)),
      expected.margin,
    );
  });

  test('writes into a given out array and reuses its buffers across batch sizes', () => {
    const expected = cases('rank-pairwise');
    const model = parseXgboostJson(modelText('rank-pairwise'));
    const out = new Float64Array(expected.rows + 5).fill(-7);
    assert.equal(model.predict(expected.matrix, expected.rows, expected.cols, out), out);
    assert.deepEqual(Array.from(out.subarray(0, expected.rows)), expected.prediction);
    assert.deepEqual(Array.from(out.subarray(expected.rows)), [-7, -7, -7, -7, -7]);
    const three = model.predict(expected.matrix.subarray(0, 3 * expected.cols), 3, expected.cols);
    assert.deepEqual(Array.from(three), expected.prediction.slice(0, 3));
    assert.deepEqual(Array.from(model.predict(new Float64Array(0), 0, expected.cols)), []);
  });
});
