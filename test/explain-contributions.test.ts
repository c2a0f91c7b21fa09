/**
 * Model explanations: each input's contribution to a candidate's margin.
 *
 * - TreeSHAP against XGBoost's own `pred_contribs`: test/fixtures/treeshap/make-fixtures.py
 *   trained the models with Debian's python3-xgboost (depths 1, 3 and 6, missing values, a
 *   logistic, a ranking, a DART and a categorical model) and recorded XGBoost's contributions.
 * - Additivity (bias + Σ contributions = the margin) on those and on the hand-written LightGBM
 *   models of test/fixtures/gbdt/lightgbm/ (LightGBM is not in Debian: no library output to
 *   compare contributions with).
 * - Linear models: exact, a property test.
 * - Chains per model; ONNX, remote and custom models: inputs only, contributions not available.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import fc from 'fast-check';
import { Feature } from '../src/features/feature-kind.js';
import { defineModel, type Model } from '../src/models/define-model.js';
import { explainModel, NOT_EXPLAINED } from '../src/models/explain/explain-model.js';
import type { StageExplanation } from '../src/models/explain/explanation.js';
import { linearContributions, marginOf } from '../src/models/explain/linear-contributions.js';
import { childFor } from '../src/models/explain/split-decision.js';
import { TreeShapExplainer } from '../src/models/explain/tree-shap.js';
import { parseLenientJson } from '../src/models/gbdt/json-fields.js';
import { lightgbmSource } from '../src/models/gbdt/lightgbm-text.js';
import { TreeEnsemble } from '../src/models/gbdt/tree-ensemble.js';
import type { EnsembleSource, TreeSource } from '../src/models/gbdt/tree-source.js';
import { xgboostSource } from '../src/models/gbdt/xgboost-json.js';
import { gbdtModel } from '../src/models/gbdt-model.js';
import { linearModel } from '../src/models/linear-model.js';
import { chainModels } from '../src/models/model-chain.js';
import { onnxModel } from '../src/models/onnx-model.js';
import { loadOnnxRuntime } from '../src/models/onnx-runtime.js';
import { remoteModel } from '../src/models/remote-model.js';
import type { RankdRequest } from '../src/request/component.js';
import { RequestContext, runInContext } from '../src/request/request-context.js';

const FIXTURES = new URL('./fixtures/', import.meta.url);
const fixture = (path: string) => new URL(path, FIXTURES).pathname;
const TOLERANCE = 1e-5;

// Model files the tests write live in a temporary directory.
const dir = mkdtempSync(join(tmpdir(), 'rankd-explain-'));
after(() => rmSync(dir, { recursive: true, force: true }));

interface Cases {
  note: string;
  xgboost_version: string;
  inputs: Array<Array<number | null>>;
  /** Per row, XGBoost's pred_contribs: one value per feature, then the bias. */
  contribs: number[][];
  margin: number[];
}

function xgboostCase(name: string) {
  const cases = JSON.parse(readFileSync(fixture(`treeshap/${name}.cases.json`), 'utf8')) as Cases;
  const source = xgboostSource(
    parseLenientJson(readFileSync(fixture(`treeshap/${name}.model.json`), 'utf8')),
  );
  const cols = cases.inputs[0]?.length ?? 0;
  const matrix = Float64Array.from(cases.inputs.flat(), (v) => (v === null ? Number.NaN : v));
  return { cases, source, matrix, rows: cases.inputs.length, cols };
}

function explainerOf(source: EnsembleSource): TreeShapExplainer {
  const explainer = TreeShapExplainer.fromSource(source);
  assert.ok(explainer instanceof TreeShapExplainer, 'the fixture has covers');
  return explainer;
}

