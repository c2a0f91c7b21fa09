/**
 * `gbdtModel({ threads })` in a server: big batches split between threads score exactly like the
 * single-threaded evaluator, a reload while batches are in flight answers each of them with the
 * version it started with, closing the server stops the threads, and a process that scored with
 * threads and never closed anything still exits by itself (the threads are unref'd).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { seededRandom, syntheticModel } from '../bench/models-synthetic.js';
import { defineApp, gbdtModel } from '../src/index.js';
import { parseGbdtModel } from '../src/models/gbdt/load-gbdt.js';
import { G_FEATURES, Item, type ItemInput, itemPipeline, replaceFile } from './helpers/model-app.js';
import { postJson, useTestServer } from './helpers/server.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const EXIT_SCRIPT = fileURLToPath(new URL('./fixtures/gbdt/parallel-exit.ts', import.meta.url));

// 200 trees of depth 8: 1600 tree steps per row, so 300 candidates are over the default threshold.
const MODEL_A = syntheticModel(200, 8, 6, 1).json;
const MODEL_B = syntheticModel(200, 8, 6, 2).json;
const dir = mkdtempSync(join(tmpdir(), 'rankd-gbdt-parallel-'));
const modelFile = join(dir, 'ranker.json');
writeFileSync(modelFile, MODEL_A);

const Parallel = gbdtModel({
  name: 'parallel',
  file: modelFile,
  features: G_FEATURES,
  threads: 2,
  watch: false,
});
const app = defineApp({
  name: 'gbdt-parallel',
  entities: [Item],
  pipelines: [itemPipeline('parallel', Parallel)],
});

/** `count` items with six values each, some missing. */
function itemsOf(count: number, seed: number): ItemInput[] {
  const random = seededRandom(seed);
  return Array.from({ length: count }, (_, i) => ({
    item_id: `p${i}`,
    v: Array.from({ length: 6 }, () => (random() < 0.1 ? null : (random() - 0.5) * 4)),
  }));
}

/** The first page (100, the most a page holds) of a ranking of `items`: scores by id, and the model versions. */
async function rank(items: readonly ItemInput[]) {
  const res = await postJson(fixture.server, '/api/v1/parallel', {
    request_id: 'gbdt-parallel',
    candidates: items,
    user_page_size: 100,
    include_events: true,
  });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const scores = new Map<string, number>();
  for (const c of res.body.ranked_candidates) scores.set(c.candidate_id, c.ranked_score);
  const versions = new Set<string>();
  for (const e of res.body.events ?? [])
    if (e.event_type === 'MODEL') versions.add(e.event_data.model_version);
  return { scores, versions };
}

/** Asserts the page is the 100 best of `expected`, each with its score exactly. */
function assertPage(page: ReadonlyMap<string, number>, expected: ReadonlyMap<string, number>): void {
  const best = [...expected].sort((a, b) => b[1] - a[1]).slice(0, 100);
  assert.equal(page.size, 100);
  for (const [id, score] of best) assert.equal(page.get(id), score, id);
}

/** The single-threaded evaluator's scores of `items` under `json`, by item id. */
function expectedScores(json: string, items: readonly ItemInput[]): Map<string, number> {
  const ensemble = parseGbdtModel(json, 'expected');
  const matrix = Float64Array.from(items.flatMap((item) => (item.v ?? []).map((x) => x ?? Number.NaN)));
  const scores = ensemble.predict(matrix, items.length, 6);
  return new Map(items.map((item, i) => [item.item_id, scores[i] as number]));
}

const fixture = useTestServer({ app });

after(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('gbdtModel with threads', () => {
  const items = itemsOf(300, 5);

  test('a split batch is ranked with exactly the single-threaded scores', async () => {
    const expected = expectedScores(MODEL_A, items);
    for (let i = 0; i < 3; i++) assertPage((await rank(items)).scores, expected);
  });

  test('a reload while batches are in flight: each is answered by the version it started with', async () => {
    const versionA = Parallel.version;
    const inFlight = Array.from({ length: 6 }, () => rank(items));
    replaceFile(modelFile, MODEL_B);
    const reloaded = await postJson(fixture.server, '/api/v1/admin/models/reload', { model: 'parallel' });
    assert.equal(reloaded.body.models[0].status, 'reloaded', JSON.stringify(reloaded.body));
    const scoresOf = new Map([
      [versionA, expectedScores(MODEL_A, items)],
      [reloaded.body.models[0].version, expectedScores(MODEL_B, items)],
    ]);
    const later = Array.from({ length: 3 }, () => rank(items));
    for (const ranked of await Promise.all([...inFlight, ...later])) {
      assert.equal(ranked.versions.size, 1);
      const expected = scoresOf.get([...ranked.versions][0] as string);
      assert.ok(expected, `a version this test knows: ${[...ranked.versions][0]}`);
      assertPage(ranked.scores, expected);
    }
    const last = await rank(items);
    assert.deepEqual([...last.versions], [reloaded.body.models[0].version]);
  });
});

describe('process exit', () => {
  test('a process that scored with threads and closed nothing exits by itself, with code 0', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', EXIT_SCRIPT], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      // Only against a hang turning into a stuck test run: a healthy child exits in about a second.
      timeout: 120_000,
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      child.on('exit', (exitCode, exitSignal) => resolve([exitCode, exitSignal])),
    );
    assert.equal(signal, null, `killed: the process did not exit by itself\n${output}`);
    assert.equal(code, 0, output);
    assert.match(output, /scored 1000 rows with 2 worker threads running/);
  });
});
