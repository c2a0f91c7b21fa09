/**
 * Training-data export: a recorded scenario (ranking requests, some with sampled features, then
 * feedback on some impressions) exported to JSONL and CSV, row for row; the time range, the
 * feedback window, and the join's memory bounds on synthetic events.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { runEventsExport } from '../src/cli/events-export.js';
import { TrainingJoin } from '../src/events/export/training-join.js';
import { bucketOf } from '../src/experiments/define-experiment.js';
import type { RankdEvent } from '../src/server.js';
import { eventsServer, readEvents } from './helpers/events-app.js';
import { sleep } from './helpers/ranking-app.js';
import { RawRedis } from './helpers/raw-redis.js';
import { startTestRedis, type TestRedis } from './helpers/redis-server.js';
import { postJson } from './helpers/server.js';

const ROOT = new URL('..', import.meta.url).pathname;
const PROJECT = 'exportshop';

let redis: TestRedis;
let sampled: FastifyInstance;
let unsampled: FastifyInstance;
let dir: string;
/** Between the second and the third request. */
let middle: string;

const rank = (server: FastifyInstance, request_id: string, ids: string[]) =>
  postJson(server, '/api/v1/ranking', {
    request_id,
    candidates: ids.map((product_id) => ({ product_id })),
    user_page_size: 3,
  });

const feedback = (events: unknown[]) => postJson(sampled, '/api/v1/events/feedback', { events });

before(async () => {
  redis = await startTestRedis();
  dir = mkdtempSync(join(tmpdir(), 'rankd-export-test-'));
  writeFileSync(join(dir, '.env'), `REDIS_URL=${redis.url}\nPROJECT_NAME=${PROJECT}\n`);
  // Two servers on one stream: one samples every request's features, the other none.
  sampled = (await eventsServer(redis, { PROJECT_NAME: PROJECT, EVENTS_FEATURE_SAMPLE_RATE: '1' })).server;
  unsampled = (await eventsServer(redis, { PROJECT_NAME: PROJECT })).server;
  const served = async (server: FastifyInstance, id: string, ids: string[]) => {
    assert.equal((await rank(server, id, ids)).status, 200);
    // Written before any feedback on it, as a user's reaction would be.
    await server.rankd.events.flush();
  };
  // r1 shows p03 (boosted), p07, p06; r2 shows p05, p04, p02; r3 shows p06, p01.
  await served(sampled, 'r1', ['p01', 'p03', 'p06', 'p07']);
  await served(unsampled, 'r2', ['p02', 'p04', 'p05']);
  // Apart enough that a 10 ms window closes between r2 and the feedback.
  await sleep(20);
  middle = new Date().toISOString();
  await sleep(20);
  await served(sampled, 'r3', ['p01', 'p06']);
  const fed = await feedback([
    { request_id: 'r1', entity_id: 'p03', feedback_type: 'click' },
    { request_id: 'r1', entity_id: 'p03', feedback_type: 'purchase' },
    { request_id: 'r1', entity_id: 'p07', feedback_type: 'click' },
    { request_id: 'r2', entity_id: 'p04', feedback_type: 'add_to_cart' },
    { request_id: 'r2', entity_id: 'p04', feedback_type: 'dwell', value: 12 },
    // Not shown in r3, and a request that never happened: neither makes a row.
    { request_id: 'r3', entity_id: 'p03', feedback_type: 'click' },
    { request_id: 'ghost', entity_id: 'p01', feedback_type: 'click' },
  ]);
  assert.equal(fed.status, 200, JSON.stringify(fed.body));
});

