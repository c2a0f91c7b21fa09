/**
 * Training and serving read a value that is not a finite number the same way: ±Infinity is a
 * missing value to the trainer (`datasetFromRows`, its bins, `TrainedModel.predict`) as it is to
 * the served `gbdtModel`; labels are whole grades, and a data set with no rows says so. Also the
 * rows `rankd train` can use: those logged with every input of the model it trains.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { TrainingDataError, usableRows } from '../src/app/training-data.js';
import { SkippedRows } from '../src/events/export/row-checks.js';
import type { TrainingRow } from '../src/events/export/training-join.js';
import { Feature } from '../src/features/feature-kind.js';
import { gbdtModel } from '../src/models/gbdt-model.js';
import type { RankdRequest } from '../src/request/component.js';
import { RequestContext, runInContext } from '../src/request/request-context.js';
import {
  datasetFromRows,
  type RankingDataset,
  TrainingInputError,
  trainLambdaMart,
} from '../src/training/index.js';
import { seededRandom } from '../src/training/random.js';

const dir = mkdtempSync(join(tmpdir(), 'rankd-non-finite-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/**
 * Groups of 10 over two features: the grade grows with `x:a`; a row whose `x:a` is missing (NaN)
 * or +Infinity is the least relevant (grade 0), and −Infinity rows the most (grade 3): where a
 * reader puts ±Infinity, among the values or with the missing ones, moves them to the other end.
 */
function data(): RankingDataset {
  const random = seededRandom(3);
  const rows = 600;
  const values = new Float64Array(rows * 2);
  const labels = new Float64Array(rows);
  for (let r = 0; r < rows; r++) {
    const a = random() * 2 - 1;
    const kind = r % 10;
    values[r * 2] =
      kind === 0
        ? Number.NaN
        : kind === 1
          ? Number.POSITIVE_INFINITY
          : kind === 2
            ? Number.NEGATIVE_INFINITY
            : a;
    values[r * 2 + 1] = random();
    labels[r] = kind === 0 || kind === 1 ? 0 : kind === 2 ? 3 : a > 0.3 ? 2 : a > -0.3 ? 1 : 0;
  }
  return { features: ['x:a', 'x:b'], rows, values, labels, groups: new Uint32Array(rows / 10).fill(10) };
}

describe('±Infinity, in training and serving', () => {
  test('datasetFromRows reads ±Infinity as missing and a boolean as 1/0, as a served model does', () => {
    const set = datasetFromRows(
      ['x:a', 'x:b'],
      [
        { group: 1, label: 1, values: { 'x:a': Number.POSITIVE_INFINITY, 'x:b': true } },
        { group: 1, label: 0, values: [Number.NEGATIVE_INFINITY, false] },
        { group: 1, label: 0, values: { 'x:a': 2, constructor: 5 } },
      ],
    );
    assert.deepEqual([...set.values], [Number.NaN, 1, Number.NaN, 0, 2, Number.NaN]);
  });

  test("the trainer's predictions equal the served gbdtModel's scores on rows holding ±Infinity", async () => {
    const set = data();
    const model = trainLambdaMart(set, { trees: 30, minDataInLeaf: 5, maxDepth: 3 });
    const file = join(dir, 'ranker.json');
    writeFileSync(file, model.toXGBoostJsonText());
    const served = gbdtModel({ name: 'trained', file, features: set.features, watch: false });
    await served.initialize();
    try {
      const context = new RequestContext('trained', { request_id: 'r' });
      context.features.declare('x', { a: Feature.float(), b: Feature.float() }, ['item']);
      const items = Array.from({ length: set.rows }, (_, r) => {
        const a = set.values[r * 2] as number;
        context.features.putComputed('x', String(r), undefined, {
          a: Number.isNaN(a) ? null : a,
          b: set.values[r * 2 + 1] as number,
        });
        return { type: 'item', id: String(r) };
      });
      const scores = await runInContext(context, async () =>
        served.score(items, context.request as RankdRequest),
      );
      const predicted = model.predict(set.values, set.rows);
      for (let r = 0; r < set.rows; r++)
        assert.ok(
          Math.abs((scores[r] as number) - (predicted[r] as number)) <= 1e-6,
          `row ${r} (x:a = ${set.values[r * 2]}): served ${scores[r]}, trainer ${predicted[r]}`,
        );
      // ±Infinity scores as NaN would: the model reads it as missing.
      const asMissing = set.values.map((x) => (Number.isFinite(x) ? x : Number.NaN));
      assert.deepEqual([...model.predict(asMissing, set.rows)], [...predicted]);
    } finally {
      await served.dispose();
    }
  });
});

