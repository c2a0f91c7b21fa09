import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { createWriteStream, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { createStores, type Stores } from '../src/app/create-stores.js';
import { FEATURE_LOAD, loadFile } from '../src/cli/load/load-service.js';
import { Progress } from '../src/cli/load/progress.js';
import { loadConfig } from '../src/config/index.js';
import type { FeatureView } from '../src/features/define-feature-view.js';
import { Product, ProductRecent, ProductStats } from './fixtures/loaders/app.js';
import { freePort } from './helpers/free-port.js';
import { startTestRedis, type TestRedis } from './helpers/redis-server.js';

// Like cli-run.test.ts, the CLI runs from source through tsx, as a child process.
const ROOT = new URL('..', import.meta.url).pathname;
const CLI = ['--import', 'tsx', 'src/cli/main.ts'];
const APP = ['--app', 'test/fixtures/loaders/app.ts'];

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `rankd <args>` to completion. */
function rankd(args: readonly string[], env: Record<string, string>): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [...CLI, ...args],
      { cwd: ROOT, env: { ...process.env, ...env }, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) =>
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr }),
    );
  });
}

function show(run: Run): string {
  return `exit ${run.code}\n--- stdout\n${run.stdout}--- stderr\n${run.stderr}`;
}

let redis: TestRedis;
let stores: Stores;
let dir: string;
// Every CLI run of the file is started at once in `before` (each start costs seconds of tsx
// module loading, mostly waiting) and awaited by its tests.
const runs = new Map<string, Promise<Run>>();
let bigLoad: Promise<BigLoad> | undefined;

function file(name: string, content: string | Buffer): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

async function result(name: string): Promise<Run> {
  const run = runs.get(name);
  assert.ok(run, `no run named ${name}`);
  return run;
}

/** The stored rows of `view` for `ids`, decoded; undefined where there is none. */
async function featureRows(view: FeatureView, ids: readonly string[]) {
  const [rows = []] = await stores.features.read([{ view, keys: ids.map((id) => [id]) }]);
  return rows.map((row) => (row === undefined ? undefined : row.layout.readAll(row.bytes)));
}

function vector(value: unknown): number[] {
  return Array.from(value as Float32Array);
}

/** JSON Lines: objects are stringified, strings are written as the line itself. */
const jsonl = (...rows: unknown[]) =>
  rows.map((row) => (typeof row === 'string' ? row : JSON.stringify(row))).join('\n');

