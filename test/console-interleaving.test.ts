/**
 * The console's Compare view showing an interleaved page with its attribution, in a real headless
 * Chromium, against the template's shop with an interleaving experiment
 * (test/fixtures/interleaving/console-app.ts) on a throwaway redis-server: side A forces the
 * experiment off, side B forces it on; what B shows (who placed each item, where each ranker had
 * it) is checked against what the API answers the same request. Pages may reach 127.0.0.1 only.
 * The screenshot goes to test-results/console/compare-interleaved.png. Needs `npm run build`.
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { type TestApp, testApp } from 'rankd/testing';
import app from './fixtures/interleaving/console-app.js';
import { type ConsoleBrowser, startConsoleBrowser } from './helpers/console-browser.js';

const SAMPLE_DATA = new URL('../template/', import.meta.url);

/** Ten candles for "candle". */
const REQUEST = {
  request_id: 'console-interleaved-1',
  query: { query: 'candle' },
  candidates: ['p1', 'p2', 'p3', 'p4', 'p5', 'p6', 'p7', 'p8', 'p9', 'p10'].map((product_id) => ({
    product_id,
  })),
  user_page_size: 10,
};

interface Interleaved {
  ranked_candidates: Array<{
    candidate_id: string;
    explanation: {
      interleaving: { ranker: string; control_position: number | null; challenger_position: number | null };
    };
  }>;
  explanation: { interleaving: { experiment_id: string; rankers: Record<string, { model: string }> } };
}

let shop: TestApp;
let browser: ConsoleBrowser;
let base: string;

before(async () => {
  [shop, browser] = await Promise.all([testApp(app, { sampleData: SAMPLE_DATA }), startConsoleBrowser()]);
  await shop.server.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(shop.server.server.address() as AddressInfo).port}`;
});

after(async () => {
  await browser?.close();
  await shop?.close();
});

test('the Compare view shows an interleaved page: which ranker placed each item, and where each had it', async () => {
  const response = await fetch(`${base}/api/v1/ranking`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ...REQUEST, explain: true, overrides: { variants: { duel: 'interleaved' } } }),
  });
  assert.equal(response.status, 200, await response.clone().text());
  const api = (await response.json()) as Interleaved;
  assert.equal(api.explanation.interleaving.rankers.challenger?.model, 'CheapestFirst');
  const teams = new Set(api.ranked_candidates.map((c) => c.explanation.interleaving.ranker));
  assert.deepEqual(teams, new Set(['control', 'challenger']), 'both rankers placed items');

  const page = await browser.page();
  await page.goto(`${base}/console`);
  await page.locator('select[name=pipeline]').waitFor();
  await page.click('button[name=raw-json]');
  await page.fill('textarea[name=request-json]', JSON.stringify(REQUEST));
  await page.click('button[name=tab-Compare]');
  await page.fill('[data-side=a] input[name=variants]', 'duel=off');
  await page.fill('[data-side=b] input[name=variants]', 'duel=interleaved');
  await page.click('button[name=run-both]');
  await page.locator('[data-side=b] .interleaved tbody tr').first().waitFor();
  await page.locator('[data-side=a] tr.candidate').first().waitFor();

  assert.equal(await page.locator('[data-side=a] .interleaved').count(), 0, 'side A is not interleaved');
  const facts = (await page.locator('[data-side=b] .interleaved .facts').textContent()) ?? '';
  const placed = (team: string) =>
    api.ranked_candidates.filter((c) => c.explanation.interleaving.ranker === team).length;
  assert.match(facts, /^Interleaved page of duel: control RankingModel/);
  assert.match(
    facts,
    new RegExp(
      `control RankingModel[^,]* placed ${placed('control')}, challenger CheapestFirst 1 placed ${placed('challenger')}\\.`,
    ),
  );
  const rows = await page
    .locator('[data-side=b] .interleaved tbody tr')
    .evaluateAll((trs) =>
      trs.map((tr) => [
        tr.getAttribute('data-candidate'),
        tr.getAttribute('data-ranker'),
        tr.querySelector('.ranker')?.textContent,
        tr.querySelector('.control-position')?.textContent,
        tr.querySelector('.challenger-position')?.textContent,
      ]),
    );
  assert.deepEqual(
    rows,
    api.ranked_candidates.map((c) => {
      const { ranker, control_position, challenger_position } = c.explanation.interleaving;
      return [
        c.candidate_id,
        ranker,
        ranker,
        String(control_position ?? '—'),
        String(challenger_position ?? '—'),
      ];
    }),
  );
  await browser.screenshot(page, 'compare-interleaved');
  await page.close();
  assert.deepEqual(browser.blocked, [], 'the console asked for something beyond this machine');
});
