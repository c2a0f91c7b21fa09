import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../src/config/index.js';
import {
  chainModels,
  defineApp,
  defineRealtimeFeatures,
  Feature,
  gbdtModel,
  linearModel,
  ModelInvalidError,
  onnxModel,
} from '../src/index.js';
import { loadGbdtModel } from '../src/models/gbdt/load-gbdt.js';
import { loadOnnxRuntime, onnxInstallHint } from '../src/models/onnx-runtime.js';
import { AppLoadError } from '../src/server.js';
import {
  close,
  closeAll,
  G,
  G_FEATURES,
  Item,
  type ItemInput,
  itemPipeline,
  rank,
  replaceFile,
  X,
} from './helpers/model-app.js';
import { sleep } from './helpers/ranking-app.js';
import { postJson, testServer, useTestServer } from './helpers/server.js';

const FIXTURES = fileURLToPath(new URL('./fixtures/', import.meta.url));
const XGBOOST_MODEL = join(FIXTURES, 'gbdt/xgboost/binary-logistic.model.json');
const XGBOOST_CASES = JSON.parse(
  readFileSync(join(FIXTURES, 'gbdt/xgboost/binary-logistic.cases.json'), 'utf8'),
) as { inputs: Array<Array<number | null>>; prediction: number[] };
const ONNX_EXPECTED = JSON.parse(readFileSync(join(FIXTURES, 'onnx/expected.json'), 'utf8')) as Record<
  string,
  Array<number | null>
> & { inputs: Array<Array<number | null>> };

// Model files live in a temporary directory: the tests replace them.
const dir = mkdtempSync(join(tmpdir(), 'rankd-models-'));
const file = (name: string, content?: string) => {
  const path = join(dir, name);
  if (content !== undefined) writeFileSync(path, content);
  return path;
};
const weights = (w: Record<string, number>, bias = 0) => JSON.stringify({ weights: w, bias });

const Linear = linearModel({
  name: 'linear',
  file: file('linear.json', weights({ 'x:a': 2, 'x:b': -1, 'x:flag': 10 }, 0.5)),
  watch: false,
});
const Logistic = linearModel({
  name: 'logistic',
  file: file('logistic.json', weights({ 'x:a': 1 }, -1)),
  objective: 'sigmoid',
  watch: false,
});
const Gbdt = gbdtModel({ name: 'gbdt', file: XGBOOST_MODEL, features: G_FEATURES, watch: false });
const GbdtRaw = gbdtModel({
  name: 'gbdt_raw',
  file: XGBOOST_MODEL,
  features: G_FEATURES,
  objective: 'raw',
  watch: false,
});
const OnnxTrees = onnxModel({
  name: 'onnx_trees',
  file: join(FIXTURES, 'onnx/tree-ensemble.onnx'),
  features: ['x:a', 'x:b', 'x:c'],
  watch: false,
});
copyFileSync(join(FIXTURES, 'onnx/linear.onnx'), file('swap.onnx'));
const OnnxSwap = onnxModel({ name: 'onnx_swap', file: file('swap.onnx'), features: ['x:a', 'x:b', 'x:c'] });
// Watched, with a short debounce so the test does not wait long for a reload.
const Hot = linearModel({
  name: 'hot',
  file: file('hot.json', weights({ 'x:a': 1 })),
  debounceMs: 30,
});
const Fragile = linearModel({
  name: 'fragile',
  file: file('fragile.json', weights({ 'x:a': 1 })),
  features: ['x:a', 'x:b'],
  watch: false,
});
const Stage1 = linearModel({
  name: 'stage1',
  file: file('stage1.json', weights({ 'x:a': 1 })),
  watch: false,
});
const Stage2 = linearModel({
  name: 'stage2',
  file: file('stage2.json', weights({ 'stage1:score': 10, 'x:b': 1 })),
  watch: false,
});
const Chain = chainModels({ name: 'chain', models: [Stage1, Stage2] });

const app = defineApp({
  name: 'models-test',
  entities: [Item],
  pipelines: [
    itemPipeline('linear', Linear),
    itemPipeline('logistic', Logistic),
    itemPipeline('gbdt', Gbdt),
    itemPipeline('gbdt_raw', GbdtRaw),
    itemPipeline('onnx_trees', OnnxTrees),
    itemPipeline('onnx_swap', OnnxSwap),
    itemPipeline('hot', Hot),
    itemPipeline('fragile', Fragile),
    itemPipeline('chain', Chain),
  ],
});

