/**
 * The console (/console) in a real headless Chromium, against the template app (and the same app with
 * an experiment choosing its model: test/fixtures/console/variant-app.ts) with its sample
 * data on a throwaway redis-server. Every figure the page shows is checked against what the API
 * answers the same request. Pages may reach 127.0.0.1 only: any other request fails the test.
 * Screenshots go to test-results/console/. Needs `npm run build` (the console's assets and the
 * `rankd` the template imports).
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, afterEach, before, test } from 'node:test';
import type { Locator, Page } from 'playwright-core';
import { type TestApp, testApp } from 'rankd/testing';
import template from '../template/pipelines/main.js';
import variantApp from './fixtures/console/variant-app.js';
import { type ConsoleBrowser, startConsoleBrowser } from './helpers/console-browser.js';

const SAMPLE_DATA = new URL('../template/', import.meta.url);
const API_KEY = 'console-test-key';

/** Ten candles for "candle": the featured brand's boost reorders some of them. */
const REQUEST = {
  request_id: 'console-1',
  query: { query: 'candle' },
  candidates: ['p1', 'p2', 'p3', 'p4', 'p5', 'p6', 'p7', 'p8', 'p9', 'p10'].map((product_id) => ({
    product_id,
  })),
  user_page_size: 10,
};

interface Ranked {
  ranked_candidates: Array<{
    candidate_id: string;
    explanation: {
      model: { name: string; contributions: Record<string, number> };
      business_logic: Array<{ step: string; description: string }>;
    };
  }>;
  explanation?: { variants: Record<string, string> };
}

let shop: TestApp;
let keyed: TestApp;
/** The shop with an experiment choosing its model (test/fixtures/console/variant-app.ts). */
let experiment: TestApp;
let browser: ConsoleBrowser;