after(async () => {
  await sampled?.close();
  await unsampled?.close();
  await redis?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs the export as `rankd events export` does, with rows and messages captured. */
async function exportRows(options: Partial<Parameters<typeof runEventsExport>[0]> = {}) {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (chunk: Buffer) => chunks.push(chunk));
  const messages: string[] = [];
  const report = await runEventsExport(
    { since: '1h', out: '-', window: '1h', progress: false, ...options },
    { log: (line) => messages.push(line), warn: (line) => messages.push(line), stdout: out },
    dir,
  );
  return { text: Buffer.concat(chunks).toString('utf8'), report, messages };
}

const variantOf = (requestId: string) => (bucketOf('layout', '', requestId) < 0.5 ? 'grid' : 'list');
const features = (i: number) => ({ 'facts:price': i + 0.5, 'facts:in_stock': i % 2 === 0 });

/** The rows the scenario must give, in request order then position. */
async function expectedRows() {
  const timestamps = new Map<string, string>();
  for (const event of await readEvents(redis, `${PROJECT}:events`))
    if (event.event_type === 'IMPRESSION') timestamps.set(event.request_id, event.event_timestamp);
  const row = (
    request_id: string,
    id: number,
    position: number,
    labels: [clicked: number, cart: number, purchased: number, label: number],
    sampledFeatures: boolean,
  ) => ({
    request_id,
    timestamp: timestamps.get(request_id),
    api_source: '/api/v1/ranking',
    run_id: null,
    entity_type: 'product',
    entity_id: `p0${id}`,
    position,
    score: id + 0.5 + (id === 3 ? 100 : 0),
    model_name: 'PriceModel',
    model_version: '2.0',
    experiments: { layout: variantOf(request_id) },
    features: sampledFeatures ? features(id) : null,
    clicked: labels[0],
    added_to_cart: labels[1],
    purchased: labels[2],
    label: labels[3],
  });
  return [
    row('r1', 3, 0, [1, 0, 1, 3], true),
    row('r1', 7, 1, [1, 0, 0, 1], true),
    row('r1', 6, 2, [0, 0, 0, 0], true),
    row('r2', 5, 0, [0, 0, 0, 0], false),
    row('r2', 4, 1, [0, 1, 0, 2], false),
    row('r2', 2, 2, [0, 0, 0, 0], false),
    row('r3', 6, 0, [0, 0, 0, 0], true),
    row('r3', 1, 1, [0, 0, 0, 0], true),
  ];
}

describe('rankd events export', () => {
  test('JSONL: one row per impression with its model, experiment, sampled features and graded label', async () => {
    const { text, report, messages } = await exportRows({ format: 'jsonl' });
    const rows = text
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    assert.deepEqual(rows, await expectedRows());
    assert.equal(report.rows, 8);
    assert.equal(report.labelled, 3);
    assert.match(messages.join('\n'), /exported 8 rows \(3 with a label > 0\)/);
  });

  test('CSV: flattened experiment and view:feature columns, booleans as 1/0, empty cells when not sampled', async () => {
    const { text } = await exportRows({ format: 'csv' });
    const lines = text.trimEnd().split('\n');
    assert.equal(
      lines[0],
      'request_id,timestamp,api_source,run_id,entity_type,entity_id,position,score,model_name,model_version,' +
        'experiment:layout,facts:in_stock,facts:price,clicked,added_to_cart,purchased,label',
    );
    const expected = (await expectedRows()).map((r) =>
      [
        r.request_id,
        r.timestamp,
        r.api_source,
        '',
        r.entity_type,
        r.entity_id,
        r.position,
        r.score,
        r.model_name,
        r.model_version,
        r.experiments.layout,
        r.features ? (r.features['facts:in_stock'] ? 1 : 0) : '',
        r.features ? r.features['facts:price'] : '',
        r.clicked,
        r.added_to_cart,
        r.purchased,
        r.label,
      ].join(','),
    );
    assert.deepEqual(lines.slice(1), expected);
  });

  test('--until limits the impressions exported; feedback after it still labels them', async () => {
    const { text } = await exportRows({ until: middle });
    const rows = text
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    assert.deepEqual(
      rows,
      (await expectedRows()).filter((r) => r.request_id !== 'r3'),
    );
  });

  test('feedback later than --window after its request does not label it', async () => {
    const { text } = await exportRows({ window: '10ms' });
    const rows = text
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    assert.equal(rows.length, 8);
    assert.deepEqual(
      rows.map((r) => r.label),
      [0, 0, 0, 0, 0, 0, 0, 0],
    );
  });

  test('the CLI writes a CSV file and prints a summary; bad times are one-line errors', async () => {
    const run = (args: string[]) =>
      new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
        execFile(
          process.execPath,
          // tsx resolved from here: the command runs in the project directory, which has no node_modules.
          [
            '--import',
            import.meta.resolve('tsx'),
            join(ROOT, 'src/cli/main.ts'),
            'events',
            'export',
            ...args,
          ],
          { cwd: dir },
          (error, stdout, stderr) =>
            resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
        ),
      );
    const ok = await run(['--since', '2h', '--out', 'train.csv', '--no-progress']);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /exported 8 rows .* into train\.csv/);
    const csv = readFileSync(join(dir, 'train.csv'), 'utf8').trimEnd().split('\n');
    assert.equal(csv.length, 9);
    assert.match(csv[0] ?? '', /,experiment:layout,facts:in_stock,facts:price,clicked,/);
    const bad = await run(['--since', 'last tuesday']);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /^rankd: --since "last tuesday": expected an ISO date/);
  });
});

