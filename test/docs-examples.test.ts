/**
 * Every command the docs show with its output is run here, and its output compared with the one
 * shown. A page marks them with two HTML comments, each followed by a fenced block:
 *
 *   <!-- example: examples/rank.sh -->   the block is that file's text, exactly (docs/examples/)
 *   <!-- output: examples/rank.sh -->    the block is what running that file prints
 *
 * The files run with `sh` against the template app serving its sample data (`testApp`, a throwaway
 * redis-server), listening on a free port that replaces the `localhost:5001` they name; `npx rankd`
 * runs this package's build, installed as npm would, in a temporary directory. Outputs are compared
 * as JSON values when they are JSON (key order and spacing free), else line by line. The one part
 * left out is what differs between machines, as the page says: the directory `rankd init` was run
 * in, shown as /home/you. Needs `npm run build` (the template imports the built package).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { defineApp, defineRankingPipeline, gbdtModel } from 'rankd';
import { type TestApp, testApp } from 'rankd/testing';
import { featureViews } from '../template/feature-store/features.js';
import app from '../template/pipelines/main.js';
import { Ranker } from '../template/pipelines/product-ranking/models.js';
import { ProductFacts, UserAffinity } from '../template/pipelines/product-ranking/realtime-features.js';
import { Product } from '../template/pipelines/product-ranking/schemas.js';
import { TextMatch } from '../template/pipelines/product-ranking/text-match.js';
import { jsonValues } from './helpers/shown-output.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SYSTEM_PYTHON = '/usr/bin/python3';
const DOCS = join(ROOT, 'docs');

/** A marked block: the page, the file it names, the block's text. */
interface Marked {
  page: string;
  kind: 'example' | 'output';
  file: string;
  block: string;
}

/** Every `.md` file under docs/, recursively. */
function pages(dir = DOCS): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return pages(path);
    return entry.name.endsWith('.md') ? [path] : [];
  });
}

/** The marked blocks of one page: each marker and the fenced block right after it. */
function markedBlocks(page: string): Marked[] {
  const text = readFileSync(page, 'utf8');
  const marker = /<!-- (example|output): (\S+) -->\n```[^\n]*\n([\s\S]*?)```/g;
  const found: Marked[] = [];
  for (const match of text.matchAll(marker)) {
    const [, kind, file, block] = match;
    if (file === undefined || block === undefined) continue;
    found.push({ page: relative(ROOT, page), kind: kind as Marked['kind'], file, block });
  }
  // A marker the pattern missed (not followed by a block) must not pass silently.
  const markers = text.match(/<!-- (example|output): /g)?.length ?? 0;
  assert.equal(found.length, markers, `${relative(ROOT, page)}: every marker is followed by a fenced block`);
  return found;
}