const ITEMS: ItemInput[] = [
  { item_id: 'i1', a: 1, b: 2, flag: true },
  { item_id: 'i2', a: 3, b: null, flag: false },
  { item_id: 'i3', a: null, b: 4 },
  { item_id: 'i4', a: -2, b: 0.5, flag: null },
];
const value = (item: ItemInput, field: 'a' | 'b') => item[field] ?? 0;

const fixture = useTestServer({ app });

after(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('linear model', () => {
  test('scores bias + Σ weight × feature; missing features count 0, booleans 1/0', async () => {
    const ranked = await rank(fixture.server, 'linear', ITEMS);
    assert.equal(ranked.status, 200, JSON.stringify(ranked.body));
    for (const item of ITEMS) {
      const expected = 0.5 + 2 * value(item, 'a') - value(item, 'b') + (item.flag === true ? 10 : 0);
      close(ranked.scores.get(item.item_id), expected, item.item_id);
    }
    assert.deepEqual(Linear.features, ['x:a', 'x:b', 'x:flag'], 'features default to the weights, in order');
    assert.match(String([...ranked.versions][0]), /^\d{4}-\d\d-\d\dT.*Z\/\d+B\/[0-9a-f]{12}$/);
  });

  test('objective sigmoid gives a probability', async () => {
    const ranked = await rank(fixture.server, 'logistic', ITEMS);
    for (const item of ITEMS)
      close(ranked.scores.get(item.item_id), 1 / (1 + Math.exp(-(value(item, 'a') - 1))), item.item_id);
  });

  test('a weight for a feature the model does not list fails the load, naming the file', async () => {
    const bad = file('unlisted.json', weights({ 'x:c': 1 }));
    const model = linearModel({ name: 'unlisted', file: bad, features: ['x:a'], watch: false });
    await assert.rejects(model.initialize(), (error: Error) => {
      assert.ok(error.message.includes(bad), error.message);
      assert.match(error.message, /x:c/);
      return true;
    });
  });

  test('declared without features and its file missing: the declaration throws, naming the file', () => {
    const missing = join(dir, 'nowhere.json');
    assert.throws(
      () => linearModel({ name: 'nowhere', file: missing }),
      (error: Error) => error.message.includes(missing),
    );
  });
});

describe('gbdt model', () => {
  const items: ItemInput[] = XGBOOST_CASES.inputs.slice(0, 40).map((v, i) => ({ item_id: `t${i}`, v }));

  test('scores like the evaluator on the same rows, and like XGBoost', async () => {
    const ranked = await rank(fixture.server, 'gbdt', items);
    assert.equal(ranked.status, 200, JSON.stringify(ranked.body));
    const ensemble = await loadGbdtModel(XGBOOST_MODEL);
    const matrix = Float64Array.from(items.flatMap((item) => (item.v ?? []).map((x) => x ?? Number.NaN)));
    const direct = ensemble.predict(matrix, items.length, 6);
    items.forEach((item, i) => {
      close(ranked.scores.get(item.item_id), direct[i] as number, `${item.item_id} vs evaluator`);
      close(
        ranked.scores.get(item.item_id),
        XGBOOST_CASES.prediction[i] as number,
        `${item.item_id} vs xgboost`,
      );
    });
    const raw = await rank(fixture.server, 'gbdt_raw', items);
    const margins = ensemble.predictMargin(matrix, items.length, 6);
    closeAll(raw.scores, items, margins, 'raw');
  });

  test('a feature count or names that differ from the file fail the load, saying which', async () => {
    const short = gbdtModel({
      name: 'short',
      file: XGBOOST_MODEL,
      features: G_FEATURES.slice(0, 5),
      watch: false,
    });
    await assert.rejects(short.initialize(), /has 6 input features, but 5 are listed/);
    const swapped = [G_FEATURES[1], G_FEATURES[0], ...G_FEATURES.slice(2)] as string[];
    const misnamed = gbdtModel({ name: 'misnamed', file: XGBOOST_MODEL, features: swapped, watch: false });
    await assert.rejects(misnamed.initialize(), (error: Error) => {
      assert.ok(error.message.includes(XGBOOST_MODEL), error.message);
      assert.match(error.message, /column 0: the file says "f_0", `features` says "g:f_1"/);
      assert.match(error.message, /column 1: the file says "f_1", `features` says "g:f_0"/);
      return true;
    });
  });

  test('the removed threads option and MODEL_THREADS are refused, not ignored', () => {
    const options = { name: 'threaded', file: XGBOOST_MODEL, features: G_FEATURES, threads: 2 };
    assert.throws(() => gbdtModel(options), /`threads` option was removed/);
    assert.throws(() => loadConfig({ MODEL_THREADS: '2' }), /MODEL_THREADS: removed/);
    assert.equal(loadConfig({ MODEL_THREADS: '' }).LOG_LEVEL, 'info');
  });
});

describe('onnx model', () => {
  const items: ItemInput[] = ONNX_EXPECTED.inputs.map(([a, b, c], i) => ({ item_id: `o${i}`, a, b, c }));

  test('a TreeEnsembleRegressor made with python3-onnx scores as the fixture says, missing values included', async () => {
    const ranked = await rank(fixture.server, 'onnx_trees', items);
    assert.equal(ranked.status, 200, JSON.stringify(ranked.body));
    closeAll(ranked.scores, items, ONNX_EXPECTED['tree-ensemble.onnx'] ?? [], 'trees');
  });

  test('a replaced file is reloaded by the admin route; the new session scores', async () => {
    const before = await rank(fixture.server, 'onnx_swap', items);
    closeAll(before.scores, items, ONNX_EXPECTED['linear.onnx'] ?? [], 'v1');
    replaceFile(join(dir, 'swap.onnx'), readFileSync(join(FIXTURES, 'onnx/linear-v2.onnx')));
    const res = await postJson(fixture.server, '/api/v1/admin/models/reload', { model: 'onnx_swap' });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    // The watcher may have been first: then the route finds the file already loaded.
    assert.ok(['reloaded', 'unchanged'].includes(res.body.models[0].status), JSON.stringify(res.body));
    const after = await rank(fixture.server, 'onnx_swap', items);
    closeAll(after.scores, items, ONNX_EXPECTED['linear-v2.onnx'] ?? [], 'v2');
  });

  test('without onnxruntime-node, loading says what to install', async () => {
    await assert.rejects(loadOnnxRuntime('ranker', 'rankd-test-no-such-module'), (error: Error) => {
      assert.equal(error.message, onnxInstallHint('ranker'));
      assert.equal(
        error.message,
        'model ranker needs onnxruntime-node: npm install onnxruntime-node (set ONNXRUNTIME_NODE_INSTALL=skip to install without network)',
      );
      return true;
    });
  });
});

describe('a model file that cannot be loaded stops the start', () => {
  const startWith = (model: Parameters<typeof itemPipeline>[1]) =>
    testServer(fixture.redis, {
      app: defineApp({ name: 'broken', pipelines: [itemPipeline('broken', model)] }),
    });
  const failsNaming = (path: string, reason: RegExp) => (error: Error) => {
    assert.ok(error instanceof AppLoadError, String(error));
    assert.ok(error.message.includes(path), error.message);
    assert.match(error.message, reason);
    // The start fails as the app's (RANKD_APP_INVALID); among its causes is the model's own error,
    // with the model code and the file.
    const causes: unknown[] = [];
    for (let cause = error.cause; cause !== undefined; cause = (cause as Error).cause) causes.push(cause);
    const model = causes.find((cause) => cause instanceof ModelInvalidError);
    assert.ok(model instanceof ModelInvalidError, `a ModelInvalidError among ${causes.map(String)}`);
    assert.equal(model.code, 'RANKD_MODEL_INVALID');
    assert.equal(model.file, path);
    assert.ok(model.message.includes(path), model.message);
    return true;
  };

  test('a missing file', async () => {
    const missing = join(dir, 'missing.json');
    await assert.rejects(
      startWith(linearModel({ name: 'm', file: missing, features: ['x:a'], watch: false })),
      failsNaming(missing, /no such file/),
    );
  });

  test('a broken GBDT file', async () => {
    const broken = file('broken-gbdt.json', '{"learner": {"gradient_booster": ');
    await assert.rejects(
      startWith(gbdtModel({ name: 'm', file: broken, features: G_FEATURES })),
      failsNaming(broken, /cannot load model file/),
    );
  });

  test('a broken ONNX file', async () => {
    const broken = file('broken.onnx', 'not a protobuf');
    await assert.rejects(
      startWith(onnxModel({ name: 'm', file: broken, features: ['x:a'] })),
      failsNaming(broken, /cannot load model file/),
    );
  });

  test('a broken linear file', async () => {
    const broken = file('broken.json', '{"weights": {"x:a": "heavy"}}');
    await assert.rejects(
      startWith(linearModel({ name: 'm', file: broken, features: ['x:a'] })),
      failsNaming(broken, /weight of "x:a" is not a finite number/),
    );
  });
});

describe('hot reload', () => {
  const items: ItemInput[] = Array.from({ length: 20 }, (_, i) => ({ item_id: `h${i}`, a: i }));
  const isOld = (r: { scores: Map<string, number> }) =>
    items.every((it) => r.scores.get(it.item_id) === it.a);
  const isNew = (r: { scores: Map<string, number> }) =>
    items.every((it) => r.scores.get(it.item_id) === 2 * (it.a ?? 0) + 100);

  test('under concurrent requests: none fails, answers switch to the new file, events name its version', async () => {
    const oldVersion = Hot.version;
    const done: Array<Awaited<ReturnType<typeof rank>> & { started: number; finished: number }> = [];
    let clock = 0;
    let stop = false;
    const worker = async () => {
      while (!stop) {
        const started = clock++;
        const ranked = await rank(fixture.server, 'hot', items);
        done.push({ ...ranked, started, finished: clock++ });
      }
    };
    const workers = Array.from({ length: 4 }, worker);
    while (done.length < 8) await sleep(5);
    replaceFile(Hot.file, weights({ 'x:a': 2 }, 100));
    const deadline = Date.now() + 20_000;
    while (!done.some(isNew)) {
      assert.ok(Date.now() < deadline, 'the new model never answered');
      await sleep(10);
    }
    const seen = done.length;
    while (done.length < seen + 8) await sleep(5);
    stop = true;
    await Promise.all(workers);

    const newVersion = Hot.version;
    assert.notEqual(newVersion, oldVersion);
    assert.equal(Hot.lastReload?.status, 'reloaded');
    const firstNew = Math.min(...done.filter(isNew).map((r) => r.finished));
    for (const r of done) {
      assert.equal(r.status, 200, JSON.stringify(r.body));
      // Each request scored wholly with one file, and its events name that file.
      assert.ok(isOld(r) || isNew(r), `mixed scores: ${JSON.stringify([...r.scores])}`);
      assert.deepEqual([...r.versions], [isNew(r) ? newVersion : oldVersion]);
      if (r.started > firstNew) assert.ok(isNew(r), 'a request started after the switch used the old file');
    }
    assert.ok(done.some(isOld), 'requests before the switch used the old file');
  });

  test('a broken file written over a watched model keeps the loaded one, and says why', async () => {
    const serving = Hot.version;
    replaceFile(Hot.file, '{"weights": ');
    const deadline = Date.now() + 20_000;
    while (Hot.lastReload?.status !== 'failed') {
      assert.ok(Date.now() < deadline, 'the watcher never tried the broken file');
      await sleep(10);
    }
    assert.match(Hot.lastReload.error ?? '', /not JSON/);
    assert.equal(Hot.version, serving);
    const ranked = await rank(fixture.server, 'hot', items);
    assert.equal(ranked.status, 200);
    assert.ok(isNew(ranked), 'still the last good file');
  });
});

describe('admin reload route', () => {
  const items: ItemInput[] = [{ item_id: 'f1', a: 3, b: 5 }];
  const reload = (body: unknown, headers = {}) =>
    postJson(fixture.server, '/api/v1/admin/models/reload', body, headers);

  test('unchanged, failed (old model kept, reason given), then reloaded', async () => {
    const v1 = Fragile.version;
    let res = await reload({ model: 'fragile' });
    assert.equal(res.status, 200);
    // The file by its name: it is outside the app's directory, and answers never show absolute paths.
    assert.deepEqual(res.body.models, [
      { name: 'fragile', file: basename(Fragile.file), status: 'unchanged', version: v1 },
    ]);

    replaceFile(Fragile.file, 'garbage');
    res = await reload({ model: 'fragile' });
    assert.equal(res.status, 200);
    const [failed] = res.body.models;
    assert.equal(failed.status, 'failed');
    assert.equal(failed.version, v1);
    assert.match(failed.error, /not JSON/);
    assert.equal((await rank(fixture.server, 'fragile', items)).scores.get('f1'), 3);

    replaceFile(Fragile.file, weights({ 'x:b': 1 }, 1));
    res = await reload({ model: 'fragile' });
    const [reloaded] = res.body.models;
    assert.equal(reloaded.status, 'reloaded');
    assert.notEqual(reloaded.version, v1);
    assert.equal(reloaded.version, Fragile.version);
    const ranked = await rank(fixture.server, 'fragile', items);
    assert.equal(ranked.scores.get('f1'), 6);
    assert.deepEqual([...ranked.versions], [reloaded.version]);
  });

  test('without a name, every file model; an unknown name is a 404 listing the models', async () => {
    const all = await reload({});
    assert.equal(all.status, 200);
    const names = all.body.models.map((m: { name: string }) => m.name).sort();
    assert.deepEqual(names, [
      'fragile',
      'gbdt',
      'gbdt_raw',
      'hot',
      'linear',
      'logistic',
      'onnx_swap',
      'onnx_trees',
      'stage1',
      'stage2',
    ]);
    const unknown = await reload({ model: 'nope' });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error_code, 'RANKD_MODEL_NOT_FOUND');
    assert.match(unknown.body.detail, /"nope".*fragile/);
  });

  test('no body at all (curl -X POST) reloads every file model, as `{}` does', async () => {
    const res = await fixture.server.inject({ method: 'POST', url: '/api/v1/admin/models/reload' });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().models.length, 10);
  });

  test('documented in the OpenAPI document', async () => {
    const spec = (await fixture.server.inject({ method: 'GET', url: '/openapi.json' })).json();
    const operation = spec.paths['/api/v1/admin/models/reload'].post;
    assert.equal(operation.operationId, 'admin_models_reload');
    assert.ok(operation.summary);
    for (const status of ['200', '401', '403', '404', '422']) assert.ok(operation.responses[status], status);
  });

  test('needs an admin key when keys are set', async () => {
    const keyed = await testServer(fixture.redis, {
      app: defineApp({
        name: 'keyed',
        pipelines: [
          itemPipeline(
            'keyed',
            linearModel({ name: 'keyed', file: file('keyed.json', weights({ 'x:a': 1 })), watch: false }),
          ),
        ],
      }),
      env: { API_KEYS: 'user-key', ADMIN_API_KEYS: 'admin-key' },
    });
    try {
      const call = (key?: string) =>
        postJson(keyed, '/api/v1/admin/models/reload', {}, key ? { 'x-api-key': key } : {});
      assert.equal((await call()).status, 401);
      const forbidden = await call('user-key');
      assert.equal(forbidden.status, 403);
      assert.equal(forbidden.body.error_code, 'RANKD_FORBIDDEN');
      const allowed = await call('admin-key');
      assert.equal(allowed.status, 200);
      assert.equal(allowed.body.models[0].status, 'unchanged');
    } finally {
      await keyed.close();
    }
  });
});

