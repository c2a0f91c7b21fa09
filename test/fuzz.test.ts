/**
 * The fuzz run's short form (the full one is `npm run fuzz`, 10,000 requests, same code): 800
 * hostile requests with a fixed seed to every route of the template app, served by the built CLI
 * on its own Redis. Nothing may answer 5xx, hang, stop the server, answer an error outside rankd's
 * `{detail, error_code}` shape, accept what must be refused, or change a sentinel.
 *
 * The seed is fixed so that a failure here is the same request every time: the assertion message
 * holds the report, with each failing request in a form that can be sent again.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { reportLines } from '../scripts/fuzz/report.js';
import { runFuzz } from '../scripts/fuzz/run-fuzz.js';
import { startOwnTarget, type Target } from '../scripts/fuzz/target.js';

const COUNT = 800;
const SEED = 20261125;

let target: Target;

before(async () => {
  target = await startOwnTarget(() => undefined);
});

after(async () => {
  await target?.stop();
});

test(`fuzz: ${COUNT} hostile requests (seed ${SEED}) — no 5xx, no hang, rankd's error shape, sentinels intact`, {
  timeout: 300_000,
}, async (t) => {
  const report = await runFuzz(target, { count: COUNT, seed: SEED, maxDurationMs: 180_000 });
  const lines = reportLines(report, target.base);
  for (const line of lines.slice(0, 40)) t.diagnostic(line);
  assert.ok(report.ok, lines.join('\n'));
  assert.equal(report.sent, COUNT);
});
