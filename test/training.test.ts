/**
 * The LambdaMART trainer (src/training/): it learns what can be learnt, each tree lowers the
 * objective it was fitted to, its file scores as the model in memory in rankd's own gbdtModel,
 * early stopping stops, and a seed makes feature subsampling repeatable.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import fc from 'fast-check';
import { Feature } from '../src/features/feature-kind.js';
import { gbdtModel } from '../src/models/gbdt-model.js';
import type { RankdRequest } from '../src/request/component.js';
import { RequestContext, runInContext } from '../src/request/request-context.js';
import {
  datasetFromRows,
  ndcgAt,
  type RankingDataset,
  type RankingRow,
  splitByGroups,
  TrainingInputError,
  trainLambdaMart,
} from '../src/training/index.js';
import { seededRandom } from '../src/training/random.js';

const dir = mkdtempSync(join(tmpdir(), 'rankd-training-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/**
 * Groups of `size` rows over `width` features: `utility` of the row's values (and a random
 * number) gives its label. Some values missing where `missingRate` says.
 */
function makeData(options: {
  groups: number;
  size: number;
  width: number;
  seed: number;
  missingRate?: number;
  label: (x: number[], random: () => number) => number;
}): RankingDataset {
  const random = seededRandom(options.seed);
  const rows: RankingRow[] = [];
  for (let g = 0; g < options.groups; g++) {
    for (let i = 0; i < options.size; i++) {
      const x = Array.from({ length: options.width }, () => random() * 2 - 1);
      const label = options.label(x, random);
      const values = x.map((v) => (random() < (options.missingRate ?? 0) ? null : v));
      rows.push({ group: `q${g}`, label, values });
    }
  }
  const features = Array.from({ length: options.width }, (_, f) => `x:f${f}`);
  return datasetFromRows(features, rows);
}