/** Checks bias + Σ contributions against the evaluator's margins; returns the largest difference. */
function checkAdditivity(source: EnsembleSource, matrix: Float64Array, rows: number, cols: number): number {
  const explainer = explainerOf(source);
  const margins = TreeEnsemble.fromSource(source).predictMargin(matrix, rows, cols);
  let worst = 0;
  explainer.explain(matrix, rows, cols).forEach((row, i) => {
    const error = Math.abs(marginOf(row) - (margins[i] as number));
    worst = Math.max(worst, error);
    // XGBoost sums its trees in float32: the margin is within float32 rounding of the exact sum.
    assert.ok(error <= TOLERANCE * Math.max(1, Math.abs(margins[i] as number)), `row ${i}: off by ${error}`);
  });
  return worst;
}

const XGBOOST_FIXTURES = ['depth1', 'depth3-logistic', 'depth6', 'rank-pairwise', 'dart', 'categorical'];

describe('TreeSHAP against XGBoost pred_contribs', () => {
  for (const name of XGBOOST_FIXTURES) {
    const { cases, source, matrix, rows, cols } = xgboostCase(name);
    test(`${name}: every contribution and the bias within 1e-5 of XGBoost ${cases.xgboost_version} (${cases.note})`, (t) => {
      const explained = explainerOf(source).explain(matrix, rows, cols);
      let worst = 0;
      explained.forEach(({ bias, values }, row) => {
        const expected = cases.contribs[row] as number[];
        assert.equal(expected.length, cols + 1);
        for (let j = 0; j <= cols; j++) {
          const got = j === cols ? bias : (values[j] as number);
          const error = Math.abs(got - (expected[j] as number));
          worst = Math.max(worst, error);
          assert.ok(
            error <= TOLERANCE,
            `row ${row} ${j === cols ? 'bias' : `feature ${j}`}: ${got} vs XGBoost's ${expected[j]}`,
          );
        }
      });
      t.diagnostic(`largest difference from XGBoost: ${worst.toExponential(2)}`);
    });
    test(`${name}: bias + Σ contributions is the margin`, (t) => {
      const worst = checkAdditivity(source, matrix, rows, cols);
      t.diagnostic(`largest difference from the evaluator's margin: ${worst.toExponential(2)}`);
      cases.margin.forEach((margin, row) => {
        const sum = (cases.contribs[row] as number[]).reduce((a, b) => a + b, 0);
        assert.ok(Math.abs(sum - margin) <= TOLERANCE * Math.max(1, Math.abs(margin)), 'the fixture adds up');
      });
    });
  }

  test('a file without node covers still scores; its explanations say why there are none', () => {
    const text = readFileSync(fixture('treeshap/depth1.model.json'), 'utf8').replace(
      /"sum_hessian":\[[^\]]*\],?/g,
      '',
    );
    const source = xgboostSource(parseLenientJson(text));
    const explainer = TreeShapExplainer.fromSource(source);
    assert.ok(!(explainer instanceof TreeShapExplainer));
    assert.match(explainer.unavailable, /tree 0 of the model file has no node covers/);
    assert.equal(TreeEnsemble.fromSource(source).numTrees, 12);
  });
});

/** Rows that reach every rule of the LightGBM fixtures: NaN, 0, ±1e-36, thresholds, categories. */
function lightgbmRows(cols: number, seed: number): Float64Array {
  const special = [Number.NaN, 0, 1e-36, -1e-36, 0.5, 1.5, -1, 0, 3, 33, 2.7, -2, 100];
  const values: number[] = [];
  let state = seed;
  const next = () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
  for (let row = 0; row < 200; row++) {
    for (let col = 0; col < cols; col++) {
      values.push(
        next() < 0.5 ? (special[Math.floor(next() * special.length)] as number) : (next() - 0.5) * 8,
      );
    }
  }
  return Float64Array.from(values);
}

/**
 * The expected output of `tree` when only the features in `known` are known: known features
 * follow the row, unknown ones take both sides weighted by cover (Lundberg et al., Algorithm 1).
 */
