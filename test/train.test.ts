/**
 * The training loop on the template app: the export holds every model input of every shown
 * candidate (the user's features too), labels are graded and configurable, and `rankd train`
 * (the built CLI, in a child process, as a user runs it) refuses bad input with one line, trains,
 * compares, refuses to promote a model that does not beat the serving one, and promotes one the
 * running server then reloads.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { TestApp } from '../src/testing/index.js';
import { ensureBuilt, PACKAGE_ROOT, runCommand } from './helpers/package-build.js';
import { makeTemplateProject } from './helpers/template-project.js';

const TEMPLATE = join(PACKAGE_ROOT, 'template');
const PAGE = 4;
/** What the template's Ranker reads (models.ts): every shown candidate's row must hold each. */
let INPUTS: readonly string[];

let project: string;
/** The template's app in `project`, a project of its own: its models are in project/models/. */
let APP: string;
let shop: TestApp;
const previous = process.cwd();

function rankd(args: readonly string[], env: Record<string, string> = {}) {
  return runCommand(process.execPath, [join(PACKAGE_ROOT, 'bin/rankd.js'), ...args], project, env, 120_000);
}

function rows(
  file: string,
): Array<Record<string, unknown> & { features: Record<string, unknown>; label: number }> {
  return readFileSync(join(project, file), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
}

/** Ranks for a query and user; the page's ids. */
async function rank(id: string, query: string, user?: string): Promise<string[]> {
  const response = await shop.post('/api/v1/ranking', {
    request_id: id,
    query: { query },
    ...(user === undefined ? {} : { user: { user_id: user } }),
    candidates: ['p1', 'p2', 'p3', 'p4', 'p5', 'p6', 'p7', 'p8', 'p9', 'p10', 'p11', 'p12'].map((p) => ({
      product_id: p,
    })),
    user_page_size: PAGE,
  });
  assert.equal(response.statusCode, 200, response.body);
  return (response.json() as { ranked_candidates: Array<{ candidate_id: string }> }).ranked_candidates.map(
    (c) => c.candidate_id,
  );
}

async function feedback(events: Array<{ request_id: string; entity_id: string; feedback_type: string }>) {
  const response = await shop.post('/api/v1/events/feedback', { events });
  assert.equal(response.statusCode, 200, response.body);
}

before(async () => {
  await ensureBuilt();
  project = mkdtempSync(join(tmpdir(), 'rankd-train-'));
  APP = makeTemplateProject(project);
  // In this process (testApp) the model file, models/ranker.json, is relative to the working directory.
  process.chdir(project);
  const { testApp } = await import('rankd/testing');
  const { default: app } = await import(APP);
  INPUTS = (await import(join(TEMPLATE, 'pipelines/product-ranking/models.ts'))).Ranker.inputs;
  shop = await testApp(app, {
    sampleData: TEMPLATE,
    settings: { LOG_LEVEL: 'silent', EVENTS_FLUSH_INTERVAL_MS: '10', EVENTS_FEATURE_SAMPLE_RATE: '0' },
  });
  writeFileSync(join(project, '.env'), `REDIS_URL=${shop.redisUrl}\n`);
});

after(async () => {
  await shop?.close();
  process.chdir(previous);
  rmSync(project, { recursive: true, force: true });
});

describe('the export', () => {
  test('one row per shown candidate, holding every model input and the user’s features; labels graded', async () => {
    const page = await rank('x1', 'candle', 'u2');
    await feedback([
      { request_id: 'x1', entity_id: page[0] as string, feedback_type: 'click' },
      { request_id: 'x1', entity_id: page[1] as string, feedback_type: 'add_to_cart' },
      { request_id: 'x1', entity_id: page[2] as string, feedback_type: 'purchase' },
    ]);
    await shop.server.rankd.events.flush();
    const exported = await rankd(['events', 'export', '--since', '1h', '--out', 'x.jsonl', '--no-progress']);
    assert.equal(exported.code, 0, exported.stderr);
    const mine = rows('x.jsonl').filter((r) => r.request_id === 'x1');
    assert.deepEqual(
      mine.map((r) => r.entity_id),
      page,
    );
    for (const row of mine) {
      for (const name of INPUTS)
        assert.ok(Object.hasOwn(row.features, name), `${row.entity_id} lacks ${name}`);
      assert.equal(row.features['user_profile:price_sensitivity'], 0.8);
      assert.equal(row.features['user_profile:preferred_brand'], 'Fernhill Ceramics');
    }
    assert.deepEqual(
      mine.map((r) => r.label),
      [1, 2, 3, 0],
    );
    const regraded = await rankd([
      'events',
      'export',
      '--since',
      '1h',
      '--grades',
      'click=5,purchase=1',
      '--no-progress',
    ]);
    assert.equal(regraded.code, 0, regraded.stderr);
    const labels = regraded.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
      .filter((r) => r.request_id === 'x1')
      .map((r) => r.label);
    assert.deepEqual(labels, [5, 0, 1, 0]);
  });
});

describe('rankd train', () => {
  before(async () => {
    // Shoppers who buy what is cheap: a pattern the hand-weighted model does not follow.
    const queries = ['candle', 'vase', 'mug', 'blanket', 'gift'];
    for (let i = 0; i < 60; i++) {
      const id = `t${i}`;
      const page = await rank(id, queries[i % queries.length] as string, i % 3 === 0 ? 'u1' : undefined);
      const last = page.at(-1) as string;
      await feedback([
        { request_id: id, entity_id: last, feedback_type: 'purchase' },
        { request_id: id, entity_id: page[1] as string, feedback_type: 'click' },
      ]);
    }
    await shop.server.rankd.events.flush();
    const exported = await rankd([
      'events',
      'export',
      '--since',
      '1h',
      '--out',
      'train.jsonl',
      '--no-progress',
    ]);
    assert.equal(exported.code, 0, exported.stderr);
  });

  test('no events: one line, non-zero exit', async () => {
    const run = await rankd(['train', '--app', APP, '--since', '1h'], { PROJECT_NAME: 'empty' });
    assert.notEqual(run.code, 0);
    assert.match(run.stderr.trim(), /^rankd: no events: /);
    assert.equal(run.stderr.trim().split('\n').length, 1, run.stderr);
  });

  test('no labels: one line, non-zero exit', async () => {
    const run = await rankd(['train', '--app', APP, '--since', '1h', '--grades', 'no_such_feedback=1']);
    assert.notEqual(run.code, 0);
    assert.match(run.stderr.trim(), /^rankd: no labels: /);
  });

  test('a feature the model reads, missing from the logs: named', async () => {
    const without = rows('train.jsonl').map((row) => {
      const { 'product_stats:rating': _, ...rest } = row.features;
      return JSON.stringify({ ...row, features: rest });
    });
    writeFileSync(join(project, 'no-rating.jsonl'), `${without.join('\n')}\n`);
    const run = await rankd(['train', '--app', APP, '--from', 'no-rating.jsonl']);
    assert.notEqual(run.code, 0);
    assert.match(run.stderr.trim(), /^rankd: feature product_stats:rating is missing from the logs/);
  });

  test('a pipeline without a GBDT stage: said so', async () => {
    const run = await rankd([
      'train',
      '--app',
      join(PACKAGE_ROOT, 'test/fixtures/train/no-gbdt-app.ts'),
      '--from',
      'train.jsonl',
    ]);
    assert.notEqual(run.code, 0);
    assert.match(run.stderr.trim(), /GBDT stage/);
  });

  test('trains, compares, promotes; the server reloads; a model that does not beat the serving one is refused unless forced', async () => {
    const before = await rank('probe-before', 'candle');
    const first = await rankd([
      'train',
      '--app',
      APP,
      '--from',
      'train.jsonl',
      '--promote',
      '--force',
      '--no-progress',
    ]);
    assert.equal(first.code, 0, first.stderr);
    assert.match(
      first.stdout,
      /NDCG@4 on validation: trained \d\.\d{4}, serving \(Ranker@RankingModel@1\) \d\.\d{4}/,
    );
    assert.match(first.stdout, /promoted: installed as .*models\/ranker\.json/);
    const report = JSON.parse(readFileSync(join(project, 'models/ranker-candidate.report.json'), 'utf8'));
    assert.deepEqual(report.features, [...INPUTS]);
    assert.equal(report.data.requests, new Set(rows('train.jsonl').map((r) => r.request_id)).size);
    // The server watches models/: its answers change once it has loaded the trained model.
    let after = before;
    for (let i = 0; i < 100 && after.join() === before.join(); i++) {
      await new Promise((r) => setTimeout(r, 100));
      after = await rank(`probe-after-${i}`, 'candle');
    }
    assert.notDeepEqual(after, before);

    // The same data trains the same model: it does not beat itself, so it is not installed.
    const installed = statSync(join(project, 'models/ranker.json')).mtimeMs;
    const again = await rankd(['train', '--app', APP, '--from', 'train.jsonl', '--promote', '--no-progress']);
    assert.notEqual(again.code, 0);
    assert.match(
      again.stderr.trim(),
      /^rankd: not promoted: the trained model's NDCG@4 .* does not beat the serving model's/,
    );
    assert.equal(statSync(join(project, 'models/ranker.json')).mtimeMs, installed);
    // The training guide quotes this line (numbers aside).
    const shape = (line: string) => line.replace(/\d+(\.\d+)?/g, '#');
    const quoted = readFileSync(join(PACKAGE_ROOT, 'docs/guides/train-a-model.md'), 'utf8')
      .split('\n')
      .find((line) => line.startsWith('rankd: not promoted'));
    assert.equal(shape(quoted ?? ''), shape(again.stderr.trim()));
    const forced = await rankd([
      'train',
      '--app',
      APP,
      '--from',
      'train.jsonl',
      '--promote',
      '--force',
      '--no-progress',
    ]);
    assert.equal(forced.code, 0, forced.stderr);
    assert.match(forced.stdout, /promoted: .*\(--force\)/);
  });
});