describe('labels and empty sets', () => {
  test('a label that is not a whole grade is refused; a set with no rows says so', () => {
    assert.throws(
      () => datasetFromRows(['x:a'], [{ group: 1, label: 1.5, values: [1] }]),
      /row 0 has label 1.5; labels are whole grades from 0 to 31/,
    );
    assert.throws(
      () => datasetFromRows(['x:a'], []),
      (error: unknown) => {
        assert.ok(error instanceof TrainingInputError);
        assert.match(error.message, /no rows/);
        return true;
      },
    );
  });
});

describe('the rows rankd train uses', () => {
  const row = (request_id: string, position: number, label: number, features: Record<string, unknown>) =>
    ({
      request_id,
      timestamp: '2026-11-01T00:00:00.000Z',
      api_source: '/api/v1/ranking',
      run_id: null,
      entity_type: 'product',
      entity_id: `p${position}`,
      position,
      score: 0,
      model_name: null,
      model_version: null,
      experiments: {},
      features,
      clicked: 0,
      added_to_cart: 0,
      purchased: label > 0 ? 1 : 0,
      label,
    }) as TrainingRow;

  test('rows logged without an input of the model are left out and counted; a request keeps at most a page', () => {
    const skipped = new SkippedRows();
    const rows = [
      row('new', 0, 1, { 'm:a': 1, 'm:b': null }),
      row('new', 1, 0, { 'm:a': 2, 'm:b': 3 }),
      row('old', 0, 1, { 'm:a': 1 }),
      row('old', 1, 0, { 'm:a': 1, 'm:c': 4 }),
      row('none', 0, 0, null as unknown as Record<string, unknown>),
      ...Array.from({ length: 102 }, (_, i) => row('big', i % 100, i % 2, { 'm:a': i, 'm:b': i })),
    ];
    const usable = usableRows(rows, ['m:a', 'm:b'], 'the logs', skipped);
    assert.deepEqual(
      usable.map((r) => r.request_id).filter((id, i, all) => all.indexOf(id) === i),
      ['new', 'big'],
    );
    assert.equal(usable.length, 102);
    assert.deepEqual(skipped.reasons(), [
      ['logged without m:b (by an earlier model or feature set)', 2],
      ['past the 100 impressions a request shows', 2],
      ['logged without features (EVENTS_SHOWN_FEATURES was false)', 1],
    ]);
  });

  test('when no row holds every input, the message names the logged data and --since/--until', () => {
    const rows = [row('a', 0, 1, { 'm:a': 1 }), row('b', 0, 1, { 'm:b': 1 })];
    assert.throws(
      () => usableRows(rows, ['m:a', 'm:b'], 'the event stream since yesterday', new SkippedRows()),
      (error: unknown) => {
        assert.ok(error instanceof TrainingDataError);
        assert.equal(
          error.message,
          'no usable rows: the 2 impressions in the event stream since yesterday were logged for other model inputs ' +
            '(2 impressions left out: 1 logged without m:a (by an earlier model or feature set), ' +
            '1 logged without m:b (by an earlier model or feature set)); ' +
            'if the model or its features changed, train on the requests logged since (--since, and --until)',
        );
        return true;
      },
    );
  });
});