describe('from an event file (EVENTS_SINK=file)', () => {
  test('--input reads the file’s records and joins them the same way', async () => {
    const file = join(dir, 'events.jsonl');
    const { server } = await eventsServer(redis, {
      PROJECT_NAME: 'filesink',
      EVENTS_SINK: 'file',
      EVENTS_FILE: file,
      EVENTS_FEATURE_SAMPLE_RATE: '1',
    });
    try {
      assert.equal((await rank(server, 'file-1', ['p02', 'p05'])).status, 200);
      await server.rankd.events.flush();
      const fed = await postJson(server, '/api/v1/events/feedback', {
        events: [{ request_id: 'file-1', entity_id: 'p02', feedback_type: 'add_to_cart' }],
      });
      assert.deepEqual(fed.body, { written: 1 });
    } finally {
      await server.close();
    }
    const { text, report } = await exportRows({ input: 'events.jsonl' });
    const rows = text
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    assert.deepEqual(
      rows.map((r) => [r.request_id, r.entity_id, r.position, r.added_to_cart, r.label, r.features]),
      [
        ['file-1', 'p05', 0, 0, 0, features(5)],
        ['file-1', 'p02', 1, 1, 2, features(2)],
      ],
    );
    assert.equal(report.rows, 2);
  });
});

describe('the join, on synthetic events', () => {
  const event = (
    request_id: string,
    event_type: string,
    event_data: Record<string, unknown>,
  ): RankdEvent => ({
    request_id,
    api_source: '/api/v1/ranking',
    event_timestamp: '2024-05-01T00:00:00.000Z',
    event_type,
    event_data,
    run_id: null,
  });
  const impression = (request: string, id: string, order: number) =>
    event(request, 'IMPRESSION', {
      entity_identifier: id,
      entity_identifier_type: 'product',
      impression_score: 1,
      impression_order: order,
    });
  const model = (request: string, id: string) =>
    event(request, 'MODEL', {
      model_name: 'M',
      model_version: '1',
      entity_identifier: id,
      entity_identifier_type: 'product',
    });
  const click = (request: string, id: string) =>
    event(request, 'FEEDBACK', {
      entity_identifier: id,
      entity_identifier_type: 'product',
      feedback_type: 'click',
    });

  test('a request’s rows are written when its window closes; feedback that overtook its impressions still joins', () => {
    const join = new TrainingJoin({ sinceMs: 0, untilMs: 10_000, windowMs: 1000 });
    assert.deepEqual(join.add(100, click('a', 'x')), []);
    join.add(110, model('a', 'x'));
    join.add(110, impression('a', 'x', 0));
    assert.equal(join.pendingRequests, 1);
    const rows = join.add(1200, impression('b', 'y', 0));
    assert.deepEqual(
      rows.map((r) => [r.request_id, r.entity_id, r.clicked, r.model_name]),
      [['a', 'x', 1, 'M']],
    );
    assert.equal(join.pendingRequests, 1);
    assert.deepEqual(
      join.finish().map((r) => r.request_id),
      ['b'],
    );
  });

  test('after settling, details of entities not shown are let go; past maxPendingImpressions the oldest request is cut short', () => {
    const join = new TrainingJoin({
      sinceMs: 0,
      untilMs: 10_000,
      windowMs: 5000,
      settleMs: 10,
      maxPendingImpressions: 2,
    });
    join.add(0, model('a', 'shown'));
    join.add(0, model('a', 'hidden'));
    join.add(0, impression('a', 'shown', 0));
    join.add(20, impression('b', 'y', 0));
    // A late MODEL event of an entity `a` did not show is not kept once `a` has settled.
    join.add(21, model('a', 'other'));
    const cut = join.add(22, impression('c', 'z', 0));
    assert.equal(join.cutShort, 1);
    assert.deepEqual(
      cut.map((r) => [r.request_id, r.entity_id, r.model_name]),
      [['a', 'shown', 'M']],
    );
  });
});

