/**
 * The training guide's simulated shop (scripts/simulate-shop.ts), run short: shoppers' events →
 * `rankd train --promote` → the server reloads the trained model; and the guide's output block
 * is what the script prints (numbers aside: the guide's run is longer).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { simulateShop } from '../scripts/simulate-shop.js';
import { ensureBuilt, PACKAGE_ROOT } from './helpers/package-build.js';

/** A line with its numbers (and the time of --until) blanked: what any run of the script shares. */
function shape(line: string): string {
  return line.replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, '<time>').replace(/\d+(\.\d+)?/g, '#');
}

/** The lines of the guide's block that shows the script's run. */
function guideBlock(): string[] {
  const guide = readFileSync(`${PACKAGE_ROOT}/docs/guides/train-a-model.md`, 'utf8');
  const start = guide.indexOf('$ node --import tsx scripts/simulate-shop.ts\n');
  assert.ok(start > 0, 'the guide shows the script run');
  return guide.slice(start, guide.indexOf('```', start)).trim().split('\n').slice(1);
}

test('a short simulated run trains and promotes a model the server then serves; the guide shows its output', async () => {
  await ensureBuilt();
  const lines: string[] = [];
  // --force: 300 requests' validation is too small to say which model is better.
  const result = await simulateShop({
    requests: 300,
    fresh: 60,
    force: true,
    log: (line) => lines.push(line),
  });
  assert.ok(result.feedback.click > 0);
  for (const figures of [result.handWeighted, result.trained]) {
    assert.ok(figures.ndcg > 0 && figures.ndcg <= 1, JSON.stringify(figures));
    assert.ok(Number.isFinite(figures.clicksPerRequest));
  }
  // The trained model ranks differently from the hand-weighted one: the server reloaded it.
  assert.notEqual(result.trained.ndcg, result.handWeighted.ndcg);
  const ran = lines.map((line) => shape(line.replace(' --force', '').replace(' (--force)', '')));
  assert.deepEqual(ran, guideBlock().map(shape));
});