describe('trainLambdaMart', () => {
  test('a perfectly separable data set reaches validation NDCG 1', () => {
    // The grade is f0's whole part; f1 is noise: a tree can cut f0 anywhere in the gaps.
    const random = seededRandom(1);
    const rows: RankingRow[] = [];
    for (let g = 0; g < 60; g++) {
      for (let i = 0; i < 12; i++) {
        const label = Math.floor(random() * 3);
        rows.push({ group: g, label, values: [label + 0.5 * random(), random()] });
      }
    }
    const data = datasetFromRows(['x:grade', 'x:noise'], rows);
    const { train, validation } = splitByGroups(data, 0.25);
    const before = ndcgAt(new Float64Array(validation.rows), validation.labels, validation.groups, 10);
    const model = trainLambdaMart(train, { trees: 30, minDataInLeaf: 2, learningRate: 0.3 }, validation);
    const scores = model.predict(validation.values, validation.rows);
    assert.ok(before < 0.9, `constant scores already rank well (${before}): the test would prove nothing`);
    assert.equal(ndcgAt(scores, validation.labels, validation.groups, 10), 1);
    assert.equal(model.history[model.bestIteration]?.validNdcg, 1);
  });

  test('property: no tree makes the LambdaMART objective it was fitted to worse on the training set', () => {
    fc.assert(
      fc.property(
        fc.record({
          seed: fc.integer({ min: 1, max: 1_000_000 }),
          groups: fc.integer({ min: 1, max: 8 }),
          size: fc.integer({ min: 2, max: 12 }),
          width: fc.integer({ min: 1, max: 4 }),
          grades: fc.integer({ min: 2, max: 5 }),
          noise: fc.double({ min: 0, max: 2, noNaN: true }),
          missingRate: fc.constantFrom(0, 0.2),
          learningRate: fc.constantFrom(0.05, 0.1, 0.3),
          minDataInLeaf: fc.integer({ min: 1, max: 4 }),
          maxDepth: fc.integer({ min: 1, max: 4 }),
        }),
        (c) => {
          const data = makeData({
            ...c,
            label: (x, random) =>
              Math.max(
                0,
                Math.min(
                  c.grades - 1,
                  Math.floor(((x[0] as number) + 1 + c.noise * random()) * c.grades * 0.5),
                ),
              ),
          });
          fc.pre(data.labels.some((label) => label > 0));
          const model = trainLambdaMart(data, { ...c, trees: 15, reportLoss: true });
          assert.equal(model.history.length, 15);
          for (const entry of model.history) {
            assert.ok(
              Number.isFinite(entry.lossBefore) && Number.isFinite(entry.lossAfter),
              JSON.stringify(entry),
            );
            // Scores are float32 (as XGBoost's): a tree that changes nothing may move the loss by rounding.
            const slack = 1e-6 * entry.lossBefore + 1e-12;
            assert.ok(
              entry.lossAfter <= entry.lossBefore + slack,
              `tree ${entry.tree}: ${JSON.stringify(entry)}`,
            );
          }
        },
      ),
      { numRuns: 60, seed: 22 },
    );
  });

  test('the history: trainNdcg and validNdcg are the NDCG of the model so far; the loss is measured only with reportLoss', () => {
    const data = makeData({
      groups: 30,
      size: 10,
      width: 4,
      seed: 3,
      label: (x, r) => ((x[1] as number) + r() > 0.8 ? 1 : 0),
    });
    const { train, validation } = splitByGroups(data);
    const model = trainLambdaMart(train, { trees: 8, minDataInLeaf: 3, earlyStoppingRounds: 0 }, validation);
    assert.equal(model.history.length, 8);
    assert.equal(model.trees.length, 8);
    const last = model.history.at(-1);
    assert.equal(
      last?.trainNdcg,
      ndcgAt(model.predict(train.values, train.rows), train.labels, train.groups, 10),
    );
    assert.equal(
      last?.validNdcg,
      ndcgAt(model.predict(validation.values, validation.rows), validation.labels, validation.groups, 10),
    );
    assert.ok(Number.isNaN(last?.lossBefore), 'the loss is only measured with reportLoss');
  });

  test("the model file scores as the model in memory, in rankd's gbdtModel (float32, to 1e-6)", async () => {
    const data = makeData({
      groups: 80,
      size: 15,
      width: 5,
      seed: 4,
      missingRate: 0.15,
      label: (x, r) =>
        (x[0] as number) * 2 + Math.sin(3 * (x[1] as number)) + r() > 1 ? 2 : (x[2] as number) > 0.3 ? 1 : 0,
    });
    const { train, validation } = splitByGroups(data);
    const model = trainLambdaMart(train, { trees: 40, minDataInLeaf: 5, maxDepth: 4 }, validation);
    const file = join(dir, 'ranker.json');
    writeFileSync(file, model.toXGBoostJsonText());
    const served = gbdtModel({ name: 'trained', file, features: data.features, watch: false });
    await served.initialize();
    try {
      const width = data.features.length;
      const context = new RequestContext('trained', { request_id: 'trained' });
      const names = data.features.map((name) => name.slice(2));
      context.features.declare('x', Object.fromEntries(names.map((name) => [name, Feature.float()])), [
        'item',
      ]);
      const items = Array.from({ length: validation.rows }, (_, r) => {
        const row = Object.fromEntries(
          names.map((name, f) => {
            const value = validation.values[r * width + f] as number;
            return [name, Number.isNaN(value) ? null : value];
          }),
        );
        context.features.putComputed('x', String(r), undefined, row);
        return { type: 'item', id: String(r) };
      });
      const scores = await runInContext(context, async () =>
        served.score(items, context.request as RankdRequest),
      );
      const expected = model.predict(validation.values, validation.rows);
      assert.equal(scores.length, expected.length);
      const distinct = new Set(expected).size;
      assert.ok(
        distinct > 10,
        `the model scores only ${distinct} distinct values: it learnt too little to compare`,
      );
      for (let r = 0; r < expected.length; r++) {
        assert.ok(
          Math.abs((scores[r] as number) - (expected[r] as number)) <= 1e-6,
          `row ${r}: ${scores[r]} vs ${expected[r]}`,
        );
      }
    } finally {
      await served.dispose();
    }
  });

  test('early stopping stops: validation that gets worse with every tree keeps the best trees only', () => {
    const label = (x: number[]) => ((x[0] as number) > 0.3 ? 2 : (x[0] as number) > -0.3 ? 1 : 0);
    const train = makeData({ groups: 40, size: 10, width: 3, seed: 5, label });
    // The same relation, upside down: what the trees learn ranks the validation set worse.
    const validation = makeData({ groups: 20, size: 10, width: 3, seed: 6, label: (x) => 2 - label(x) });
    const model = trainLambdaMart(
      train,
      { trees: 200, minDataInLeaf: 2, earlyStoppingRounds: 5 },
      validation,
    );
    assert.ok(model.history.length < 200, `trained all ${model.history.length} trees`);
    assert.equal(model.history.length, model.bestIteration + 1 + 5);
    assert.equal(model.trees.length, model.bestIteration + 1);
    const best = model.history[model.bestIteration]?.validNdcg as number;
    for (const entry of model.history) assert.ok((entry.validNdcg as number) <= best);
    const scores = model.predict(validation.values, validation.rows);
    assert.equal(ndcgAt(scores, validation.labels, validation.groups, 10), best);
  });

  test('feature subsampling with a seed is repeatable; each tree splits on its share of the features only', () => {
    const data = makeData({
      groups: 40,
      size: 10,
      width: 6,
      seed: 7,
      label: (x, r) => (x.reduce((sum, v) => sum + v, 0) + r() > 0.5 ? 1 : 0),
    });
    const options = { trees: 25, featureFraction: 0.5, minDataInLeaf: 3, seed: 11 };
    const first = trainLambdaMart(data, options);
    const again = trainLambdaMart(data, options);
    const other = trainLambdaMart(data, { ...options, seed: 12 });
    assert.equal(again.toXGBoostJsonText(), first.toXGBoostJsonText());
    assert.notEqual(other.toXGBoostJsonText(), first.toXGBoostJsonText());
    for (const tree of first.trees) {
      const used = new Set(Array.from(tree.feature).filter((_, node) => (tree.left[node] as number) >= 0));
      assert.ok(used.size <= 3, `a tree split on ${used.size} features`);
    }
  });

  test('bad options and data sets with nothing to learn are refused with TrainingInputError', () => {
    const data = makeData({
      groups: 4,
      size: 5,
      width: 2,
      seed: 8,
      label: (x) => ((x[0] as number) > 0 ? 1 : 0),
    });
    assert.throws(() => trainLambdaMart(data, { learningRate: 0 }), TrainingInputError);
    assert.throws(() => trainLambdaMart(data, { featureFraction: 1.5 }), /featureFraction is 1.5/);
    assert.throws(() => trainLambdaMart(data, { maxBins: 300 }), /maxBins is 300/);
    const unlabelled = { ...data, labels: new Float64Array(data.rows) };
    assert.throws(
      () => trainLambdaMart(unlabelled, {}),
      /no query group of the training set has a positive label/,
    );
    assert.throws(() => trainLambdaMart(data, {}, unlabelled), /validation set has a positive label/);
    const renamed = { ...data, features: ['x:a', 'x:b'] };
    assert.throws(() => trainLambdaMart(data, {}, renamed), /other features/);
  });
});