describe('model chain', () => {
  test("each model's score is a feature of the next; the chain scores with the last", async () => {
    const ranked = await rank(fixture.server, 'chain', ITEMS);
    assert.equal(ranked.status, 200, JSON.stringify(ranked.body));
    for (const item of ITEMS)
      close(ranked.scores.get(item.item_id), 10 * value(item, 'a') + value(item, 'b'), item.item_id);
    assert.deepEqual([...ranked.versions], [`stage1@${Stage1.version} > stage2@${Stage2.version}`]);
  });

  test('a model may read only the scores of the models before it', () => {
    assert.throws(
      () => chainModels({ name: 'backwards', models: [Stage2, Stage1] }),
      /stage2 reads stage1:score, but stage1 runs after stage2/,
    );
  });

  test('real-time features cannot read model scores: they run before the model', () => {
    const Late = defineRealtimeFeatures({
      name: 'late',
      entity: Item,
      features: { twice: Feature.float() },
      requires: ['stage1:score'],
      compute: () => ({ twice: 0 }),
    });
    assert.throws(
      () =>
        defineApp({
          pipelines: [
            {
              ...itemPipeline('late', chainModels({ name: 'c', models: [Stage1, Stage2] })),
              realtimeFeatures: [X, G, Late],
            },
          ],
        }),
      /stage1 is computed by a model while the pipeline runs, after real-time features/,
    );
  });
});