async function listen(app: TestApp): Promise<string> {
  await app.server.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(app.server.server.address() as AddressInfo).port}`;
}

let base: string;
let keyedBase: string;
let experimentBase: string;

before(async () => {
  [shop, keyed, experiment, browser] = await Promise.all([
    testApp(template, { sampleData: SAMPLE_DATA }),
    testApp(template, { sampleData: SAMPLE_DATA, settings: { API_KEYS: API_KEY } }),
    testApp(variantApp, { sampleData: SAMPLE_DATA }),
    startConsoleBrowser(),
  ]);
  base = await listen(shop);
  keyedBase = await listen(keyed);
  experimentBase = await listen(experiment);
});

after(async () => {
  await browser?.close();
  await Promise.all([shop?.close(), keyed?.close(), experiment?.close()]);
});

afterEach(() => {
  assert.deepEqual(browser.blocked, [], 'the console asked for something beyond this machine');
});

/** A node's text (textContent: what the page holds, laid out or not). */
async function text(locator: Locator): Promise<string> {
  return (await locator.textContent()) ?? '';
}

/** The console of the app at `at` (the template's by default) with the request typed as raw JSON. */
async function consoleWith(request: unknown, at = base): Promise<Page> {
  const page = await browser.page();
  await page.goto(`${at}/console`);
  await page.locator('select[name=pipeline]').waitFor();
  await page.click('button[name=raw-json]');
  await page.fill(
    'textarea[name=request-json]',
    typeof request === 'string' ? request : JSON.stringify(request),
  );
  return page;
}

/** The candidate ids of the ranked page the console shows, in order. */
function shownIds(page: Page): Promise<Array<string | null>> {
  return page
    .locator('tr.candidate')
    .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-candidate')));
}

test('the console is served by rankd, with assets from the server only', async () => {
  const response = await fetch(`${base}/console`);
  assert.equal(response.status, 200);
  const html = await response.text();
  const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] ?? '');
  assert.ok(assets.length >= 1, html);
  for (const asset of assets) {
    assert.match(asset, /^\/console\/assets\//, 'every asset comes from /console/assets/');
    assert.equal((await fetch(`${base}${asset}`)).status, 200, asset);
  }
  assert.equal((await fetch(`${base}/console/assets/..%2Fpackage.json`)).status, 404);
});

test('with API keys on, the page and its assets are public and the app description needs a key', async () => {
  const html = await (await fetch(`${keyedBase}/console`)).text();
  const script = /src="([^"]+)"/.exec(html)?.[1];
  assert.ok(script, html);
  assert.equal((await fetch(`${keyedBase}${script}`)).status, 200);
  const refused = await fetch(`${keyedBase}/console/app.json`);
  assert.equal(refused.status, 401);
  assert.equal(((await refused.json()) as { error_code: string }).error_code, 'RANKD_UNAUTHORIZED');
  const described = await fetch(`${keyedBase}/console/app.json`, { headers: { 'x-api-key': API_KEY } });
  assert.equal(described.status, 200);
  const body = (await described.json()) as { entity_types: Array<{ name: string; id_field: string }> };
  assert.ok(body.entity_types.some((t) => t.name === 'product' && t.id_field === 'product_id'));
  const missing = await fetch(`${keyedBase}/console/assets/nothing.js`);
  assert.equal(missing.status, 404);
  assert.equal(((await missing.json()) as { error_code: string }).error_code, 'RANKD_NOT_FOUND');
});

test('runs a ranking and shows the first candidate’s explanation', async () => {
  const expected = (await shop.post('/api/v1/ranking', { ...REQUEST, explain: true })).json() as Ranked;
  const page = await consoleWith(REQUEST);
  await page.click('button[name=run]');
  await page.locator('tr.candidate').first().waitFor();
  assert.deepEqual(
    await shownIds(page),
    expected.ranked_candidates.map((c) => c.candidate_id),
  );
  await page.locator('tr.candidate').first().click();
  await page.locator('.explanation .bar-row').first().waitFor();
  const first = expected.ranked_candidates[0]?.explanation;
  assert.ok(first);
  const bars = await page.locator('.explanation .bar-name').allTextContents();
  const byMagnitude = Object.entries(first.model.contributions)
    .sort((a, b) => Math.abs(b[1]) - Math.abs(a[1]))
    .map(([name]) => name);
  assert.deepEqual(bars, byMagnitude);
  assert.match(await text(page.locator('.explanation .model h4').first()), new RegExp(first.model.name));
  const steps = await page.locator('.explanation .steps tbody tr td:nth-child(2)').allTextContents();
  assert.deepEqual(
    steps,
    first.business_logic.map((s) => s.description),
  );
  await page.click('button[name=attributes]');
  await page.locator('.explanation .attributes').waitFor();
  assert.match(await text(page.locator('.explanation .attributes')), /title/);
  await browser.screenshot(page, 'rank-explanation');
  await page.close();
});

test('writes the request in the form, with candidates picked from the index', async () => {
  const page = await browser.page();
  await page.goto(`${base}/console`);
  await page.locator('select[name=pipeline]').waitFor();
  await page.fill('input[name=field-request_id]', 'console-form');
  await page.fill('input[name=field-query]', 'candle');
  await page.fill('input[name=index-lookup]', 'p1 p2 p3 not-indexed');
  await page.click('text=Find in index');
  await page.locator('ul.found li').first().waitFor();
  const found = await page.locator('ul.found li').allTextContents();
  assert.deepEqual(
    found.map((line) => line.split(' ')[0]),
    ['p1', 'p2', 'p3'],
  );
  await page.click('button[name=use-picked]');
  await page.click('button[name=raw-json]');
  const written = JSON.parse(await page.inputValue('textarea[name=request-json]'));
  assert.deepEqual(written.query, { query: 'candle' });
  assert.equal(written.request_id, 'console-form');
  assert.deepEqual(written.candidates, [{ product_id: 'p1' }, { product_id: 'p2' }, { product_id: 'p3' }]);
  const expected = (await shop.post('/api/v1/ranking', written)).json() as Ranked;
  await page.click('text=Form');
  await page.click('button[name=run]');
  await page.locator('tr.candidate').first().waitFor();
  assert.deepEqual(
    await shownIds(page),
    expected.ranked_candidates.map((c) => c.candidate_id),
  );
  await browser.screenshot(page, 'rank-form');
  await page.close();
});

test('compares two runs, one with a business-logic step turned off', async () => {
  const a = (await shop.post('/api/v1/ranking', REQUEST)).json() as Ranked;
  const b = (
    await shop.post('/api/v1/ranking', { ...REQUEST, overrides: { skip_business_logic: ['FeaturedBrand'] } })
  ).json() as Ranked;
  const rank = (body: Ranked) =>
    new Map(body.ranked_candidates.map((c, i) => [c.candidate_id, String(i + 1)]));
  const [ranksA, ranksB] = [rank(a), rank(b)];
  assert.ok(
    [...ranksA].some(([id, r]) => ranksB.get(id) !== r),
    'the step changes the order of this request',
  );
  const page = await consoleWith(REQUEST);
  await page.click('button[name=tab-Compare]');
  await page.click('button[name=run-both]');
  const skip = page.locator('[data-side=b] input[name=skip-FeaturedBrand]');
  await skip.check();
  await page.click('button[name=run-both]');
  await page.locator('[data-side=b] .facts', { hasText: 'FeaturedBrand' }).waitFor();
  const rows = await page
    .locator('table.changes tbody tr')
    .evaluateAll((trs) =>
      trs.map((tr) => [
        tr.getAttribute('data-candidate'),
        tr.querySelector('.rank-a')?.textContent,
        tr.querySelector('.rank-b')?.textContent,
      ]),
    );
  assert.equal(rows.length, ranksA.size);
  for (const [id, shownA, shownB] of rows) {
    assert.equal(shownA, ranksA.get(id ?? ''), `run A's rank of ${id}`);
    assert.equal(shownB, ranksB.get(id ?? ''), `run B's rank of ${id}`);
  }
  await browser.screenshot(page, 'compare');
  await page.close();
});