function conditionalExpectation(
  source: EnsembleSource,
  tree: TreeSource,
  node: number,
  row: ArrayLike<number>,
  known: number,
): number {
  const left = tree.left[node] as number;
  if (left < 0) return tree.value[node] as number;
  const right = tree.right[node] as number;
  const feature = tree.feature[node] as number;
  if (known & (1 << feature))
    return conditionalExpectation(source, tree, childFor(source.semantics, tree, node, row), row, known);
  const cover = tree.cover as ArrayLike<number>;
  return (
    ((cover[left] as number) * conditionalExpectation(source, tree, left, row, known) +
      (cover[right] as number) * conditionalExpectation(source, tree, right, row, known)) /
    (cover[node] as number)
  );
}

/** Shapley values of the ensemble's conditional expectations, summed over every subset of features. */
function bruteForceShap(source: EnsembleSource, row: ArrayLike<number>): number[] {
  const m = source.numFeatures;
  const factorial = (n: number): number => (n <= 1 ? 1 : n * factorial(n - 1));
  const value = (known: number) =>
    source.trees.reduce((sum, tree) => sum + conditionalExpectation(source, tree, 0, row, known), 0);
  return Array.from({ length: m }, (_, i) => {
    let phi = 0;
    for (let subset = 0; subset < 1 << m; subset++) {
      if (subset & (1 << i)) continue;
      let size = 0;
      for (let b = 0; b < m; b++) if (subset & (1 << b)) size++;
      const weight = (factorial(size) * factorial(m - size - 1)) / factorial(m);
      phi += weight * (value(subset | (1 << i)) - value(subset));
    }
    return phi;
  });
}

describe('TreeSHAP on LightGBM models', () => {
  for (const name of ['numerical', 'zero-missing', 'categorical']) {
    test(`${name}.txt: bias + Σ contributions is the margin, on rows reaching every missing-value and category rule`, () => {
      const source = lightgbmSource(readFileSync(fixture(`gbdt/lightgbm/${name}.txt`), 'utf8'));
      const cols = source.numFeatures;
      const matrix = lightgbmRows(cols, cols * 7 + name.length);
      checkAdditivity(source, matrix, matrix.length / cols, cols);
    });
  }

  test('every contribution equals the Shapley value computed from all feature subsets (Algorithm 1)', () => {
    for (const name of ['numerical', 'zero-missing', 'categorical']) {
      const source = lightgbmSource(readFileSync(fixture(`gbdt/lightgbm/${name}.txt`), 'utf8'));
      const cols = source.numFeatures;
      const matrix = lightgbmRows(cols, 3 + name.length);
      const explainer = explainerOf(source);
      for (let row = 0; row < 60; row++) {
        const x = matrix.subarray(row * cols, (row + 1) * cols);
        const expected = bruteForceShap(source, x);
        const { values } = explainer.explainRow(x);
        for (let j = 0; j < cols; j++) {
          assert.ok(
            Math.abs((values[j] as number) - (expected[j] as number)) <= 1e-12,
            `${name} row ${row} feature ${j}`,
          );
        }
      }
    }
  });
});

/** Identifiers of `rows` items, with `x:<name>` set from each row, in a request context of their own. */
function itemsIn(rows: ReadonlyArray<Record<string, number | null>>) {
  const context = new RequestContext('explain', { request_id: 'explain' });
  const names = [...new Set(rows.flatMap((row) => Object.keys(row)))];
  context.features.declare('x', Object.fromEntries(names.map((name) => [name, Feature.float()])), ['item']);
  const items = rows.map((row, i) => {
    context.features.putComputed('x', String(i), undefined, row);
    return { type: 'item', id: String(i) };
  });
  const request = context.request as RankdRequest;
  return { items, request, run: <T>(fn: () => Promise<T>) => runInContext(context, fn) };
}

/** A model's scores and explanations of the same batch. */
async function scoreAndExplain(model: Model, rows: ReadonlyArray<Record<string, number | null>>) {
  const { items, request, run } = itemsIn(rows);
  return run(async () => ({
    scores: Array.from(await model.score(items, request)),
    explained: await explainModel(model, items, request),
  }));
}

