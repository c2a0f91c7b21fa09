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
import { defineEntity, ProductEntity, Type } from 'rankd';
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
      model: {
        name: string;
        contributions: Record<string, number>;
        fallback?: { model: string; reason: string };
      };
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
  // This server has no read cache: nothing is marked as read from one, and no answer says so.
  assert.equal(await page.locator('.entity .from-cache').count(), 0);
  const got = await shop.post('/api/v1/entities/get', { entity_type: 'product', entity_ids: ['p1'] });
  assert.equal(got.headers['x-rankd-from-cache'], undefined);
  await browser.screenshot(page, 'entity');
  await page.close();
});

test('marks an entity and a feature row the read cache served (READ_CACHE_MB)', async () => {
  const cached = await testApp(template, { sampleData: SAMPLE_DATA, settings: { READ_CACHE_MB: '4' } });
  try {
    const cache = cached.server.rankd.redis.readCache;
    assert.ok(cache);
    const deadline = Date.now() + 20_000;
    while (!cache.enabled) {
      if (Date.now() > deadline) throw new Error('the read cache did not start serving within 20 s');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const fromCache = async () =>
      (
        await cached.post('/api/v1/features/get', { feature_view: 'product_stats', entity_ids: ['p1'] })
      ).json().results[0].views.product_stats.from_cache;
    // Read twice (stored on the second read), then served from the cache.
    assert.equal(await fromCache(), undefined);
    await fromCache();
    assert.equal(await fromCache(), true);
    const entityFromCache = async () =>
      (await cached.post('/api/v1/entities/get', { entity_type: 'product', entity_ids: ['p1', 'p2'] }))
        .headers['x-rankd-from-cache'];
    assert.equal(await entityFromCache(), '0');
    await entityFromCache();
    assert.equal(await entityFromCache(), '2');
    // p1 alone: the header counts the one entity, read from the cache, so the console marks it.
    const page = await browser.page();
    await page.goto(`${await listen(cached)}/console`);
    await page.click('button[name=tab-Entity]');
    await page.selectOption('select[name=entity-type]', 'product');
    await page.fill('input[name=entity-id]', 'p1');
    await page.click('form.lookup button[type=submit]');
    const view = page.locator('.feature-view[data-view=product_stats]');
    await view.waitFor();
    assert.equal((await text(view.locator('.from-cache'))).trim(), 'from cache');
    assert.equal((await text(page.locator('.entity > h3 .from-cache'))).trim(), 'from cache');
    await browser.screenshot(page, 'entity-from-cache');
    await page.close();
  } finally {
    await cached.close();
  }
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

/** Ranks once, then reads /metrics: each pipeline stage it times, as `pipeline · stage`. */
async function stagesAfterARanking(): Promise<string[]> {
  await shop.post('/api/v1/ranking', REQUEST);
  const metrics = (await shop.server.inject({ url: '/metrics' })).body;
  const stages = [
    ...metrics.matchAll(/rankd_pipeline_stage_duration_seconds_count\{pipeline="([^"]+)",stage="([^"]+)"\}/g),
  ].map((m) => `${m[1]} · ${m[2]}`);
  assert.ok(stages.length > 0, metrics);
  return stages;
}

test('shows request rates and stage percentiles read from /metrics', async () => {
  const stages = await stagesAfterARanking();
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

/** The titles of `ids` as the index holds them (the template's products: their `title`). */
async function titlesOf(ids: readonly string[]): Promise<Map<string, string>> {
  const answer = await shop.post('/api/v1/entities/get', { entity_type: 'product', entity_ids: ids });
  const entities = answer.json().entities as Record<string, { title: string }>;
  return new Map(ids.map((id) => [id, entities[id]?.title ?? '']));
}

/** Each row's id and the title shown beside it. */
function idsAndTitles(rows: Locator): Promise<Array<[string | null, string | undefined]>> {
  return rows.evaluateAll((trs) =>
    trs.map((tr): [string | null, string | undefined] => [
      tr.getAttribute('data-candidate'),
      tr.querySelector('.title')?.textContent ?? undefined,
    ]),
  );
}

test('an entity type names its title field, else its first text field; the app description says which', async () => {
  const nullable = <T extends Type.TSchema>(t: T) => Type.Union([t, Type.Null()]);
  const Shelf = defineEntity({
    name: 'shelf',
    fields: { width: Type.Number(), label: nullable(Type.String()), code: Type.String() },
  });
  assert.equal(Shelf.titleField, 'label');
  assert.equal(Shelf.extend({ titleField: 'code' }).titleField, 'code');
  assert.equal(Shelf.extend({ titleField: 'code' }).extend({ name: 'rack' }).titleField, 'code');
  assert.equal(defineEntity({ name: 'bare', fields: { n: Type.Number() } }).titleField, undefined);
  assert.equal(ProductEntity.titleField, undefined);
  const described = (await shop.server.inject({ url: '/console/app.json' })).json();
  const product = described.entity_types.find((t: { name: string }) => t.name === 'product');
  assert.deepEqual(product, { name: 'product', id_field: 'product_id', title_field: 'title' });
});

test('rows show each candidate’s title beside its id', async () => {
  const expected = (await shop.post('/api/v1/ranking', REQUEST)).json() as Ranked;
  const ids = expected.ranked_candidates.map((c) => c.candidate_id);
  const titles = await titlesOf(ids);
  const page = await consoleWith(REQUEST);
  await page.click('button[name=run]');
  await page
    .locator('tr.candidate .title')
    .nth(ids.length - 1)
    .waitFor();
  assert.deepEqual(
    await idsAndTitles(page.locator('tr.candidate')),
    ids.map((id) => [id, titles.get(id)]),
  );
  // The form lists the request's candidates with their titles too.
  await page.click('text=Form');
  await page
    .locator('ul.candidate-titles li .title')
    .nth(REQUEST.candidates.length - 1)
    .waitFor();
  const listed = await idsAndTitles(page.locator('ul.candidate-titles li'));
  const requested = REQUEST.candidates.map((c) => c.product_id);
  const requestedTitles = await titlesOf(requested);
  assert.deepEqual(
    listed,
    requested.map((id) => [id, requestedTitles.get(id)]),
  );
  await browser.screenshot(page, 'titles');
  await page.close();
});

test('the Rank form starts from candidates found in the index, not made-up ids', async () => {
  const sampled = (await shop.server.inject({ url: '/console/sample-ids?entity_type=product' })).json();
  assert.equal(sampled.ids.length, 10);
  const page = await browser.page();
  await page.goto(`${base}/console`);
  await page.locator('ul.candidate-titles li .title').first().waitFor();
  await page.click('button[name=raw-json]');
  const written = JSON.parse(await page.inputValue('textarea[name=request-json]'));
  const ids = written.candidates.map((c: { product_id: string }) => c.product_id);
  assert.deepEqual(ids, sampled.ids);
  const found = (await shop.post('/api/v1/entities/get', { entity_type: 'product', entity_ids: ids })).json();
  assert.deepEqual(Object.keys(found.entities).sort(), [...ids].sort(), 'every candidate is in the index');
  // And it runs as it is: every candidate ranked.
  await page.click('button[name=run]');
  await page.locator('tr.candidate').first().waitFor();
  assert.deepEqual([...(await shownIds(page))].sort(), [...ids].sort());
  await page.click('text=Form');
  await browser.screenshot(page, 'rank-sampled');
  await page.close();
});

test('Compare: “Run both” sits above the results', async () => {
  const page = await consoleWith(REQUEST);
  await page.click('button[name=tab-Compare]');
  await page.click('button[name=run-both]');
  await page.locator('[data-side=b] tr.candidate').first().waitFor();
  const button = await page.locator('button[name=run-both]').boundingBox();
  assert.ok(button);
  for (const results of ['[data-side=a] table.ranking', '[data-side=b] table.ranking', 'table.changes']) {
    const box = await page.locator(results).boundingBox();
    assert.ok(box, results);
    assert.ok(button.y + button.height <= box.y, `the button is above ${results}`);
  }
  await page.close();
});

test('Compare: the model override is a list of the pipeline’s models', async () => {
  // What the API accepts: the names its 422 for an unknown model allows.
  const refused = await experiment.post('/api/v1/ranking', {
    ...REQUEST,
    overrides: { model: 'no-such-model' },
  });
  assert.equal(refused.statusCode, 422);
  const allowed = /allowed: ([^)]+)\)/.exec(JSON.stringify(refused.json()))?.[1]?.split(', ');
  assert.ok(allowed && allowed.length >= 2, JSON.stringify(refused.json()));
  const page = await consoleWith(REQUEST, experimentBase);
  await page.click('button[name=tab-Compare]');
  const options = page.locator('[data-side=b] select[name=model] option');
  await options.nth(allowed.length).waitFor({ state: 'attached' });
  const values = await options.evaluateAll((os) => os.map((o) => o.getAttribute('value')));
  assert.deepEqual(values, ['', ...allowed], 'the pipeline’s own model, then each one it may swap in');
  // Side B scores with the last of them: its explanation names it, as the API's does.
  const chosen = allowed.at(-1) as string;
  await page.selectOption('[data-side=b] select[name=model]', chosen);
  await page.click('button[name=run-both]');
  await page.locator('[data-side=b] tr.candidate').first().click();
  const heading = page.locator('[data-side=b] .explanation .model h4').first();
  await heading.waitFor();
  const api = (
    await experiment.post('/api/v1/ranking', { ...REQUEST, explain: true, overrides: { model: chosen } })
  ).json() as Ranked;
  assert.match(
    await text(heading),
    new RegExp(`^Model ${api.ranked_candidates[0]?.explanation.model.name}:`),
  );
  await browser.screenshot(page, 'compare-models');
  await page.close();
});

test('the explanation says when the model’s fallback scored (the template’s Ranker before it is trained)', async () => {
  const expected = (await shop.post('/api/v1/ranking', { ...REQUEST, explain: true })).json() as Ranked;
  const first = expected.ranked_candidates[0]?.explanation.model;
  assert.ok(first?.fallback, 'the template serves Ranker with no models/ranker.json: RankingModel scores');
  assert.equal(first.name, 'Ranker');
  assert.deepEqual(first.fallback, { model: 'RankingModel', reason: 'ranker.json does not exist yet' });
  const page = await consoleWith(REQUEST);
  await page.click('button[name=run]');
  await page.locator('tr.candidate').first().click();
  const said = page.locator('.explanation .model .fallback');
  await said.waitFor();
  assert.match(
    await text(said),
    new RegExp(`^Scored by ${first.fallback.model}, ${first.name}'s fallback: ${first.fallback.reason}\\.`),
  );
  await browser.screenshot(page, 'fallback');
  await page.close();
});

test('Live draws requests per second and p50/p99 per stage as time-series charts', async () => {
  const stages = await stagesAfterARanking();
  const page = await browser.page();
  await page.goto(`${base}/console`);
  await page.click('button[name=tab-Live]');
  const rates = page.locator('figure.chart[data-chart=rates]');
  // Traffic between reads, until the charts hold five points: each read adds one.
  for (let points = 0; points < 5; ) {
    await Promise.all(Array.from({ length: 1 + points }, () => shop.post('/api/v1/ranking', REQUEST)));
    await page.locator(`figure.chart[data-chart=rates]:not([data-points="${points}"])`).waitFor();
    points = Number(await rates.getAttribute('data-points'));
  }
  // One chart of every route the table lists, one line each.
  const routes = await page.locator('table.rates th').allTextContents();
  assert.ok(routes.includes('/api/v1/ranking'), routes.join());
  assert.deepEqual(
    (await rates.locator('.u-legend .u-series .u-label').allTextContents()).sort(),
    [...routes].sort(),
  );
  assert.equal(await rates.locator('canvas').count(), 1);
  // One chart per stage, each with its p50 and p99.
  const charts = page.locator('figure.chart[data-chart^="stage:"]');
  assert.deepEqual(
    (await charts.evaluateAll((fs) => fs.map((f) => f.getAttribute('data-chart')))).sort(),
    stages.map((stage) => `stage:${stage}`).sort(),
  );
  for (const chart of await charts.all()) {
    assert.deepEqual(await chart.locator('.u-legend .u-series .u-label').allTextContents(), ['p50', 'p99']);
    assert.equal(await chart.locator('canvas').count(), 1);
  }
  await browser.screenshot(page, 'live-charts');
  await page.close();
});

test('the console works under a strict Content-Security-Policy (no inline script or style)', async () => {
  const page = await browser.page();
  const refused: string[] = [];
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) refused.push(message.text());
  });
  // The page as rankd serves it, with the strictest policy the console should live with.
  await page.route(`${base}/console`, async (route) => {
    const served = await route.fetch();
    await route.fulfill({
      response: served,
      headers: {
        ...served.headers(),
        'content-security-policy':
          "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
      },
    });
  });
  await page.goto(`${base}/console`);
  await page.locator('select[name=pipeline]').waitFor();
  await page.click('button[name=raw-json]');
  await page.fill('textarea[name=request-json]', JSON.stringify(REQUEST));
  await page.click('button[name=run]');
  await page.locator('tr.candidate').first().click();
  await page.locator('.explanation .bar-row').first().waitFor();
  // The bars are as wide as their values: their width set through the DOM, not a style attribute.
  const widths = await page
    .locator('.explanation .bar')
    .evaluateAll((bars) => bars.map((b) => b.getBoundingClientRect().width));
  assert.ok(
    widths.some((w) => w > 0),
    'bars drawn',
  );
  await page.click('button[name=tab-Compare]');
  await page.click('button[name=run-both]');
  await page.locator('table.changes tbody tr').first().waitFor();
  await page.click('button[name=tab-Live]');
  await page.locator('figure.chart[data-chart=rates] canvas').waitFor();
  const chartHeight = await page
    .locator('figure.chart[data-chart=rates] .u-wrap')
    .evaluate((e) => e.getBoundingClientRect().height);
  assert.ok(chartHeight > 0, 'the chart is laid out (its style sheet applied)');
  assert.deepEqual(refused, []);
  await page.close();
});
