/**
 * Batches split between threads (src/models/gbdt/parallel-*.ts) give the single-threaded scores
 * bit for bit, on the XGBoost and LightGBM fixtures and on a synthetic model in both layouts, for
 * row counts around the chunk edges (multiples of 8); small batches and `threads: 1` never start a
 * thread; a worker that dies falls back to the calling thread without a hang; MODEL_THREADS is
 * validated at start. No assertion depends on timing: whichever thread takes which chunk, the
 * scores must be the same.
 */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { describe, test } from 'node:test';
import { seededRandom, syntheticModel } from '../bench/models-synthetic.js';
import { loadConfig } from '../src/config/index.js';
import { ConfigError } from '../src/errors/index.js';
import { gbdtModel } from '../src/index.js';
import {
  addTrees,
  type FlatLayout,
  inputArray,
  inputBytes,
  shareLayout,
  sumsArray,
  sumsBytes,
} from '../src/models/gbdt/flat-layout.js';
import { loadGbdtModel, parseGbdtModel } from '../src/models/gbdt/load-gbdt.js';
import { DEFAULT_MIN_PARALLEL_STEPS, ParallelEnsemble } from '../src/models/gbdt/parallel-ensemble.js';
import {
  chunkRowsOf,
  jobDone,
  newControl,
  type ParallelJob,
  reclaimLate,
} from '../src/models/gbdt/parallel-job.js';
import { ParallelPool } from '../src/models/gbdt/parallel-pool.js';
import type { TreeEnsemble } from '../src/models/gbdt/tree-ensemble.js';
import { defaultModelThreads } from '../src/models/model-threads.js';

const FIXTURES = new URL('./fixtures/gbdt/', import.meta.url);
/** Around every chunk edge: chunks are multiples of 8 rows, up to 2 per thread. */
const ROW_COUNTS = [0, 1, 7, 8, 9, 15, 16, 17, 31, 33, 63, 65, 127, 129, 255, 257, 511, 999, 1000, 1001];

/** Every fixture model, plus a synthetic one in both layouts (heap float32 and pointer). */
async function models(): Promise<Array<[string, TreeEnsemble]>> {
  const list: Array<[string, TreeEnsemble]> = [];
  for (const format of ['xgboost', 'lightgbm']) {
    const dir = new URL(`${format}/`, FIXTURES);
    for (const name of readdirSync(dir).sort()) {
      if (name.endsWith('.model.json') || name.endsWith('.txt'))
        list.push([`${format}/${name}`, await loadGbdtModel(new URL(name, dir).pathname)]);
    }
  }
  const synthetic = syntheticModel(60, 6, 12).json;
  list.push(['synthetic (heap)', parseGbdtModel(synthetic, 'synthetic')]);
  list.push(['synthetic (pointer)', parseGbdtModel(synthetic, 'synthetic', { layout: 'pointer' })]);
  return list;
}

/**
 * `rows` rows for `model`: normal values, NaN, zeros, values within 1e-35 of zero (LightGBM's
 * zero), small integers and negatives (categories), infinities.
 */
function rowsFor(model: TreeEnsemble, rows: number, seed = 11): Float64Array {
  const random = seededRandom(seed);
  const special = [Number.NaN, 0, -0, 1e-36, -1e-36, 3, 33, -1, Number.POSITIVE_INFINITY];
  return Float64Array.from({ length: rows * model.numFeatures }, () =>
    random() < 0.25 ? (special[Math.floor(random() * special.length)] as number) : (random() - 0.5) * 4,
  );
}

/** Whether two arrays hold the same bits (NaN payloads and -0 included). */
function assertSameBits(actual: Float64Array, expected: Float64Array, what: string): void {
  assert.equal(actual.length, expected.length, `${what}: length`);
  const a = new Uint8Array(actual.buffer, actual.byteOffset, actual.byteLength);
  const b = new Uint8Array(expected.buffer, expected.byteOffset, expected.byteLength);
  for (let i = 0; i < a.length; i++) {
    if (a[i] !== b[i]) {
      const row = Math.floor(i / 8);
      assert.fail(`${what}: row ${row} is ${actual[row]}, single-threaded ${expected[row]}`);
    }
  }
}