let files = 0;
const linearFile = (weights: Record<string, number>, bias: number) => {
  const path = join(dir, `linear-${files++}.json`);
  writeFileSync(path, JSON.stringify({ weights, bias }));
  return path;
};

describe('linear contributions', () => {
  test('property: bias + Σ contributions, in feature order, is the score exactly; a missing value contributes 0', async () => {
    const finite = fc.double({ min: -1e6, max: 1e6, noNaN: true });
    // The weights file is JSON, which writes -0 as 0.
    const parameter = finite.map((v) => v + 0);
    await fc.assert(
      fc.asyncProperty(
        fc.array(parameter, { minLength: 1, maxLength: 6 }),
        parameter,
        fc.array(fc.array(fc.option(finite, { nil: null }), { minLength: 6, maxLength: 6 }), {
          minLength: 1,
          maxLength: 5,
        }),
        fc.constantFrom('raw' as const, 'sigmoid' as const),
        async (weights, bias, values, objective) => {
          const features = weights.map((_, j) => `x:f${j}`);
          const model = linearModel({
            name: 'lin',
            file: linearFile(Object.fromEntries(features.map((f, j) => [f, weights[j] as number])), bias),
            objective,
            watch: false,
          });
          await model.initialize();
          const rows = values.map((row) =>
            Object.fromEntries(features.map((_, j) => [`f${j}`, row[j] ?? null])),
          );
          const { scores, explained } = await scoreAndExplain(model, rows);
          await model.dispose();
          explained.forEach((explanation, i) => {
            assert.equal(explanation.available, true);
            assert.equal(explanation.bias, bias);
            const contributions = explanation.contributions as Record<string, number>;
            let sum = bias;
            for (const [j, feature] of features.entries()) {
              const input = rows[i]?.[`f${j}`] ?? null;
              assert.equal(explanation.inputs[feature], input);
              assert.equal(contributions[feature], input === null ? 0 : (weights[j] as number) * input);
              sum += contributions[feature] as number;
            }
            assert.equal(sum, explanation.margin);
            assert.equal(explanation.score, scores[i]);
            if (objective === 'raw') assert.equal(sum, scores[i]);
            // In any order, the same sum within rounding of the additions.
            const reordered = Object.values(contributions)
              .reverse()
              .reduce((a, b) => a + b, bias);
            const scale = Math.max(1, Math.abs(bias), ...Object.values(contributions).map(Math.abs));
            assert.ok(Math.abs(reordered - sum) <= 1e-12 * scale);
          });
        },
      ),
      { numRuns: 60 },
    );
  });

  test('linearContributions: weight × value, 0 for missing', () => {
    const row = linearContributions([2, -1, 10], 0.5, [3, Number.NaN, 1]);
    assert.deepEqual(Array.from(row.values), [6, 0, 10]);
    assert.equal(marginOf(row), 16.5);
  });
});

const G_FEATURES = Array.from({ length: 5 }, (_, i) => `x:f${i}`);
/** The rows of a TreeSHAP fixture as feature records. */
const fixtureRows = (name: string) =>
  xgboostCase(name).cases.inputs.map((row) => Object.fromEntries(row.map((value, j) => [`f${j}`, value])));

