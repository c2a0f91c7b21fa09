/** The primary's restart back-off (pure) and `--workers` parsing. */
import assert from 'node:assert/strict';
import { availableParallelism } from 'node:os';
import { describe, test } from 'node:test';
import { MAX_WORKERS, parseWorkers } from '../src/cli/options.js';
import { RestartPolicy } from '../src/cli/workers/restart-policy.js';

describe('RestartPolicy', () => {
  test('a worker that ran past rapidExitMs is replaced at once', () => {
    const policy = new RestartPolicy();
    for (let i = 0; i < 20; i++)
      assert.deepEqual(policy.onExit(60_000), { restart: true, delayMs: 0, rapidExits: 0 });
  });

  test('rapid crashes wait longer each time, then give up at maxRapidExits', () => {
    const policy = new RestartPolicy({
      rapidExitMs: 5000,
      maxRapidExits: 5,
      firstDelayMs: 1000,
      maxDelayMs: 15_000,
    });
    const delays = [1, 2, 3, 4].map(() => policy.onExit(100));
    assert.deepEqual(
      delays.map((d) => (d.restart ? d.delayMs : -1)),
      [1000, 2000, 4000, 8000],
    );
    assert.deepEqual(policy.onExit(100), { restart: false, rapidExits: 5 });
  });

  test('the delay is capped at maxDelayMs', () => {
    const policy = new RestartPolicy({ maxRapidExits: 100, firstDelayMs: 1000, maxDelayMs: 3000 });
    const last = Array.from({ length: 10 }, () => policy.onExit(0)).at(-1);
    assert.deepEqual(last, { restart: true, delayMs: 3000, rapidExits: 10 });
  });

  test('a long-lived exit or a stable worker resets the count of rapid crashes', () => {
    const policy = new RestartPolicy({ maxRapidExits: 3 });
    policy.onExit(10);
    policy.onExit(10);
    policy.onStable();
    assert.deepEqual(policy.onExit(10), { restart: true, delayMs: 1000, rapidExits: 1 });
    policy.onExit(10);
    policy.onExit(10_000);
    assert.deepEqual(policy.onExit(10), { restart: true, delayMs: 1000, rapidExits: 1 });
  });
});

describe('--workers', () => {
  test('a count, or auto for the available cores', () => {
    assert.equal(parseWorkers('1'), 1);
    assert.equal(parseWorkers('8'), 8);
    assert.equal(parseWorkers('auto'), Math.min(availableParallelism(), MAX_WORKERS));
  });

  test('anything else is a usage error', () => {
    for (const bad of ['0', '-1', '', '2.5', 'two', '0x2', String(MAX_WORKERS + 1), '1e2']) {
      assert.throws(() => parseWorkers(bad), /expected a number of workers from 1 to \d+, or auto/, bad);
    }
  });
});