test('compares two variants of an experiment, each side forcing one', async () => {
  // The same two requests the console will send, straight to the API.
  const ask = async (variant: string) => {
    const response = await fetch(`${experimentBase}/api/v1/ranking`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...REQUEST, explain: true, overrides: { variants: { ranker: variant } } }),
    });
    assert.equal(response.status, 200, await response.clone().text());
    return (await response.json()) as Ranked;
  };
  const [a, b] = await Promise.all([ask('control'), ask('cheapest')]);
  assert.deepEqual(a.explanation?.variants, { ranker: 'control' });
  assert.deepEqual(b.explanation?.variants, { ranker: 'cheapest' });
  const order = (body: Ranked) => body.ranked_candidates.map((c) => c.candidate_id);
  assert.notDeepEqual(order(a), order(b), 'the two variants order the candidates differently');
  assert.deepEqual([...order(a)].sort(), [...order(b)].sort(), 'both rank the same candidates');
  const rank = (body: Ranked) => new Map(order(body).map((id, i) => [id, i + 1]));
  const [ranksA, ranksB] = [rank(a), rank(b)];

  const page = await consoleWith(REQUEST, experimentBase);
  await page.click('button[name=tab-Compare]');
  await page.fill('[data-side=a] input[name=variants]', 'ranker=control');
  await page.fill('[data-side=b] input[name=variants]', 'ranker=cheapest');
  await page.click('button[name=run-both]');
  await page.locator('table.changes tbody tr').first().waitFor();

  // What each side says its variants were: the API's explanation of the same request.
  for (const [side, body] of [
    ['a', a],
    ['b', b],
  ] as const) {
    const variants = Object.entries(body.explanation?.variants ?? {})
      .map(([id, variant]) => `${id}=${variant}`)
      .join(', ');
    assert.match(
      await text(page.locator(`[data-side=${side}] .facts`)),
      new RegExp(`^Variants: ${variants}\\. `),
    );
    const shown = await page
      .locator(`[data-side=${side}] tr.candidate`)
      .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-candidate')));
    assert.deepEqual(shown, order(body), `side ${side}'s ranking`);
    // The first candidate's explanation names the model its variant scored with.
    await page.locator(`[data-side=${side}] tr.candidate`).first().click();
    const model = page.locator(`[data-side=${side}] .explanation .model h4`).first();
    await model.waitFor();
    assert.match(
      await text(model),
      new RegExp(`^Model ${body.ranked_candidates[0]?.explanation.model.name}:`),
    );
  }

  const rows = await page
    .locator('table.changes tbody tr')
    .evaluateAll((trs) =>
      trs.map((tr) => [
        tr.getAttribute('data-candidate') ?? '',
        tr.querySelector('.rank-a')?.textContent,
        tr.querySelector('.rank-b')?.textContent,
        tr.querySelector('td:nth-child(4)')?.textContent,
      ]),
    );
  assert.deepEqual(rows.map(([id]) => id).sort(), [...ranksA.keys()].sort());
  for (const [id, shownA, shownB, change] of rows) {
    const [from, to] = [ranksA.get(id), ranksB.get(id)];
    assert.ok(from !== undefined && to !== undefined, id);
    assert.equal(shownA, String(from), `A's rank of ${id}`);
    assert.equal(shownB, String(to), `B's rank of ${id}`);
    assert.equal(
      change,
      from === to ? '=' : from > to ? `▲${from - to}` : `▼${to - from}`,
      `${id} from A to B`,
    );
  }
  await browser.screenshot(page, 'compare-variants');
  await page.close();
});

