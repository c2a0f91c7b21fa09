/**
 * The training loop on the template app: the export holds every model input of every shown
 * candidate (the user's features too), labels are graded and configurable, and `rankd train`
 * (the built CLI, in a child process, as a user runs it) refuses bad input with one line (exit 1),
 * trains, compares, refuses to promote a model that is not better than the serving one (exit 3),
 * and promotes one the running server then reloads; `rankd evaluate --model` judges a model file
 * the same way (a better one exit 0, its negated leaves exit 3); and model files are the app
 * project's wherever the commands start.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { negateLeaves } from '../scripts/shop/model-edits.js';
import type { TestApp } from '../src/testing/index.js';
import { startCliService } from './helpers/cli-service.js';
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

/** `rankd evaluate --model <model>` on the exported rows. */
function evaluate(model: string) {
  return rankd(['evaluate', '--app', APP, '--from', 'train.jsonl', '--model', model]);
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

  test('no events: one line, exit 1', async () => {
    const run = await rankd(['train', '--app', APP, '--since', '1h'], { PROJECT_NAME: 'empty' });
    assert.equal(run.code, 1, 'an error exits 1, not 3 (not better)');
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

  test('rows that are not valid training rows are left out and counted by reason; labels are whole grades', async () => {
    const good = readFileSync(join(project, 'train.jsonl'), 'utf8').trim().split('\n');
    const first = JSON.parse(good[0] as string) as Record<string, unknown> & {
      features: Record<string, unknown>;
    };
    const feature = INPUTS[0] as string;
    const bad = [
      { ...first, label: 1.5 },
      { ...first, position: -1 },
      { ...first, position: 2.5 },
      { ...first, position: null },
      { ...first, timestamp: 'yesterday-ish' },
      { ...first, entity_id: 'undefined' },
      { ...first, features: { ...first.features, [feature]: 'NaN' } },
      { ...first, features: { ...first.features, [feature]: { nested: 1 } } },
    ].map((row) => JSON.stringify(row));
    // JSON has no Infinity, but 1e400 reads as one.
    bad.push(JSON.stringify(first).replace(/"position":\d+/, '"position":1e308'));
    bad.push(
      JSON.stringify({ ...first, features: { ...first.features, [feature]: 7 } }).replace(
        /:7([,}])/,
        ':1e400$1',
      ),
    );
    writeFileSync(join(project, 'with-bad.jsonl'), `${[...good, ...bad].join('\n')}\n`);
    const run = await rankd(['train', '--app', APP, '--from', 'with-bad.jsonl', '--no-progress']);
    assert.equal(run.code, 0, run.stderr);
    const data = run.stdout.split('\n').find((line) => line.startsWith('data: ')) ?? '';
    assert.match(data, /; 10 impressions left out: /);
    assert.match(data, /4 with a position that is not a whole number from 0 to 99/);
    assert.match(data, /2 with a feature value that is not a finite number/);
    assert.match(data, /1 with a feature value that is an object or a list of non-numbers/);
    assert.match(data, /1 with a label that is not a whole grade from 0 to 31/);
    assert.match(data, /1 with a timestamp that is not a date/);
    assert.match(data, /1 with no entity id/);
    const report = JSON.parse(readFileSync(join(project, 'models/ranker-candidate.report.json'), 'utf8'));
    assert.equal(report.data.rows, good.length);
    assert.equal(
      Object.values(report.data.leftOut as Record<string, number>).reduce((a, b) => a + b),
      10,
    );

    const halves = await rankd(['train', '--app', APP, '--from', 'train.jsonl', '--grades', 'click=1.5']);
    assert.notEqual(halves.code, 0);
    assert.match(
      halves.stderr.trim(),
      /^rankd: --grades "click=1\.5": click=1\.5: a grade is a whole number from 0 to 31/,
    );
    const fromEnv = await rankd(['train', '--app', APP, '--since', '1h'], {
      EVENTS_LABEL_GRADES: 'purchase=2.5',
    });
    assert.notEqual(fromEnv.code, 0);
    assert.match(
      fromEnv.stderr,
      /EVENTS_LABEL_GRADES="purchase=2\.5": purchase=2\.5: a grade is a whole number/,
    );
  });

  test('a request logged by an earlier model is left out and counted; with nothing else, the message names the logs and --since', async () => {
    const { buildServer, loadConfig } = await import('rankd/server');
    const { default: older } = await import(join(PACKAGE_ROOT, 'test/fixtures/train/older-model-app.ts'));
    const server = await buildServer({
      app: older,
      config: loadConfig({ REDIS_URL: shop.redisUrl, LOG_LEVEL: 'silent', EVENTS_FLUSH_INTERVAL_MS: '10' }),
    });
    const switched = new Date(Date.now() - 1).toISOString();
    try {
      assert.ok(await server.rankd.redis.waitUntilReady(5000));
      const response = await server.inject({
        method: 'POST',
        url: '/api/v1/ranking',
        payload: {
          request_id: 'older-1',
          query: { query: 'candle' },
          candidates: ['p1', 'p2', 'p3', 'p4', 'p5', 'p6'].map((product_id) => ({ product_id })),
          user_page_size: PAGE,
        },
      });
      assert.equal(response.statusCode, 200, response.body);
      const page = (response.json() as { ranked_candidates: Array<{ candidate_id: string }> })
        .ranked_candidates;
      await server.rankd.events.flush();
      await feedback([
        { request_id: 'older-1', entity_id: page[0]?.candidate_id as string, feedback_type: 'purchase' },
      ]);
    } finally {
      await server.close();
    }
    // The newest request, so in the validation set, which the serving model scores from the logs.
    const run = await rankd(['train', '--app', APP, '--since', '1h', '--no-progress']);
    assert.equal(run.code, 0, run.stderr);
    assert.match(
      run.stdout,
      new RegExp(
        `; ${PAGE} impressions left out: ${PAGE} logged without text_match:category \\(by an earlier model or feature set\\)`,
      ),
    );
    const onlyOlder = await rankd(['train', '--app', APP, '--since', switched, '--no-progress']);
    assert.notEqual(onlyOlder.code, 0);
    assert.match(
      onlyOlder.stderr.trim(),
      /^rankd: feature text_match:category is missing from the logs: the model reads it but no impression in the event stream since \S+ has it; if the model or its features changed, train on the requests logged since \(--since, and --until\)$/,
    );
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

  test('rankd evaluate --model: a better model exits 0 and names the requests it reorders most; a broken or missing file is an error, exit 1', async () => {
    const trained = await rankd([
      'train',
      '--app',
      APP,
      '--from',
      'train.jsonl',
      '--out',
      'models/evaluated.json',
      '--no-progress',
    ]);
    assert.equal(trained.code, 0, trained.stderr);
    assert.match(trained.stdout, /: better$/m);
    const better = await evaluate('models/evaluated.json');
    assert.equal(better.code, 0, better.stderr);
    assert.match(
      better.stdout,
      /^gate on \d+ requests \(.*\): models\/evaluated\.json \d\.\d{4}, serving \(Ranker@RankingModel@1\) \d\.\d{4}; difference \+[\d.]+, 95% interval \+[\d.]+ to \+[\d.]+: better$/m,
    );
    // The shoppers bought the last product shown: the model moves it to the top.
    assert.match(
      better.stdout,
      /^requests whose order changes most \(ranks: serving → models\/evaluated\.json\):$/m,
    );
    assert.match(better.stdout, /^ {2}t\d+: p\d+ 4→1, /m);

    writeFileSync(join(project, 'models/broken.json'), '{"learner": {}}');
    const broken = await evaluate('models/broken.json');
    assert.equal(broken.code, 1);
    assert.match(broken.stderr.trim(), /^rankd: .*models\/broken\.json/);
    const missing = await evaluate('models/none.json');
    assert.equal(missing.code, 1);
    assert.match(missing.stderr.trim(), /^rankd: --model models\/none\.json: no such file/);
  });

  test('trains, compares, promotes; the server reloads; a model that is not better is refused (exit 3) unless forced', async () => {
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
    assert.match(first.stdout, /^position bias: /m);
    assert.match(
      first.stdout,
      /^gate on the \d+ validation requests \(.*\): trained \d\.\d{4}, serving \(Ranker@RankingModel@1\) \d\.\d{4}; difference [+-][\d.]+, 95% interval /m,
    );
    assert.match(first.stdout, /promoted: installed as .*models\/ranker\.json/);
    const report = JSON.parse(readFileSync(join(project, 'models/ranker-candidate.report.json'), 'utf8'));
    assert.deepEqual(report.features, [...INPUTS]);
    assert.equal(report.data.requests, new Set(rows('train.jsonl').map((r) => r.request_id)).size);
    assert.ok(['better', 'worse', 'inconclusive'].includes(report.gate.verdict));
    // The server watches models/: its answers change once it has loaded the trained model.
    let after = before;
    for (let i = 0; i < 100 && after.join() === before.join(); i++) {
      await new Promise((r) => setTimeout(r, 100));
      after = await rank(`probe-after-${i}`, 'candle');
    }
    assert.notDeepEqual(after, before);

    // The same data trains the same model: it is not better than itself, so it is not installed.
    const installed = statSync(join(project, 'models/ranker.json')).mtimeMs;
    const again = await rankd(['train', '--app', APP, '--from', 'train.jsonl', '--promote', '--no-progress']);
    assert.equal(again.code, 3, again.stderr);
    assert.match(
      again.stderr.trim(),
      /^rankd: not promoted: the trained model is not better than the serving one: difference \+0\.0000, 95% interval \+0\.0000 to \+0\.0000 \(inconclusive\) \(--force installs it anyway\)$/,
    );
    assert.equal(statSync(join(project, 'models/ranker.json')).mtimeMs, installed);
    // The training guide quotes this line (numbers aside).
    const shape = (line: string) => line.replace(/[+-]?\d+(\.\d+)?/g, '#');
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

  test('negative control: the serving model with its leaves negated is worse, exit 3', async () => {
    negateLeaves(join(project, 'models/ranker.json'), join(project, 'models/negated.json'));
    const worse = await evaluate('models/negated.json');
    assert.equal(worse.code, 3, worse.stdout + worse.stderr);
    assert.match(worse.stdout, /: not better \(worse\)$/m);
  });

  test("model files are the app's project's, wherever rankd run and rankd train are started from", async () => {
    const elsewhere = mkdtempSync(join(tmpdir(), 'rankd-elsewhere-'));
    const runFrom = join(elsewhere, 'run');
    const trainFrom = join(elsewhere, 'train');
    mkdirSync(runFrom);
    mkdirSync(trainFrom);
    const server = await startCliService(APP, { REDIS_URL: shop.redisUrl }, [], {
      cli: [join(PACKAGE_ROOT, 'bin/rankd.js')],
      cwd: runFrom,
    });
    try {
      const version = async () => {
        const response = await fetch(`${server.base}/api/v1/ranking`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            request_id: `v-${Date.now()}`,
            candidates: [{ product_id: 'p1' }],
            include_events: true,
          }),
        });
        const body = (await response.json()) as {
          events: Array<{ event_type: string; event_data: { model_version: string } }>;
        };
        return body.events.find((e) => e.event_type === 'MODEL')?.event_data.model_version;
      };
      const served = await version();
      const promoted = await runCommand(
        process.execPath,
        [
          join(PACKAGE_ROOT, 'bin/rankd.js'),
          'train',
          '--app',
          APP,
          '--from',
          join(project, 'train.jsonl'),
          '--trees',
          '7',
          '--promote',
          '--force',
          '--no-progress',
        ],
        trainFrom,
        { REDIS_URL: shop.redisUrl },
        120_000,
      );
      assert.equal(promoted.code, 0, promoted.stderr);
      assert.match(promoted.stdout, /^promoted: installed as \.\.\/\.\.\/.*\/models\/ranker\.json/m);
      // The default --out is the project's too.
      assert.ok(
        statSync(join(project, 'models/ranker-candidate.json')).mtimeMs >
          statSync(join(project, 'models/ranker.json')).mtimeMs - 5000,
      );
      assert.ok(!existsSync(join(trainFrom, 'models')), 'nothing written where rankd train was started');
      assert.ok(!existsSync(join(runFrom, 'models')), 'rankd run watches no models/ of its own');
      let now = served;
      for (let i = 0; i < 100 && now === served; i++) {
        await new Promise((r) => setTimeout(r, 100));
        now = await version();
      }
      assert.notEqual(now, served, 'the server started elsewhere loads what rankd train installed');
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });
});