describe('split batches score bit for bit like the single-threaded evaluator', () => {
  test('every fixture and the synthetic model, rows around the chunk edges, 3 threads', async () => {
    for (const [name, model] of await models()) {
      // No threshold: every batch is split, however small.
      const parallel = new ParallelEnsemble(model, { threads: 3, minParallelSteps: 0 });
      try {
        for (const rows of ROW_COUNTS) {
          const matrix = rowsFor(model, rows);
          const cols = model.numFeatures;
          const expectedMargins = Float64Array.from(model.predictMargin(matrix, rows, cols));
          const expected = Float64Array.from(model.predict(matrix, rows, cols));
          assertSameBits(
            await parallel.predictMargin(matrix, rows, cols),
            expectedMargins,
            `${name} ${rows}`,
          );
          assertSameBits(await parallel.predict(matrix, rows, cols), expected, `${name} ${rows} predict`);
        }
        // A batch of 8 rows or fewer is one chunk: nothing to split.
        const unsplit = ROW_COUNTS.filter((rows) => rows <= 8).length * 2;
        assert.equal(parallel.stats.single, unsplit, `${name}: only batches of ≤ 8 rows stay on the caller`);
      } finally {
        await parallel.close();
      }
    }
  });

  test('chunks computed by the workers alone (the caller takes none) are the same', async () => {
    for (const [name, model] of await models()) {
      const layout = shareLayout(model.flat);
      const pool = new ParallelPool({ workers: 2, layout, onFailure: (reason) => assert.fail(reason) });
      try {
        for (const rows of [1, 9, 17, 257, 1000]) {
          const matrix = rowsFor(model, rows, rows);
          const width = model.inputWidth;
          const input = inputArray(
            layout,
            rows * width,
            new SharedArrayBuffer(rows * width * inputBytes(layout)),
          );
          const acc = sumsArray(layout, rows, new SharedArrayBuffer(rows * sumsBytes(layout)));
          model.startBatch(matrix, rows, model.numFeatures, input, acc);
          const chunkRows = 16;
          const job: ParallelJob = {
            id: pool.nextId(),
            control: newControl(Math.ceil(rows / 16)),
            input,
            acc,
            width,
            rows,
            chunkRows,
            chunks: Math.ceil(rows / chunkRows),
          };
          pool.post(job);
          assert.equal(await pool.wait(job), 'done', `${name} ${rows}`);
          const margins = new Float64Array(rows);
          model.finishBatch(acc, rows, margins);
          const expected = Float64Array.from(model.predictMargin(matrix, rows, model.numFeatures));
          assertSameBits(margins, expected, `${name} ${rows} by workers`);
        }
      } finally {
        await pool.close();
      }
    }
  });
});

describe('when batches are split', () => {
  const model = parseGbdtModel(syntheticModel(40, 5, 8).json, 'synthetic');
  const stepsPerRow = 40 * 5;

  test('below the threshold (rows × Σ depth) a batch stays on the caller and starts no thread', async () => {
    const parallel = new ParallelEnsemble(model, { threads: 2, minParallelSteps: 100 * stepsPerRow });
    try {
      assert.equal(parallel.splits(99), false);
      assert.equal(parallel.splits(100), true);
      assert.equal(parallel.splits(0), false);
      const small = rowsFor(model, 99);
      const scores = parallel.predict(small, 99, model.numFeatures);
      assert.ok(scores instanceof Float64Array, 'a small batch is answered synchronously');
      assert.equal(parallel.pool, undefined, 'no thread started for small batches');
      assert.deepEqual(parallel.stats, { parallel: 0, single: 1, reclaimed: 0 });
      const big = rowsFor(model, 100);
      const expected = Float64Array.from(model.predict(big, 100, model.numFeatures));
      assertSameBits(await parallel.predict(big, 100, model.numFeatures), expected, 'at the threshold');
      assert.ok(parallel.pool, 'the first batch over the threshold starts the threads');
      assert.equal(parallel.stats.parallel, 1);
      assert.equal(parallel.stats.single, 1);
    } finally {
      await parallel.close();
    }
  });

  test('the default threshold splits the issue workload (1000 rows × 500 trees of depth 8), not small ones', () => {
    const parallel = new ParallelEnsemble(model, { threads: 2 });
    assert.equal(parallel.minParallelSteps, DEFAULT_MIN_PARALLEL_STEPS);
    assert.ok(1000 * 500 * 8 >= DEFAULT_MIN_PARALLEL_STEPS);
    assert.equal(parallel.splits(1000), false, '1000 rows × 200 steps: not worth waking a thread');
    assert.equal(parallel.splits(Math.ceil(DEFAULT_MIN_PARALLEL_STEPS / stepsPerRow)), true);
  });

  test('threads: 1 never splits and never starts a thread', async () => {
    const parallel = new ParallelEnsemble(model, { threads: 1, minParallelSteps: 0 });
    const rows = 1000;
    const matrix = rowsFor(model, rows);
    assert.equal(parallel.splits(rows), false);
    const scores = parallel.predict(matrix, rows, model.numFeatures);
    assert.ok(scores instanceof Float64Array);
    assertSameBits(scores, Float64Array.from(model.predict(matrix, rows, model.numFeatures)), 'threads 1');
    parallel.start();
    assert.equal(parallel.pool, undefined);
    await parallel.close();
  });

  test('a thread count that is not a whole number ≥ 1 is refused', () => {
    for (const threads of [0, -1, 1.5, Number.NaN]) {
      assert.throws(() => new ParallelEnsemble(model, { threads }), RangeError);
      assert.throws(
        () => gbdtModel({ name: 'm', file: '/nowhere.json', features: ['a:b'], threads }),
        /gbdt model m: threads must be a whole number ≥ 1/,
      );
    }
  });

  test('close() stops the threads; later batches are scored on the caller', async () => {
    const parallel = new ParallelEnsemble(model, { threads: 3, minParallelSteps: 0 });
    parallel.start();
    const workers = parallel.pool?.workers ?? [];
    assert.equal(workers.length, 2);
    await parallel.close();
    assert.ok(
      workers.every((worker) => worker.threadId === -1),
      'every worker has exited',
    );
    const matrix = rowsFor(model, 64);
    const scores = parallel.predict(matrix, 64, model.numFeatures);
    assert.ok(scores instanceof Float64Array);
    assertSameBits(scores, Float64Array.from(model.predict(matrix, 64, model.numFeatures)), 'after close');
  });
});