describe('gbdtModel explanations', () => {
  test('match XGBoost through the model: contributions by feature name, margin, and the sigmoid score', async () => {
    const model = gbdtModel({
      name: 'trees',
      file: fixture('treeshap/depth3-logistic.model.json'),
      features: G_FEATURES,
      watch: false,
    });
    await model.initialize();
    const { cases } = xgboostCase('depth3-logistic');
    const { scores, explained } = await scoreAndExplain(model, fixtureRows('depth3-logistic'));
    await model.dispose();
    explained.forEach((explanation, row) => {
      const expected = cases.contribs[row] as number[];
      assert.equal(explanation.available, true);
      assert.ok(Math.abs((explanation.bias as number) - (expected[5] as number)) <= TOLERANCE);
      G_FEATURES.forEach((feature, j) => {
        const got = explanation.contributions?.[feature] as number;
        assert.ok(Math.abs(got - (expected[j] as number)) <= TOLERANCE, `row ${row} ${feature}`);
      });
      assert.equal(explanation.margin, Math.fround(cases.margin[row] as number));
      assert.equal(explanation.score, scores[row]);
      assert.ok(
        Math.abs((explanation.score as number) - 1 / (1 + Math.exp(-(explanation.margin as number)))) < 1e-6,
      );
    });
  });

  test('a file without node covers scores as before; explanations give inputs and the reason', async () => {
    const text = readFileSync(fixture('treeshap/depth1.model.json'), 'utf8').replace(
      /"sum_hessian":\[[^\]]*\],?/g,
      '',
    );
    const path = join(dir, 'no-covers.json');
    writeFileSync(path, text);
    const model = gbdtModel({ name: 'bare', file: path, features: G_FEATURES, watch: false });
    await model.initialize();
    const { scores, explained } = await scoreAndExplain(model, fixtureRows('depth1').slice(0, 5));
    await model.dispose();
    const { cases } = xgboostCase('depth1');
    explained.forEach((explanation, row) => {
      assert.equal(explanation.available, false);
      assert.equal(explanation.contributions, null);
      assert.match(explanation.reason as string, /no node covers/);
      assert.equal(explanation.score, scores[row]);
      assert.equal(explanation.score, Math.fround(cases.margin[row] as number));
    });
  });
});

describe('gbdtModel explanations of a LightGBM file', () => {
  test('categorical.txt: margins add up, the score is the sigmoid of the margin', async () => {
    const model = gbdtModel({
      name: 'lgbm',
      file: fixture('gbdt/lightgbm/categorical.txt'),
      features: ['x:score', 'x:brand'],
      watch: false,
    });
    await model.initialize();
    const rows = [
      { score: 0.3, brand: 3 },
      { score: null, brand: 33 },
      { score: -2, brand: null },
      { score: 1e-36, brand: 2.9 },
    ];
    const { scores, explained } = await scoreAndExplain(model, rows);
    await model.dispose();
    explained.forEach((explanation, row) => {
      assert.equal(explanation.available, true);
      const contributions = explanation.contributions ?? {};
      const sum =
        (explanation.bias as number) + (contributions['x:score'] ?? 0) + (contributions['x:brand'] ?? 0);
      assert.ok(Math.abs(sum - (explanation.margin as number)) <= 1e-12, `row ${row}`);
      assert.equal(explanation.score, scores[row]);
      assert.ok(
        Math.abs((explanation.score as number) - 1 / (1 + Math.exp(-(explanation.margin as number)))) < 1e-12,
      );
    });
  });
});

