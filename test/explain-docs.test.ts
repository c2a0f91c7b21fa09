/**
 * docs/guides/explain-a-ranking.md's example is real: its request, sent to the template app with its sample data,
 * answers its response block (the stage times aside, which differ from run to run).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
// The template imports the built package (`rankd`), so it is served by the built package too (run `npm run build` first).
import { type TestApp, testApp } from 'rankd/testing';
import template from '../template/pipelines/main.js';

const DOC = new URL('../docs/guides/explain-a-ranking.md', import.meta.url);

/** The JSON block that follows `marker` in the page. */
function blockAfter(page: string, marker: string): unknown {
  const at = page.indexOf(marker);
  assert.ok(at >= 0, `docs/guides/explain-a-ranking.md has ${marker}`);
  const match = /```json\n([\s\S]*?)\n```/.exec(page.slice(at));
  assert.ok(match?.[1], `a json block follows ${marker}`);
  return JSON.parse(match[1]);
}

/** The answer with every stage time replaced by 0: the only part that changes between runs. */
function withoutTimings(body: { explanation: { stage_ms: Record<string, number> } }) {
  const stageMs = Object.fromEntries(Object.keys(body.explanation.stage_ms).map((stage) => [stage, 0]));
  return { ...body, explanation: { ...body.explanation, stage_ms: stageMs } };
}

let shop: TestApp;

before(async () => {
  shop = await testApp(template, { sampleData: new URL('../template/', import.meta.url) });
});

after(() => shop.close());

test('docs/guides/explain-a-ranking.md: the example response is what the template app answers its example request', async () => {
  const page = readFileSync(DOC, 'utf8');
  const request = blockAfter(page, '<!-- example request -->');
  const expected = blockAfter(page, '<!-- example response -->') as Parameters<typeof withoutTimings>[0];
  const response = await shop.post('/api/v1/ranking', request);
  assert.equal(response.statusCode, 200, response.body);
  const body = response.json();
  if (process.env.RANKD_WRITE_DOC_EXAMPLE) console.log(JSON.stringify(body, null, 2));
  assert.deepEqual(withoutTimings(body), withoutTimings(expected));
});
