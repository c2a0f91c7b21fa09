/**
 * A file model with `whenMissing` (the template's Ranker before `rankd train --promote`): it
 * starts without its file, scores with the other model, and loads the file once it appears; a
 * broken file keeps the other model scoring.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { defineModel } from '../src/models/define-model.js';
import { gbdtModel } from '../src/models/gbdt-model.js';

const dir = mkdtempSync(join(tmpdir(), 'rankd-missing-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const QUIET = { log: { info: () => undefined, warn: () => undefined } };
const fixture = readFileSync(
  new URL('./fixtures/gbdt/xgboost/rank-pairwise.model.json', import.meta.url),
  'utf8',
);

test('starts on whenMissing, stays on it while the file is absent or broken, then loads the file', async () => {
  const Fallback = defineModel({
    name: 'Fallback',
    version: '3',
    features: ['hand:weight'],
    score: (entities) => entities.map(() => 7),
  });
  const inputs = ['g:a', 'g:b', 'g:c', 'g:d', 'g:e', 'g:f'];
  const file = join(dir, 'models', 'ranker.json');
  const model = gbdtModel({ name: 'Trained', file, features: inputs, whenMissing: Fallback, watch: false });
  assert.deepEqual(model.inputs, inputs);
  assert.deepEqual(model.features, [...inputs, 'hand:weight']);
  assert.equal(model.format, 'gbdt');
  await model.initialize(QUIET);
  assert.ok(existsSync(join(dir, 'models')), 'the directory is made, to be watched');
  assert.equal(model.version, 'Fallback@3');
  assert.deepEqual(await model.score([{}, {}], {}), [7, 7]);
  assert.equal((await model.reload()).status, 'unchanged');

  writeFileSync(file, '{"learner": ');
  const broken = await model.reload();
  assert.equal(broken.status, 'failed');
  assert.equal(broken.version, 'Fallback@3');
  assert.deepEqual(await model.score([{}], {}), [7]);

  writeFileSync(file, fixture);
  const loaded = await model.reload();
  assert.equal(loaded.status, 'reloaded');
  assert.notEqual(loaded.version, 'Fallback@3');
  assert.equal(model.version, loaded.version);
  await model.dispose();
});

test('without whenMissing, a missing file still stops the start', async () => {
  const model = gbdtModel({ name: 'Alone', file: join(dir, 'none.json'), features: ['g:a'], watch: false });
  await assert.rejects(model.initialize(QUIET), /cannot read model file/);
});

test('a file removed after it loaded hands scoring back to whenMissing; back again, it loads', async () => {
  const Fallback = defineModel({
    name: 'Fallback',
    version: '3',
    score: (entities) => entities.map(() => 7),
  });
  const file = join(dir, 'models', 'removed.json');
  writeFileSync(file, fixture);
  const inputs = ['g:a', 'g:b', 'g:c', 'g:d', 'g:e', 'g:f'];
  const model = gbdtModel({ name: 'Trained', file, features: inputs, whenMissing: Fallback, watch: false });
  await model.initialize(QUIET);
  assert.equal(model.usingFallback, false);
  const loaded = model.version;
  rmSync(file);
  const removed = await model.reload();
  assert.deepEqual([removed.status, removed.version], ['reloaded', 'Fallback@3']);
  assert.equal(model.usingFallback, true);
  assert.deepEqual(await model.score([{}], {}), [7]);
  assert.equal((await model.reload()).status, 'unchanged');
  writeFileSync(file, fixture);
  assert.equal((await model.reload()).status, 'reloaded');
  assert.equal(model.usingFallback, false);
  assert.equal(model.version?.split('/')[2], loaded?.split('/')[2], 'the same bytes again');
  await model.dispose();
});

test('without whenMissing, a removed file leaves the loaded version serving', async () => {
  const file = join(dir, 'kept.json');
  writeFileSync(file, fixture);
  const model = gbdtModel({
    name: 'Kept',
    file,
    features: ['g:a', 'g:b', 'g:c', 'g:d', 'g:e', 'g:f'],
    watch: false,
  });
  await model.initialize(QUIET);
  const version = model.version;
  rmSync(file);
  const result = await model.reload();
  assert.equal(result.status, 'failed');
  assert.equal(result.version, version);
  assert.equal(model.usingFallback, false);
  await model.dispose();
});