test('looks up an entity: indexed attributes and feature rows with freshness', async () => {
  const entity = (
    await shop.post('/api/v1/entities/get', { entity_type: 'product', entity_ids: ['p1'] })
  ).json().entities.p1 as Record<string, unknown>;
  const rows = (
    await shop.post('/api/v1/features/get', { feature_view: 'product_stats', entity_ids: ['p1'] })
  ).json();
  const page = await browser.page();
  await page.goto(`${base}/console`);
  await page.click('button[name=tab-Entity]');
  await page.selectOption('select[name=entity-type]', 'product');
  await page.fill('input[name=entity-id]', 'p1');
  await page.click('form.lookup button[type=submit]');
  await page.locator('.entity .attributes').waitFor();
  const attributes = await page
    .locator('.entity .attributes tr')
    .evaluateAll((trs) =>
      trs.map((tr) => [tr.querySelector('th')?.textContent, tr.querySelector('td')?.textContent]),
    );
  assert.deepEqual(
    Object.fromEntries(attributes),
    Object.fromEntries(
      Object.entries(entity).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]),
    ),
  );
  const view = page.locator('.feature-view[data-view=product_stats]');
  await view.waitFor();
  assert.equal(await text(view.locator('.state')), rows.results[0].views.product_stats.state);
  assert.match(
    await text(view.locator('h3')),
    new RegExp(rows.results[0].views.product_stats.event_timestamp),
  );
  const shown = await view.locator('table.features th').allTextContents();
  assert.deepEqual(shown, Object.keys(rows.results[0].values));
  await browser.screenshot(page, 'entity');
  await page.close();
});

test('shows a bad request’s error as the API gave it', async () => {
  const bad = { request_id: 'console-bad', candidates: 5 };
  const expected = await shop.post('/api/v1/ranking', { ...bad, explain: true });
  assert.equal(expected.statusCode, 422);
  const page = await consoleWith(bad);
  await page.click('button[name=run]');
  const box = page.locator('.error');
  await box.waitFor();
  assert.match(await text(box.locator('strong')), /HTTP 422/);
  assert.deepEqual(JSON.parse(await text(box.locator('pre'))), expected.json());
  await browser.screenshot(page, 'bad-request');
  // Text that is not JSON goes as it is: rankd's parser error, also as given.
  const unparsable = await shop.server.inject({
    method: 'POST',
    url: '/api/v1/ranking',
    headers: { 'content-type': 'application/json' },
    payload: '{"request_id": ',
  });
  await page.fill('textarea[name=request-json]', '{"request_id": ');
  await page.click('button[name=run]');
  await page.locator('.error strong', { hasText: `HTTP ${unparsable.statusCode}` }).waitFor();
  assert.deepEqual(JSON.parse(await text(box.locator('pre'))), unparsable.json());
  await page.close();
});

test('shows request rates and stage percentiles read from /metrics', async () => {
  await shop.post('/api/v1/ranking', REQUEST);
  const metrics = (await shop.server.inject({ url: '/metrics' })).body;
  const stages = [
    ...metrics.matchAll(/rankd_pipeline_stage_duration_seconds_count\{pipeline="([^"]+)",stage="([^"]+)"\}/g),
  ].map((m) => `${m[1]} · ${m[2]}`);
  assert.ok(stages.length > 0, metrics);
  const page = await browser.page();
  await page.goto(`${base}/console`);
  await page.click('button[name=tab-Live]');
  await page.locator('table.stages tbody tr').first().waitFor();
  assert.deepEqual((await page.locator('table.stages tbody th').allTextContents()).sort(), stages.sort());
  const hydrate = page.locator('table.stages tbody tr', { hasText: '· hydrate' });
  assert.match(await text(hydrate.locator('td').nth(1)), /^[\d.e-]+ ms$/);
  // Rates need two reads of /metrics: the row appears with the second.
  await page.locator('table.rates tr', { hasText: '/api/v1/ranking' }).waitFor();
  assert.match(await text(page.locator('table.rates tr', { hasText: '/api/v1/ranking' })), /\d/);
  await browser.screenshot(page, 'live');
  await page.close();
});

test('asks for an API key when keys are on, and sends it', async () => {
  const page = await browser.page();
  await page.goto(`${keyedBase}/console`);
  const prompt = page.locator('form.key-prompt');
  await prompt.waitFor();
  await browser.screenshot(page, 'api-key');
  await page.fill('input[name=api-key]', 'not-the-key');
  await page.click('form.key-prompt button[type=submit]');
  await prompt.locator('text=refused').waitFor();
  await page.fill('input[name=api-key]', API_KEY);
  await page.click('form.key-prompt button[type=submit]');
  await page.locator('h1', { hasText: 'shop' }).waitFor();
  assert.equal(await prompt.count(), 0);
  assert.equal(await page.evaluate("sessionStorage.getItem('rankd-console-api-key')"), API_KEY);
  await page.click('button[name=raw-json]');
  await page.fill('textarea[name=request-json]', JSON.stringify(REQUEST));
  await page.click('button[name=run]');
  await page.locator('tr.candidate').first().waitFor();
  assert.equal(await page.locator('tr.candidate').count(), REQUEST.candidates.length);
  await page.close();
});