describe('chains: explained model by model', () => {
  test('each stage explained; a later stage reads the earlier score as its input; the chain is its last stage', async () => {
    const trees = gbdtModel({
      name: 'trees',
      file: fixture('treeshap/depth6.model.json'),
      features: G_FEATURES,
      watch: false,
    });
    const blend = linearModel({
      name: 'blend',
      file: linearFile({ 'trees:score': 2, 'x:f0': -1 }, 0.25),
      objective: 'sigmoid',
      watch: false,
    });
    const chain = chainModels({ name: 'ranking', models: [trees, blend] });
    await chain.initialize();
    // Scoring's snapshots carry nothing for explanations; explanations take their own.
    for (const model of [chain, trees, blend]) {
      const taken = model.snapshot();
      assert.equal(taken.explain, undefined);
      taken.done();
    }
    const { scores, explained } = await scoreAndExplain(chain, fixtureRows('depth6').slice(0, 12));
    await chain.dispose();
    explained.forEach((explanation, row) => {
      const stages = explanation.stages ?? [];
      assert.deepEqual(
        stages.map((stage) => [stage.model, stage.available]),
        [
          ['trees', true],
          ['blend', true],
        ],
      );
      const [first, second] = stages as readonly [StageExplanation, StageExplanation];
      assert.equal(second.inputs['trees:score'], first.score);
      assert.equal(second.contributions?.['trees:score'], 2 * (first.score as number));
      assert.equal(explanation.score, scores[row]);
      assert.equal(explanation.score, second.score);
      assert.deepEqual(explanation.contributions, second.contributions);
      assert.equal('model' in explanation, false);
      const sum = Object.values(first.contributions ?? {}).reduce((a, b) => a + b, first.bias as number);
      assert.ok(Math.abs(sum - (first.margin as number)) <= TOLERANCE * Math.max(1, Math.abs(sum)));
    });
  });

  test('a custom model in a chain: its scores and inputs, contributions not available', async () => {
    const custom = defineModel({ name: 'custom', features: ['x:f0'], score: (items) => items.map(() => 3) });
    const blend = linearModel({ name: 'blend2', file: linearFile({ 'custom:score': 1 }, 1), watch: false });
    const chain = chainModels({ name: 'c', models: [custom, blend] });
    await chain.initialize();
    const { explained } = await scoreAndExplain(chain, [{ f0: 7 }]);
    await chain.dispose();
    const [first, second] = explained[0]?.stages ?? [];
    assert.deepEqual(first, {
      model: 'custom',
      score: 3,
      available: false,
      margin: null,
      bias: null,
      contributions: null,
      inputs: { 'x:f0': 7 },
      reason: NOT_EXPLAINED,
    });
    assert.equal(second?.margin, 4);
  });
});

describe('models that are explained by their inputs only', () => {
  test('remote: the endpoint scores, inputs given, contributions not available', async (t) => {
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => {
        body += chunk;
      });
      req.on('end', () => {
        const { inputs } = JSON.parse(body) as { inputs: Array<Array<number | null>> };
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ scores: inputs.map((row) => (row[0] ?? 0) * 10) }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.after(() => server.close());
    const { port } = server.address() as AddressInfo;
    const model = remoteModel({
      name: 'remote',
      url: `http://127.0.0.1:${port}/score`,
      features: ['x:f0', 'x:f1'],
      fallback: 0,
    });
    const { scores, explained } = await scoreAndExplain(model, [
      { f0: 1, f1: null },
      { f0: 2, f1: 3 },
    ]);
    assert.deepEqual(scores, [10, 20]);
    assert.deepEqual(
      explained.map((e) => [e.score, e.available, e.contributions, e.inputs]),
      [
        [10, false, null, { 'x:f0': 1, 'x:f1': null }],
        [20, false, null, { 'x:f0': 2, 'x:f1': 3 }],
      ],
    );
    assert.match(explained[0]?.reason as string, /remote model is explained by its inputs only/);
  });

  test('ONNX: scores as `score`, inputs given, contributions not available', async (t) => {
    try {
      await loadOnnxRuntime('probe');
    } catch {
      t.skip('onnxruntime-node is not installed');
      return;
    }
    const model = onnxModel({
      name: 'onnx',
      file: fixture('onnx/linear.onnx'),
      features: ['x:a', 'x:b', 'x:c'],
      watch: false,
    });
    await model.initialize();
    const rows = [
      { a: 1, b: 2, c: 3 },
      { a: null, b: 0.5, c: -1 },
    ];
    const { scores, explained } = await scoreAndExplain(model, rows);
    await model.dispose();
    explained.forEach((explanation, row) => {
      assert.equal(explanation.available, false);
      assert.equal(explanation.contributions, null);
      assert.equal(explanation.bias, null);
      // No score (NaN from a missing input) is null, as the pipeline reads it.
      assert.equal(explanation.score, Number.isFinite(scores[row]) ? scores[row] : null);
      assert.deepEqual(explanation.inputs, { 'x:a': rows[row]?.a, 'x:b': rows[row]?.b, 'x:c': rows[row]?.c });
      assert.match(explanation.reason as string, /ONNX model is explained by its inputs only/);
    });
  });
});
