/**
 * The trainer's model file in XGBoost itself: Debian's python3-xgboost loads it
 * (`xgb.Booster(model_file=...)`) and predicts what rankd's model predicts. Runs only where
 * /usr/bin/python3 can import xgboost.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { datasetFromRows, type RankingRow, trainLambdaMart } from '../src/training/index.js';
import { seededRandom } from '../src/training/random.js';

const PYTHON = '/usr/bin/python3';
const probe = spawnSync(PYTHON, ['-c', 'import xgboost'], { encoding: 'utf8' });
const skip = probe.status === 0 ? false : `${PYTHON} cannot import xgboost (apt install python3-xgboost)`;

const dir = mkdtempSync(join(tmpdir(), 'rankd-training-xgboost-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const PREDICT = `
import sys, numpy as np, xgboost as xgb
directory, width = sys.argv[1], int(sys.argv[2])
values = np.fromfile(directory + "/values.f32", dtype=np.float32).reshape(-1, width)
booster = xgb.Booster(model_file=directory + "/model.json")
names = booster.feature_names
booster.predict(xgb.DMatrix(values, missing=np.nan, feature_names=names), output_margin=True).astype(np.float32).tofile(directory + "/xgboost.f32")
print(booster.attr("objective") or "", len(booster.get_dump()))
`;

test('XGBoost loads the written model file and predicts the same scores', { skip }, () => {
  const random = seededRandom(9);
  const rows: RankingRow[] = [];
  for (let g = 0; g < 120; g++) {
    for (let i = 0; i < 15; i++) {
      const x = Array.from({ length: 4 }, () => random() * 2 - 1);
      const label =
        (x[0] as number) + 0.5 * Math.cos(4 * (x[1] as number)) + random() > 1
          ? 2
          : (x[3] as number) > 0.2
            ? 1
            : 0;
      rows.push({ group: g, label, values: x.map((v) => (random() < 0.1 ? null : v)) });
    }
  }
  const data = datasetFromRows(['p:a', 'p:b', 'p:c', 'p:d'], rows);
  const model = trainLambdaMart(data, { trees: 30, maxDepth: 5, minDataInLeaf: 5 });
  writeFileSync(join(dir, 'model.json'), model.toXGBoostJsonText());
  writeFileSync(join(dir, 'values.f32'), new Float32Array(data.values));
  const run = spawnSync(PYTHON, ['-c', PREDICT, dir, '4'], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  assert.match(run.stdout, / 30\n?$/, `XGBoost should see 30 trees: ${run.stdout}`);
  const bytes = readFileSync(join(dir, 'xgboost.f32'));
  const fromXgboost = new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
  const expected = model.predict(data.values, data.rows);
  assert.equal(fromXgboost.length, expected.length);
  assert.ok(new Set(expected).size > 10, 'the model learnt too little to compare');
  for (let r = 0; r < expected.length; r++) {
    assert.ok(
      Math.abs((fromXgboost[r] as number) - (expected[r] as number)) <= 1e-6,
      `row ${r}: ${fromXgboost[r]} vs ${expected[r]}`,
    );
  }
});