before(async () => {
  redis = await startTestRedis();
  stores = createStores(loadConfig({ REDIS_URL: redis.url }));
  assert.ok(await stores.redis.waitUntilReady(5000));
  dir = mkdtempSync(join(tmpdir(), 'rankd-loaders-'));
  const env = { REDIS_URL: redis.url };
  const closedPort = await freePort();

  const goodJsonl = file(
    'features-good.jsonl',
    jsonl({ entity_id: 'g1', ctr: 1 }, { entity_id: 'g2', label: 'two' }, { entity_id: 'g3' }),
  );
  const skipJsonl = file(
    'features-skip.jsonl',
    jsonl(
      { entity_id: 'p1', ctr: 0.25, purchases: 3, trending: true, label: 'red', embedding: [0.5, 1, -2] },
      '',
      { entity_id: 'p2', label: 'blue', event_timestamp: '2026-01-31T12:00:00Z' },
      '   ',
      { entity_id: 'p3', ctr: null },
      '{"entity_id":"k2", "ctr":',
      { ctr: 0.1 },
      { entity_id: 'k4', purchases: 1.5 },
      { entity_id: 'k5', colour: 'red' },
      { entity_id: 'k6', trending: false },
      '[1,2]',
      ...Array.from({ length: 150 }, (_, i) => ({ entity_id: `b${i}`, trending: 'yes' })),
      { entity_id: 'k162', label: 'last' },
    ),
  );
  const stopJsonl = file(
    'features-stop.jsonl',
    jsonl(
      ...[1, 2, 3, 4, 5].map((i) => ({ entity_id: `s${i}`, ctr: i })),
      { entity_id: 's6', ctr: 'x' },
      { entity_id: 's7', ctr: 7 },
    ),
  );
  const csv = file(
    'features.csv',
    [
      'entity_id,ctr,purchases,trending,label,embedding',
      'c1,0.5,7,TRUE,"multi\r\nline","[1,2,3]"',
      'c2,,2,0,plain,1 2 3',
      'c3,-1.5e2,,1,,0.5;0.25;1',
      'e3,abc,1,true,x,1 2 3',
      'e4,1,1,maybe,x,1 2 3',
      'e5,1,1',
      'e6,1,1,true,x,1 2',
      'e7,1,1,true,x,"[1,2,3]"',
      '',
    ].join('\r\n'),
  );
  const entitiesJsonl = file(
    'entities.jsonl',
    jsonl(
      { sku: 'a1', title: 'Lamp', price: 12.5, stock: 3, on_sale: true, categories: ['home'] },
      { sku: 'a2', title: 'Mug', price: 'cheap' },
      { title: 'No id' },
      { sku: 'a4', title: 'Rug', stock: 2 },
    ),
  );
  // Not a .csv name: --format says what it is.
  const entitiesCsv = file(
    'entities.txt',
    [
      'product_id,title,price,stock,on_sale,categories,colour',
      'h1,007 Lamp,12.50,3,1,"[""home"",""light""]",red',
      'h2,Mug,,0,false,,blue',
    ].join('\n'),
  );
  const recentGz = file(
    'recent.jsonl.gz',
    gzipSync(
      jsonl({ entity_id: 'r1', views_1h: 5 }, { entity_id: 'r2', views_1h: 9, event_timestamp: 1000 }),
    ),
  );
  const brokenCsv = file('broken.csv', 'entity_id,ctr\nq1,0.5\nq2,"0.7"x\nq3,0.1\n');

  // The longest run goes first, so that the others overlap it.
  bigLoad = loadBigFile();
  const start = (name: string, args: string[], extraEnv: Record<string, string> = {}) =>
    runs.set(name, rankd([...args, ...APP], { ...env, ...extraEnv }));
  start('skip', ['features', 'load', 'product_stats', skipJsonl, '--on-error', 'skip']);
  start('csv', ['features', 'load', 'product_stats', csv, '--on-error', 'skip']);
  start('stop', ['features', 'load', 'product_stats', stopJsonl, '--batch-size', '2']);
  start('dry-good', ['features', 'load', 'product_stats', goodJsonl, '--dry-run'], {
    REDIS_URL: `redis://127.0.0.1:${closedPort}`,
  });
  start('dry-bad', ['features', 'load', 'product_stats', skipJsonl, '--dry-run', '--on-error', 'skip'], {
    PROJECT_NAME: 'dry',
  });
  start('expired', ['features', 'load', 'product_recent', recentGz]);
  start('broken', ['features', 'load', 'product_stats', brokenCsv, '--on-error', 'skip']);
  start('entities', ['index', 'load', 'product', entitiesJsonl, '--entity-key', 'sku', '--on-error', 'skip']);
  start('entities-csv', ['index', 'load', 'product', entitiesCsv, '--format', 'csv']);
});

