/**
 * docs/migrating.md is true: its TypeScript port of the starter pipeline (the blocks headed
 * `// file: ...`) is written into a project and serves rankings; the lines it quotes are the ones
 * rankd prints; every setting of Wyvern's that rankd names at start is in its table.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { pathHint } from '../src/cli/run-command.js';
import { predecessorSettingWarnings } from '../src/config/index.js';
import { PREDECESSOR_ONLY_SETTINGS } from '../src/config/predecessor-settings.js';
import type { RankdApp } from '../src/index.js';
import { testApp } from '../src/testing/index.js';

const DOC = readFileSync(new URL('../docs/migrating.md', import.meta.url), 'utf8');
const INDEX = fileURLToPath(new URL('../src/index.ts', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'rankd-migrating-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test("the TypeScript port of the starter's pipeline serves rankings", async () => {
  const blocks = [...DOC.matchAll(/```ts\n\/\/ file: (\S+)\n([\s\S]*?)```/g)];
  assert.deepEqual(
    blocks.map((b) => b[1]),
    [
      'pipelines/product-ranking/schemas.ts',
      'pipelines/product-ranking/realtime-features.ts',
      'pipelines/product-ranking/models.ts',
      'pipelines/main.ts',
    ],
  );
  for (const [, file = '', code = ''] of blocks) {
    const path = join(dir, file);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, code.replaceAll("from 'rankd'", `from ${JSON.stringify(INDEX)}`));
  }
  const app = ((await import(pathToFileURL(join(dir, 'pipelines/main.ts')).href)) as { default: RankdApp })
    .default;
  const shop = await testApp(app, {
    entities: {
      product: [
        { product_id: 'p1', title: 'Beeswax candle', brand: 'Ember', search_score: 0.1 },
        { product_id: 'p2', title: 'Linen towel', brand: 'Loom', search_score: 0.9 },
      ],
    },
  });
  try {
    const response = await shop.post('/api/v1/ranking', {
      request_id: 'migrating-1',
      query: { query: 'candle' },
      candidates: [{ product_id: 'p2' }, { product_id: 'p1' }],
    });
    assert.equal(response.statusCode, 200, response.body);
    const ranked = response.json().ranked_candidates as Array<{ candidate_id: string; ranked_score: number }>;
    assert.deepEqual(
      ranked.map((c) => c.candidate_id),
      ['p1', 'p2'],
      'the title match (22 per unit) outweighs search_score (2 per unit)',
    );
    assert.ok(Math.abs((ranked[1]?.ranked_score ?? 0) - 1.8) < 1e-9, 'p2 scores 2 × 0.9 and nothing else');
    // The two 422 messages the doc quotes, from this app.
    const refused = await shop.post('/api/v1/ranking', {
      request_id: 'migrating-2',
      candidates: [{ product_id: 'p1' }],
      user_page_size: '2',
      user_pagesize: 2,
    });
    assert.equal(refused.statusCode, 422);
    const detail = refused.json().detail as Array<{ msg: string }>;
    assert.equal(detail.length, 2, JSON.stringify(detail));
    for (const { msg } of detail) assert.ok(DOC.includes(`  ${msg}\n`), `the doc quotes ${msg}`);
    const doc = (await shop.server.inject({ method: 'GET', url: '/openapi.json' })).json();
    assert.equal(doc.paths['/api/v1/ranking'].post.operationId, 'MyRankingPipeline_api_v1_ranking_post');
  } finally {
    await shop.close();
  }
});

test('the lines it quotes are what rankd prints', () => {
  // In a project that has the module, as the doc's project has.
  mkdirSync(join(dir, 'pipelines'), { recursive: true });
  writeFileSync(
    join(dir, 'pipelines', 'main.ts'),
    readFileSync(join(dir, 'pipelines', 'main.ts'), { flag: 'a+' }),
  );
  assert.ok(DOC.includes(`rankd: ${pathHint('pipelines.main:app', join(dir))}\n`), 'the --path line');
  const [snowflake] = predecessorSettingWarnings({ SNOWFLAKE_USER: 'x' });
  assert.ok(DOC.includes(`${snowflake}\n`), snowflake);
});

test("every setting of Wyvern's that rankd names at start is in the settings table", () => {
  for (const name of Object.keys(PREDECESSOR_ONLY_SETTINGS)) assert.ok(DOC.includes(`\`${name}\``), name);
});