function run(script: string, cwd: string, env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('sh', ['-c', script], { cwd, env, timeout: 120_000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${script}\nfailed: ${error.message}\n${stdout}${stderr}`));
      else resolve(stdout);
    });
  });
}

let shop: TestApp;
let base: string;
let work: string;
let bin: string;
const outputs = new Map<string, Promise<string>>();

/** docs/<file> as it runs here: against this test's server, with `npx rankd` this package's CLI. */
function scriptOf(file: string): string {
  return readFileSync(join(DOCS, file), 'utf8')
    .replaceAll('localhost:5001', base)
    .replaceAll('npx rankd ', 'rankd ');
}

/** The environment the scripts run in: `rankd` and python3 of this test first on the PATH. */
function scriptEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { ...process.env, PATH: `${bin}:${process.env.PATH}`, ...extra };
}

/** What running docs/<file> prints, run once however many pages show it. */
function outputOf(file: string): Promise<string> {
  let output = outputs.get(file);
  if (output === undefined) {
    const cwd = mkdtempSync(join(work, 'run-'));
    output = run(scriptOf(file), cwd, scriptEnv()).then((out) => out.replaceAll(cwd, '/home/you'));
    outputs.set(file, output);
  }
  return output;
}

const marked = pages().flatMap(markedBlocks);

before(async () => {
  work = mkdtempSync(join(tmpdir(), 'rankd-docs-examples-'));
  // `rankd` on the PATH: this package's build as npm installs it (a copy, without this checkout's
  // .git, so `rankd init` says what it says to a user), sharing this checkout's node_modules.
  const installed = join(work, 'rankd');
  for (const part of ['package.json', 'bin', 'dist', 'template'])
    cpSync(join(ROOT, part), join(installed, part), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules'), join(installed, 'node_modules'));
  bin = join(work, 'bin');
  mkdirSync(bin);
  symlinkSync(join(installed, 'bin', 'rankd.js'), join(bin, 'rankd'));
  // Debian's python3 has xgboost; another python3 earlier on the PATH may not.
  if (existsSync(SYSTEM_PYTHON)) symlinkSync(SYSTEM_PYTHON, join(bin, 'python3'));
  // Every request's features are recorded, as the model guide asks for training data.
  shop = await testApp(app, {
    sampleData: new URL('../template/', import.meta.url),
    settings: { EVENTS_FEATURES: 'all' },
  });
  await shop.server.listen({ host: '127.0.0.1', port: 0 });
  const address = shop.server.server.address();
  assert.ok(address !== null && typeof address === 'object');
  base = `127.0.0.1:${address.port}`;
});

after(async () => {
  await shop?.close();
  rmSync(work, { recursive: true, force: true });
});

describe("the docs' examples", () => {
  test('the pages mark examples and outputs, and the quickstart, ranking and index ones are among them', () => {
    const files = new Set(marked.filter((m) => m.kind === 'output').map((m) => m.file));
    for (const file of ['examples/rank.sh', 'examples/rank-first.sh', 'examples/index.sh'])
      assert.ok(files.has(file), `some page shows the output of ${file}`);
    assert.ok(marked.some((m) => m.page === 'docs/quickstart.md' && m.kind === 'output'));
  });

  test('each example block is the text of its file in docs/examples/', () => {
    const examples = marked.filter((m) => m.kind === 'example');
    assert.ok(examples.length > 0);
    for (const { page, file, block } of examples)
      assert.equal(block.trimEnd(), readFileSync(join(DOCS, file), 'utf8').trimEnd(), `${page}: ${file}`);
    // Every file there is shown somewhere: none is left to drift.
    const shown = new Set(examples.map((m) => m.file));
    for (const name of readdirSync(join(DOCS, 'examples')))
      assert.ok(shown.has(`examples/${name}`), `docs/examples/${name} is shown by a page`);
  });

  for (const { page, file, block } of marked.filter((m) => m.kind === 'output')) {
    test(`${page}: the output shown for ${file} is what it prints`, async () => {
      const actual = await outputOf(file);
      const shown = jsonValues(block);
      if (shown !== undefined) {
        assert.deepEqual(jsonValues(actual), shown, `${file} printed:\n${actual}`);
      } else {
        assert.equal(actual.trimEnd(), block.trimEnd(), `${file} printed:\n${actual}`);
      }
    });
  }

  test("the model guide: traffic and feedback, the export, the training script, the template's Ranker serving the file", async (t) => {
    const xgboost = await run(`python3 -c 'import numpy, xgboost'`, work, scriptEnv()).then(
      () => true,
      () => false,
    );
    if (!xgboost) {
      t.skip('python3 with numpy and xgboost is not installed (Debian: apt-get install python3-xgboost)');
      return;
    }
    // Traffic: a few searches, each with a purchase of its second result and a click on its first.
    const candidates = Array.from({ length: 12 }, (_, i) => ({ product_id: `p${i + 1}` }));
    for (const [i, query] of [
      'candle',
      'throw',
      'mug',
      'lamp',
      'vase',
      'blanket',
      'linen',
      'wax',
    ].entries()) {
      const request_id = `guide-${i}`;
      const page = await shop.post('/api/v1/ranking', { request_id, query: { query }, candidates });
      assert.equal(page.statusCode, 200, page.body);
      const [first, second] = page.json().ranked_candidates;
      const feedback = await shop.post('/api/v1/events/feedback', {
        events: [
          { request_id, entity_id: first.candidate_id, feedback_type: 'click' },
          { request_id, entity_id: second.candidate_id, feedback_type: 'purchase' },
        ],
      });
      assert.equal(feedback.statusCode, 200, feedback.body);
    }
    await shop.server.rankd.events.flush();

    // The guide's commands, in a project directory holding the script.
    const project = mkdtempSync(join(work, 'project-'));
    cpSync(join(DOCS, 'examples/train-xgboost.py'), join(project, 'train-xgboost.py'));
    const env = scriptEnv({ REDIS_URL: shop.redisUrl });
    await run(scriptOf('examples/export.sh'), project, env);
    const rows = readFileSync(join(project, 'train.csv'), 'utf8').trim().split('\n');
    assert.match(rows[0] ?? '', /text_match:title/, 'the export has the model inputs');
    assert.ok(rows.length > 8, `${rows.length} rows`);
    const trained = await run(scriptOf('examples/train.sh'), project, env);
    // The other examples' requests were recorded too: at least this test's eight.
    const summary = /^trained on \d+ rows of (\d+) requests; wrote models\/ranker\.json$/m.exec(trained);
    assert.ok(summary && Number(summary[1]) >= 8, trained);
    // The retrain step's temporary name does not end in .json: the file is XGBoost JSON all the same.
    await run('python3 train-xgboost.py train.csv models/.ranker.json.tmp', project, env);
    const retrained = readFileSync(join(project, 'models/.ranker.json.tmp'), 'utf8');
    assert.ok(retrained.startsWith('{"learner":'), `JSON, not ${JSON.stringify(retrained.slice(0, 20))}`);

    // The file is the template's Ranker's: its features, in its order (the guide changes no code).
    const trainedApp = defineApp({
      name: 'trained',
      entities: [Product],
      featureViews,
      pipelines: [
        defineRankingPipeline({
          name: 'Trained',
          candidate: Product,
          realtimeFeatures: [TextMatch, ProductFacts, UserAffinity],
          model: gbdtModel({
            name: 'Trained',
            entity: Product,
            file: join(project, 'models/ranker.json'),
            features: [...(Ranker.features ?? [])],
          }),
        }),
      ],
    });
    const served = await testApp(trainedApp, { sampleData: new URL('../template/', import.meta.url) });
    try {
      const page = await served.post('/api/v1/ranking', {
        request_id: 'trained-1',
        query: { query: 'candle' },
        candidates,
        user_page_size: 12,
      });
      assert.equal(page.statusCode, 200, page.body);
      const ranked = page.json().ranked_candidates as Array<{ candidate_id: string; ranked_score: number }>;
      assert.deepEqual(ranked.map((c) => c.candidate_id).sort(), candidates.map((c) => c.product_id).sort());
      assert.ok(new Set(ranked.map((c) => c.ranked_score)).size > 1, 'the trees tell candidates apart');
    } finally {
      await served.close();
    }
  });
});