after(async () => {
  // A failed `before` leaves runs behind: let them end before their Redis and files go.
  await Promise.allSettled([...runs.values(), bigLoad]);
  await stores?.redis.close();
  await redis?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('rankd features load', () => {
  test('JSONL, --on-error skip: every feature type round-trips; each bad row named by line and reason; exit 1', async () => {
    const run = await result('skip');
    assert.equal(run.code, 1, show(run));
    assert.match(run.stderr, /^line 6: not valid JSON \(/m);
    assert.match(run.stderr, /^line 7: entity_id: field required$/m);
    assert.match(run.stderr, /^line 8: purchases must be a whole number$/m);
    assert.match(run.stderr, /^line 9: colour: product_stats has no feature "colour"/m);
    assert.match(run.stderr, /^line 11: expected a JSON object, got an array$/m);
    assert.match(run.stderr, /^line 12: trending must be true or false$/m);
    // 155 bad rows: the first 100 are printed, then their count.
    assert.equal(run.stderr.match(/^line \d+:/gm)?.length, 100);
    assert.match(run.stderr, /\.\.\. and 55 more bad rows/);
    assert.match(run.stdout, /5 rows written, 155 skipped, 0 expired/);
    const [p1, p2, p3, k4, k6, k162, b0] = await featureRows(ProductStats, [
      'p1',
      'p2',
      'p3',
      'k4',
      'k6',
      'k162',
      'b0',
    ]);
    assert.deepEqual(
      { ...p1, embedding: vector(p1?.embedding) },
      { ctr: 0.25, purchases: 3, trending: true, label: 'red', embedding: [0.5, 1, -2] },
    );
    assert.equal(p2?.label, 'blue');
    assert.equal(p3?.ctr, null);
    assert.equal(k6?.trending, false);
    assert.equal(k162?.label, 'last');
    assert.equal(k4, undefined);
    assert.equal(b0, undefined);
    const [stored] = await stores.features.read([{ view: ProductStats, keys: [['p2']] }]);
    assert.equal(stored?.[0]?.eventTimestampMs, Date.parse('2026-01-31T12:00:00Z'));
  });

  test('CSV: cells typed by the declaration, empty = missing; bad rows by file line', async () => {
    const run = await result('csv');
    assert.equal(run.code, 1, show(run));
    // c1's quoted cell spans lines 2-3, so every later row is one line further down than its index.
    assert.match(run.stderr, /^line 6: ctr must be a finite number$/m);
    assert.match(run.stderr, /^line 7: trending must be true or false$/m);
    assert.match(run.stderr, /^line 8: has 3 fields, the header has 6$/m);
    assert.match(run.stderr, /^line 9: embedding must have 3 items, not 2$/m);
    assert.match(run.stdout, /4 rows written, 4 skipped/);
    const [c1, c2, c3, e3, e7] = await featureRows(ProductStats, ['c1', 'c2', 'c3', 'e3', 'e7']);
    assert.deepEqual(
      { ...c1, embedding: vector(c1?.embedding) },
      { ctr: 0.5, purchases: 7, trending: true, label: 'multi\r\nline', embedding: [1, 2, 3] },
    );
    assert.equal(c2?.ctr, null);
    assert.equal(c2?.trending, false);
    // Vectors as JSON text, or numbers separated by spaces or semicolons.
    assert.deepEqual(vector(c2?.embedding), [1, 2, 3]);
    assert.deepEqual(vector(c3?.embedding), [0.5, 0.25, 1]);
    assert.deepEqual(vector(e7?.embedding), [1, 2, 3]);
    assert.equal(c3?.ctr, -150);
    assert.equal(c3?.purchases, null);
    assert.equal(c3?.label, null);
    assert.equal(e3, undefined);
  });

  test('--on-error stop: the bad line is named, earlier batches are written, nothing of its batch', async () => {
    const run = await result('stop');
    assert.equal(run.code, 1, show(run));
    assert.match(run.stderr, /^line 6: ctr must be a finite number$/m);
    assert.match(run.stdout, /4 rows written, 0 skipped/);
    assert.match(
      run.stdout,
      /Stopped at line 6: ctr must be a finite number; the rows before line 5 were written, nothing from line 5 on/,
    );
    const rows = await featureRows(ProductStats, ['s1', 's2', 's3', 's4', 's5', 's6', 's7']);
    assert.deepEqual(
      rows.map((row) => row?.ctr),
      [1, 2, 3, 4, undefined, undefined, undefined],
    );
  });

  test('--dry-run checks without Redis and writes nothing; exit 0 when every row is valid', async () => {
    const run = await result('dry-good');
    assert.equal(run.code, 0, show(run));
    assert.match(run.stdout, /Dry run of .* 3 rows read, 3 valid, 0 bad.*nothing was written/);
  });

  test('--dry-run reports bad rows as a load would (exit 1) and writes nothing', async () => {
    const run = await result('dry-bad');
    assert.equal(run.code, 1, show(run));
    assert.match(run.stderr, /^line 8: purchases must be a whole number$/m);
    assert.match(run.stdout, /160 rows read, 5 valid, 155 bad/);
    assert.equal(await stores.redis.deleteMatching('dry:*'), 0);
  });

  test('rows already past the TTL are counted as expired, not written; gzip is read', async () => {
    const run = await result('expired');
    assert.equal(run.code, 0, show(run));
    assert.match(run.stdout, /1 row written, 0 skipped, 1 expired/);
    const rows = await featureRows(ProductRecent, ['r1', 'r2']);
    assert.equal(rows[0]?.views_1h, 5);
    assert.equal(rows[1], undefined);
  });

  test('a CSV syntax error stops the load at its line even with --on-error skip', async () => {
    const run = await result('broken');
    assert.equal(run.code, 1, show(run));
    assert.match(run.stderr, /^line 3: Invalid Closing Quote/m);
    assert.match(run.stdout, /Stopped at line 3: Invalid Closing Quote.*nothing was written/);
    assert.deepEqual(await featureRows(ProductStats, ['q1']), [undefined]);
  });

  test('an unknown view names the views there are', async () => {
    const options = { app: APP[1], batchSize: 10, onError: 'stop', progress: false } as const;
    const quiet = { log: () => undefined, warn: () => undefined };
    await assert.rejects(loadFile(FEATURE_LOAD, 'nope', 'unused.jsonl', options, quiet, ROOT), {
      name: 'CliError',
      code: 'RANKD_CLI_USAGE',
      message: 'loaders has no feature view nope; it has product_stats, product_recent',
    });
  });
});

describe('rankd index load', () => {
  test('JSONL with --entity-key: ids copied into product_id, bad entities skipped with their line', async () => {
    const run = await result('entities');
    assert.equal(run.code, 1, show(run));
    assert.match(run.stderr, /^line 2: price: expected a number or null, got the string "cheap"$/m);
    assert.match(run.stderr, /^line 3: sku: field required$/m);
    assert.match(run.stdout, /2 rows written, 2 skipped/);
    const found = await stores.index.getMany(Product, ['a1', 'a2', 'a4']);
    assert.deepEqual([...found.keys()], ['a1', 'a4']);
    assert.equal(found.get('a1')?.product_id, 'a1');
    assert.deepEqual(found.get('a1')?.categories, ['home']);
  });

  test('CSV: declared number, integer, boolean and array fields are parsed, the rest stays text', async () => {
    const run = await result('entities-csv');
    assert.equal(run.code, 0, show(run));
    const found = await stores.index.getMany(Product, ['h1', 'h2']);
    assert.deepEqual(found.get('h1'), {
      product_id: 'h1',
      title: '007 Lamp',
      price: 12.5,
      stock: 3,
      on_sale: true,
      categories: ['home', 'light'],
      colour: 'red',
    });
    assert.deepEqual(found.get('h2'), {
      product_id: 'h2',
      title: 'Mug',
      stock: 0,
      on_sale: false,
      colour: 'blue',
    });
  });
});

describe('progress', () => {
  const lines: string[] = [];
  const sink = (isTTY: boolean) => ({ isTTY, columns: 120, write: (text: string) => lines.push(text) });
  const CLEAR = '\r\x1b[2K';

  test('not a TTY: a plain line every interval, with the share of the file and the ETA', () => {
    lines.length = 0;
    let now = 0;
    let bytes = 0;
    const progress = new Progress({
      stream: sink(false),
      label: 'features load v',
      totalBytes: 1000,
      bytesRead: () => bytes,
      intervalSeconds: 5,
      now: () => now,
    });
    now = 1000;
    bytes = 100;
    progress.update(10_000);
    assert.deepEqual(lines, []);
    now = 5000;
    bytes = 250;
    progress.update(50_000);
    assert.deepEqual(lines, ['features load v: 50,000 rows, 10,000 rows/s (25% of the file), ETA 15.0 s\n']);
  });

  test('a TTY: one line redrawn in place with a bar; a message clears it and redraws it', () => {
    lines.length = 0;
    let now = 0;
    const progress = new Progress({
      stream: sink(true),
      label: 'x',
      totalBytes: 1000,
      bytesRead: () => 500,
      now: () => now,
    });
    now = 2000;
    progress.update(1000);
    const bar = `${CLEAR} 50% [############............] 1,000 rows, 500 rows/s, ETA 2.0 s`;
    assert.deepEqual(lines, [bar]);
    progress.around(() => lines.push('line 3: bad\n'));
    assert.deepEqual(lines, [bar, CLEAR, 'line 3: bad\n', bar]);
    progress.finish();
    assert.equal(lines.at(-1), CLEAR);
  });
});

// ~80 MB of JSONL into a process whose V8 heap may not pass 64 MB (of which loading the app and
// rankd through tsx takes some 40): reading the file whole, or reading ahead of the writes, would
// run out of memory; streaming in batches does not.
const BIG_ROWS = 135_000;
const BIG_LABEL = 'x'.repeat(520);

interface BigLoad {
  run: Run;
  sizeBytes: number;
  peakKb: number;
}

/** Writes the big file, loads it under `--max-old-space-size=64`, and watches the loader's peak RSS. */
async function loadBigFile(): Promise<BigLoad> {
  const path = join(dir, 'big.jsonl');
  await new Promise<void>((resolve, reject) => {
    const out = createWriteStream(path);
    out.on('error', reject);
    let i = 0;
    const write = () => {
      while (i < BIG_ROWS) {
        const row = `{"entity_id":"m${i}","ctr":${i / 2},"purchases":${i},"trending":${i % 2 === 0},"label":"${BIG_LABEL}${i}","embedding":[${i},1,2]}\n`;
        i++;
        if (!out.write(row)) return void out.once('drain', write);
      }
      out.end(resolve);
    };
    write();
  });
  const sizeBytes = statSync(path).size;
  const child = spawn(
    process.execPath,
    ['--max-old-space-size=64', ...CLI, 'features', 'load', 'product_stats', path, ...APP],
    { cwd: ROOT, env: { ...process.env, REDIS_URL: redis.url }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const run: Run = { code: null, stdout: '', stderr: '' };
  child.stdout.on('data', (chunk: Buffer) => {
    run.stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    run.stderr += chunk.toString();
  });
  // VmHWM is the process's peak RSS so far, so the last reading before it exits is the peak.
  let peakKb = 0;
  const poll = setInterval(() => {
    try {
      const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
      peakKb = Math.max(peakKb, Number(/^VmHWM:\s+(\d+)/m.exec(status)?.[1] ?? 0));
    } catch {
      // not Linux, or already gone
    }
  }, 100);
  run.code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  clearInterval(poll);
  rmSync(path, { force: true });
  return { run, sizeBytes, peakKb };
}

describe('a file larger than the loader memory budget', () => {
  test('is streamed in constant memory: every row written, peak RSS bounded', async (t) => {
    assert.ok(bigLoad);
    const { run, sizeBytes, peakKb } = await bigLoad;
    assert.ok(sizeBytes > 75 * 2 ** 20, `the file is ${sizeBytes} bytes`);
    assert.equal(run.code, 0, show(run));
    assert.match(run.stdout, new RegExp(`${BIG_ROWS.toLocaleString('en-US')} rows written, 0 skipped`));
    if (peakKb > 0) {
      t.diagnostic(
        `file ${(sizeBytes / 2 ** 20).toFixed(0)} MB, loader peak RSS ${(peakKb / 1024).toFixed(0)} MB`,
      );
      assert.ok(peakKb < 400 * 1024, `peak RSS ${peakKb} kB`);
    }
    const spot = [0, 1, 99_999, BIG_ROWS - 1];
    const rows = await featureRows(
      ProductStats,
      spot.map((i) => `m${i}`),
    );
    rows.forEach((row, k) => {
      const i = spot[k] as number;
      assert.equal(row?.purchases, i);
      assert.equal(row?.label, `${BIG_LABEL}${i}`);
      assert.equal(row?.trending, i % 2 === 0);
    });
    assert.deepEqual(await featureRows(ProductStats, [`m${BIG_ROWS}`]), [undefined]);
  });
});
