/**
 * The chaos test's short form (the full one is `npm run chaos`, same code): 25 s of uploads at
 * concurrency 16 against `rankd run --workers 2`, redis-server SIGKILLed and restarted twice, a
 * worker SIGKILLed once; then every acknowledged upload must read back exactly, failures must be
 * 503s (never a 500, never a hang), the service must survive and memory stay bounded.
 *
 * Redis runs as `rankd redis --durable` (appendfsync always): under that setting "nothing
 * acknowledged is lost" is a promise, so a loss is a bug. The default setting (everysec) leaves a
 * window of up to 2 s in which Redis acknowledges writes it has not yet handed to the AOF file;
 * `npm run chaos` runs that one by default and says so (docs/guides/deploy.md, "Durability").
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { durabilityNote, printReport } from '../scripts/chaos/print-report.js';
import { runChaos } from '../scripts/chaos/run-chaos.js';

test('chaos: Redis SIGKILLed twice and a worker once during uploads; nothing acknowledged is lost', {
  timeout: 300_000,
}, async (t) => {
  const report = await runChaos({ durationMs: 25_000, durable: true });
  t.diagnostic(durabilityNote(true));
  for (const line of report.timeline) t.diagnostic(line);
  printReport(report, (line) => {
    if (line.length > 0) t.diagnostic(line);
  });
  assert.equal(report.appendfsync, 'always', 'the Redis under test fsyncs every write');
  assert.deepEqual(report.problems, []);
  assert.equal(report.readBack.lost, 0);
  assert.ok(report.readBack.acknowledged > 0);
});