describe('a worker that dies', () => {
  const model = parseGbdtModel(syntheticModel(200, 8, 20).json, 'synthetic');
  const rows = 1000;
  const matrix = rowsFor(model, rows);
  const expected = Float64Array.from(model.predict(matrix, rows, model.numFeatures));

  /** A job of `rows` rows of `matrix` whose chunks of 8 all count as taken, none finished. */
  function stalledJob(pool: ParallelPool, layout: FlatLayout, jobRows: number): ParallelJob {
    const width = model.inputWidth;
    const job: ParallelJob = {
      id: pool.nextId(),
      control: newControl(Math.ceil(jobRows / 8)),
      input: inputArray(layout, jobRows * width, new SharedArrayBuffer(jobRows * width * inputBytes(layout))),
      acc: sumsArray(layout, jobRows, new SharedArrayBuffer(jobRows * sumsBytes(layout))),
      width,
      rows: jobRows,
      chunkRows: 8,
      chunks: Math.ceil(jobRows / 8),
    };
    model.startBatch(matrix, jobRows, model.numFeatures, job.input, job.acc);
    // As if threads took every chunk and were then descheduled, or died.
    Atomics.store(job.control, 0, job.chunks);
    return job;
  }

  test('holding a chunk of a job: the wait is answered "failed", never left hanging', async () => {
    const failures: string[] = [];
    const layout = shareLayout(model.flat);
    const pool = new ParallelPool({ workers: 2, layout, onFailure: (reason) => failures.push(reason) });
    const job = stalledJob(pool, layout, 20);
    pool.post(job);
    const waiting = pool.wait(job);
    await (pool.workers[0] as (typeof pool.workers)[number]).terminate();
    assert.equal(await waiting, 'failed');
    assert.equal(pool.open, false);
    assert.equal(failures.length, 1, 'told once');
    assert.match(failures[0] as string, /a scoring thread exited/);
    await pool.close();
    assert.ok(
      pool.workers.every((worker) => worker.threadId === -1),
      'the other worker is stopped too',
    );
  });

  test('late (descheduled) with a chunk: a bounded wait is answered "late", and the caller scores the chunks itself', async () => {
    const layout = shareLayout(model.flat);
    const pool = new ParallelPool({ workers: 1, layout, onFailure: (reason) => assert.fail(reason) });
    try {
      const jobRows = 37;
      const job = stalledJob(pool, layout, jobRows);
      // Chunk 1 finished by its taker: its sums stay; the others are the caller's to score.
      const [start, end] = chunkRowsOf(job, 1);
      addTrees(
        model.flat,
        job.input.subarray(start * job.width, end * job.width),
        job.width,
        8,
        job.acc.subarray(start, end),
      );
      Atomics.store(job.control, 2 + 1, 1);
      Atomics.store(job.control, 1, 1);
      assert.equal(await pool.wait(job, 1), 'late');
      const own = sumsArray(layout, jobRows);
      model.startSums(own, jobRows);
      assert.deepEqual(reclaimLate(model.flat, job, own), [0, 2, 3, 4]);
      assert.equal(jobDone(job), true);
      const sums = Float32Array.from(job.acc.subarray(0, jobRows));
      for (const chunk of [0, 2, 3, 4]) {
        const [from, to] = chunkRowsOf(job, chunk);
        sums.set(own.subarray(from, to), from);
      }
      const margins = new Float64Array(jobRows);
      model.finishBatch(sums, jobRows, margins);
      const expectedMargins = Float64Array.from(model.predictMargin(matrix, jobRows, model.numFeatures));
      assertSameBits(margins, expectedMargins, 'reclaimed chunks');
      assert.equal(pool.open, true, 'a late worker is not a failed one');
    } finally {
      await pool.close();
    }
  });

  test('while a batch is in flight: its scores are right whichever way it ends, and later batches too', async () => {
    const failures: string[] = [];
    const parallel = new ParallelEnsemble(model, {
      threads: 3,
      onFailure: (reason) => failures.push(reason),
    });
    try {
      assertSameBits(await parallel.predict(matrix, rows, model.numFeatures), expected, 'before');
      const inFlight = parallel.predict(matrix, rows, model.numFeatures);
      const stopped = parallel.pool?.workers[0]?.terminate();
      assertSameBits(await inFlight, expected, 'the batch in flight');
      await stopped;
      assert.equal(parallel.pool?.open, false);
      assertSameBits(await parallel.predict(matrix, rows, model.numFeatures), expected, 'after');
      assert.equal(parallel.stats.parallel, 2);
      assert.equal(parallel.stats.single, 1, 'later batches stay on the caller');
      assert.equal(failures.length, 1);
    } finally {
      await parallel.close();
    }
  });

  test('that cannot even start (a crash at load): batches fall back, with the reason', async () => {
    const failures: string[] = [];
    const parallel = new ParallelEnsemble(model, { threads: 2, onFailure: (r) => failures.push(r) });
    try {
      parallel.start();
      const worker = parallel.pool?.workers[0];
      assert.ok(worker);
      // An uncaught error in the worker: as if its module failed to load.
      worker.postMessage({ id: 1, control: 'not shared memory' });
      // Ref'd (the pool unrefs its workers) so that the test's process waits for the exit; not
      // events.once, which rejects on the 'error' event that comes first.
      worker.ref();
      await new Promise((resolve) => worker.once('exit', resolve));
      assert.equal(parallel.pool?.open, false);
      assertSameBits(await parallel.predict(matrix, rows, model.numFeatures), expected, 'fallback');
      assert.equal(parallel.stats.single, 1);
      assert.match(failures[0] as string, /a scoring thread failed: /);
    } finally {
      await parallel.close();
    }
  });
});

describe('MODEL_THREADS', () => {
  test('defaults to the cores, at most 4; 1 and whole numbers are accepted', () => {
    assert.equal(loadConfig({}).MODEL_THREADS, defaultModelThreads());
    assert.ok(defaultModelThreads() >= 1 && defaultModelThreads() <= 4);
    assert.equal(loadConfig({ MODEL_THREADS: '1' }).MODEL_THREADS, 1);
    assert.equal(loadConfig({ MODEL_THREADS: ' 6 ' }).MODEL_THREADS, 6);
  });

  test('a bad value stops the start with a message naming it', () => {
    for (const [value, reason] of [
      ['0', /MODEL_THREADS=0: .*1/],
      ['-2', /MODEL_THREADS="-2": expected a whole number/],
      ['two', /MODEL_THREADS="two": expected a whole number/],
      ['1.5', /MODEL_THREADS="1.5": expected a whole number/],
      ['1000', /MODEL_THREADS=1000: .*64/],
    ] as const) {
      assert.throws(
        () => loadConfig({ MODEL_THREADS: value }),
        (error: Error) => error instanceof ConfigError && reason.test(error.message),
        value,
      );
    }
  });
});
