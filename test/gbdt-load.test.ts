/**
 * Loading GBDT model files: the format is found from the content, and anything unreadable or
 * damaged is a GbdtModelError whose message names the file and says what is wrong.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { detectGbdtFormat, loadGbdtModel } from '../src/models/gbdt/load-gbdt.js';
import { GbdtModelError } from '../src/models/gbdt/model-error.js';

const FIXTURES = new URL('./fixtures/gbdt/', import.meta.url);
const fixtureText = (path: string) => readFileSync(new URL(path, FIXTURES), 'utf8');
const xgboostText = fixtureText('xgboost/regression.model.json');
const lightgbmText = fixtureText('lightgbm/numerical.txt');
const dir = mkdtempSync(join(tmpdir(), 'rankd-gbdt-'));
after(() => rmSync(dir, { recursive: true, force: true }));

let counter = 0;
/** Writes `text` to a fresh file and returns its path. */
function file(text: string, name = 'model'): string {
  const path = join(dir, `${name}-${counter++}`);
  writeFileSync(path, text);
  return path;
}

/** Loading `path` fails with a GbdtModelError naming it and matching `message`. */
async function assertFails(path: string, message: RegExp): Promise<void> {
  await assert.rejects(loadGbdtModel(path), (error: unknown) => {
    assert.ok(error instanceof GbdtModelError, `a GbdtModelError, not ${String(error)}`);
    assert.equal(error.file, path);
    assert.ok(error.message.startsWith(`${path}: `), `the message names the file: ${error.message}`);
    assert.match(error.message, message);
    return true;
  });
}

// biome-ignore lint/suspicious/noExplicitAny: tests reach into the model file's JSON freely
type ModelJson = Record<string, any>;

/** The XGBoost fixture with its JSON edited by `edit`. */
function xgboostEdited(edit: (document: ModelJson) => void): string {
  const document = JSON.parse(xgboostText) as ModelJson;
  edit(document);
  return JSON.stringify(document);
}

describe('format detection', () => {
  test('by content, whatever the file is called', async () => {
    assert.equal(detectGbdtFormat(xgboostText), 'xgboost-json');
    assert.equal(detectGbdtFormat(lightgbmText), 'lightgbm-text');
    assert.equal(detectGbdtFormat(`\n  ${xgboostText}`), 'xgboost-json');
    assert.equal(detectGbdtFormat('{"onnx": 1}'), undefined);
    assert.equal((await loadGbdtModel(file(xgboostText, 'model.txt'))).semantics, 'xgboost');
    assert.equal((await loadGbdtModel(file(lightgbmText, 'model.json'))).semantics, 'lightgbm');
  });
});

describe('unreadable or unknown files', () => {
  test('a missing file', async () => {
    await assertFails(join(dir, 'nope.json'), /cannot read the model file \(no such file\)/);
  });
  test('a directory', async () => {
    await assertFails(dir, /cannot read the model file/);
  });
  test('an empty file', async () => {
    await assertFails(file(''), /the file is empty/);
  });
  test('neither format', async () => {
    await assertFails(file('hello'), /neither an XGBoost JSON model .* nor a LightGBM text model/);
    await assertFails(file('{"trees": []}'), /neither an XGBoost JSON model/);
  });
});