describe('entries that are not valid training data', () => {
  test('are skipped and counted with their reasons in the summary line; an entry is bounded as a request is', async () => {
    const project = 'garbage';
    const key = `${project}:events`;
    const raw = await RawRedis.connect(redis);
    const node = await raw.nodeForKey(key);
    /** One entry of one request: its impressions (`[id, order]`) and FEATURE_ROWS values. */
    const entry = async (
      request: string,
      impressions: string,
      rows: string,
      timestamp = new Date().toISOString(),
    ) => {
      const events =
        `[${impressions}` +
        `,{"event_type":"FEATURE_ROWS","event_data":{"entity_identifier_type":"product","feature_names":["m:a","m:b"],"rows":${rows}}}]`;
      await node.sendCommand([
        'XADD',
        key,
        '*',
        'request_id',
        request,
        'api_source',
        '/api/v1/ranking',
        'event_timestamp',
        timestamp,
        'events',
        events,
      ]);
    };
    const impression = (id: string | null, order: string) =>
      `{"event_type":"IMPRESSION","event_data":{${id === null ? '' : `"entity_identifier":${JSON.stringify(id)},`}"entity_identifier_type":"product","impression_score":1,"impression_order":${order}}}`;
    try {
      await entry(
        'good',
        `${impression('p1', '0')},${impression('p2', '1')}`,
        '[["p1",[1,true]],["p2",[2,false]]]',
      );
      // Feature values a model cannot read the way a trainer would: text "NaN", an object, 1e400 (Infinity).
      await entry(
        'values',
        `${impression('p1', '0')},${impression('p2', '1')},${impression('p3', '2')}`,
        '[["p1",["NaN",1]],["p2",[{"x":1},1]],["p3",[1e400,1]]]',
      );
      await entry(
        'positions',
        ['null', '-1', '2.5', '1e308'].map((order, i) => impression(`q${i}`, order)).join(','),
        '[]',
      );
      await entry('ids', `${impression('undefined', '0')},${impression(null, '1')}`, '[]');
      await entry('time', impression('p1', '0'), '[]', 'yesterday at noon');
      // One entry claiming 100,000 impressions: a request shows at most a page of 100.
      const many = Array.from({ length: 100_000 }, (_, i) => impression(`m${i}`, String(i % 100)));
      await entry('many', many.join(','), '[]');
    } finally {
      await raw.close();
    }
    const cwd = mkdtempSync(join(tmpdir(), 'rankd-export-garbage-'));
    try {
      writeFileSync(join(cwd, '.env'), `REDIS_URL=${redis.url}\nPROJECT_NAME=${project}\n`);
      const out = new PassThrough();
      const chunks: Buffer[] = [];
      out.on('data', (chunk: Buffer) => chunks.push(chunk));
      const messages: string[] = [];
      const report = await runEventsExport(
        { since: '1h', out: '-', window: '1h', progress: false },
        { log: (line) => messages.push(line), warn: (line) => messages.push(line), stdout: out },
        cwd,
      );
      const rows = Buffer.concat(chunks)
        .toString('utf8')
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line) as { request_id: string; entity_id: string });
      assert.deepEqual(
        rows.filter((r) => r.request_id !== 'many').map((r) => `${r.request_id}/${r.entity_id}`),
        ['good/p1', 'good/p2'],
      );
      assert.equal(rows.filter((r) => r.request_id === 'many').length, 100);
      assert.equal(report.rows, 102);
      assert.equal(report.skipped.total, 3 + 4 + 2 + 1 + 99_900);
      const summary = messages.find((line) => line.startsWith('exported ')) ?? '';
      assert.match(summary, /^exported 102 rows .*; 99,910 impressions left out: /);
      assert.match(summary, /99,900 past the 100 impressions a request shows/);
      assert.match(summary, /4 with a position that is not a whole number from 0 to 99/);
      assert.match(summary, /2 with a feature value that is not a finite number/);
      assert.match(summary, /1 with a feature value that is an object or a list of non-numbers/);
      assert.match(summary, /2 with no entity id/);
      assert.match(summary, /1 with a timestamp that is not a date/);
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });
});