describe('damaged XGBoost models', () => {
  test('truncated JSON', async () => {
    await assertFails(file(xgboostText.slice(0, 500)), /not valid JSON/);
  });
  test('no gradient booster', async () => {
    await assertFails(
      file(xgboostEdited((d) => delete d.learner.gradient_booster)),
      /\$\.learner\.gradient_booster is not an object/,
    );
  });
  test('a child outside the tree', async () => {
    const text = xgboostEdited((d) => {
      d.learner.gradient_booster.model.trees[2].left_children[0] = 999;
    });
    await assertFails(file(text), /tree 2, node 0 has child 999, outside the tree's \d+ nodes/);
  });
  test('a cycle', async () => {
    const text = xgboostEdited((d) => {
      const tree = d.learner.gradient_booster.model.trees[0];
      tree.left_children[1] = 1;
    });
    await assertFails(file(text), /tree 0, node 1 is reached twice/);
  });
  test('arrays of different lengths', async () => {
    const text = xgboostEdited((d) => void d.learner.gradient_booster.model.trees[1].split_indices.pop());
    await assertFails(file(text), /tree 1: feature has \d+ entries, not \d+/);
  });
  test('a non-number where numbers belong', async () => {
    const text = xgboostEdited((d) => {
      d.learner.gradient_booster.model.trees[0].split_conditions[0] = 'x';
    });
    await assertFails(file(text), /trees\[0\]\.split_conditions\[0\] is string "x", not a number/);
  });
  test('a split on a feature the model does not have', async () => {
    const text = xgboostEdited((d) => {
      d.learner.learner_model_param.num_feature = '2';
    });
    await assertFails(file(text), /a split reads feature \d, but the model has 2 features/);
  });
  test('multi-class models', async () => {
    const text = xgboostEdited((d) => {
      d.learner.learner_model_param.num_class = '3';
      d.learner.objective.name = 'multi:softprob';
    });
    await assertFails(file(text), /multi-output models \(num_class 3, num_target 1\) are not supported/);
  });
  test('objectives it cannot evaluate', async () => {
    const text = xgboostEdited((d) => {
      d.learner.objective.name = 'survival:aft';
    });
    await assertFails(file(text), /objective survival:aft is not supported; supported: reg:squarederror, /);
  });
  test('linear boosters', async () => {
    const text = xgboostEdited((d) => {
      d.learner.gradient_booster = { name: 'gblinear', model: {} };
    });
    await assertFails(file(text), /booster gblinear is not supported/);
  });
  test('a base_score that is not a number', async () => {
    const text = xgboostEdited((d) => {
      d.learner.learner_model_param.base_score = 'abc';
    });
    await assertFails(file(text), /base_score is "abc", not a number/);
  });
});

describe('damaged LightGBM models', () => {
  const tree0 = lightgbmText.indexOf('Tree=0');
  test('no trees', async () => {
    await assertFails(file(`${lightgbmText.slice(0, tree0)}end of trees\n`), /has no Tree= sections/);
  });
  test('Tree= sections without the header', async () => {
    await assertFails(file(lightgbmText.slice(tree0)), /the first line is not "tree"/);
  });
  test('a count that does not match num_leaves', async () => {
    await assertFails(
      file(lightgbmText.replace('leaf_value=1 2 3 4', 'leaf_value=1 2 3')),
      /Tree=0 \(line \d+\): leaf_value has 3 values, expected 4/,
    );
  });
  test('a number that is not one', async () => {
    await assertFails(
      file(lightgbmText.replace('threshold=0.5 1.5 -1', 'threshold=0.5 x -1')),
      /Tree=0 \(line \d+\): threshold value x is not a number/,
    );
  });
  test('a missing field', async () => {
    await assertFails(
      file(lightgbmText.replace(/\nleft_child=-1 2 -2/, '')),
      /Tree=0 \(line \d+\) has no left_child=/,
    );
  });
  test('a child index outside the tree', async () => {
    await assertFails(
      file(lightgbmText.replace('left_child=-1 2 -2', 'left_child=-1 7 -2')),
      /tree 0, node 1 has child 7, outside the tree's 7 nodes/,
    );
  });
  test('a categorical split without its bitset', async () => {
    const text = fixtureText('lightgbm/categorical.txt')
      .replace('decision_type=9 2', 'decision_type=9 3')
      .replace('threshold=0 0', 'threshold=0 5');
    await assertFails(file(text), /Tree=0: categorical node 1 points at missing bitset 5/);
  });
  test('linear trees', async () => {
    await assertFails(
      file(lightgbmText.replace('is_linear=0', 'is_linear=1')),
      /linear tree .* not supported/,
    );
  });
  test('multi-class models', async () => {
    const text = lightgbmText
      .replace('num_class=1', 'num_class=3')
      .replace('num_tree_per_iteration=1', 'num_tree_per_iteration=3');
    await assertFails(file(text), /multi-class models \(num_class=3\) are not supported/);
  });
  test('objectives it cannot evaluate', async () => {
    await assertFails(
      file(lightgbmText.replace('objective=regression', 'objective=multiclassova num_class:3')),
      /objective multiclassova num_class:3 is not supported/,
    );
  });
});
