/**
 * Interleaving experiments end to end: the interleaved page (every item from one of the two
 * rankers' lists, each ranker's top shown, the INTERLEAVING event naming who placed each item),
 * business logic on it (filtered items never shown, dedupe and pin on the merged page), two
 * variants as rankers, the explanation's attribution, and click crediting: ranking and feedback
 * over HTTP on a real Redis, then `rankd experiment report` (the CLI) — in process, and across a
 * restart (a new `rankd run` process on the same Redis).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { interleavingDecision } from '../src/app/interleaving-decision.js';
import { defineInterleaving, defineRankingPipeline } from '../src/index.js';
import type { RankdEvent } from '../src/server.js';
import app, { BoostTest, Cheap, Dear, Product } from './fixtures/interleaving/app.js';
import { CLI, killServices, ROOT, startCliService } from './helpers/cli-service.js';
import { uploadEntities } from './helpers/ranking-app.js';
import { startTestRedis, type TestRedis } from './helpers/redis-server.js';
import { postJson, testConfig, testServer } from './helpers/server.js';

/** Eight products, price i + 0.5; p01 and p05 sold out; p02 and p04 in one group. */
const PRODUCTS = Array.from({ length: 8 }, (_, i) => ({
  product_id: `p0${i}`,
  price: i + 0.5,
  number_in_stock: i === 1 || i === 5 ? 0 : 3,
  ...(i === 2 || i === 4 ? { group: 'g' } : {}),
}));
const IDS = PRODUCTS.map((p) => p.product_id);
const CHEAP_FIRST = IDS;
const DEAR_FIRST = [...IDS].reverse();

type Team = 'control' | 'challenger';

let redis: TestRedis;
let server: FastifyInstance;
const PROJECT = 'interleaving';

before(async () => {
  redis = await startTestRedis();
  server = await testServer(redis, { app, env: { PROJECT_NAME: PROJECT } });
  await uploadEntities(server, 'product', PRODUCTS);
});

after(async () => {
  killServices();
  await server?.close();
  await redis?.stop();
});

const rank = (
  target: FastifyInstance,
  path: string,
  request_id: string,
  extra: Record<string, unknown> = {},
) =>
  postJson(target, `/api/v1${path}`, {
    request_id,
    candidates: IDS.map((product_id) => ({ product_id })),
    user_page_size: 8,
    include_events: true,
    ...extra,
  });

function eventOf(events: RankdEvent[], type: string): RankdEvent | undefined {
  return events.find((e) => e.event_type === type);
}

/** The page's items and their rankers, from its INTERLEAVING event. */
function teamsOf(body: { events: RankdEvent[] }): Array<[string, Team]> {
  const event = eventOf(body.events, 'INTERLEAVING');
  assert.ok(event, 'an interleaved page has an INTERLEAVING event');
  return event.event_data.page as Array<[string, Team]>;
}

/** Replays team draft on `control` and `challenger` with the picks the page shows: each pick must be that ranker's best item not yet placed. */
function assertTeamDraft(page: Array<[string, Team]>, control: string[], challenger: string[]) {
  const placed = new Set<string>();
  let counts = { control: 0, challenger: 0 };
  for (const [id, team] of page) {
    const list = team === 'control' ? control : challenger;
    const best = list.find((item) => !placed.has(item));
    assert.equal(id, best, `${id} was placed by the ${team}, whose best unplaced item is ${best}`);
    const other: Team = team === 'control' ? 'challenger' : 'control';
    assert.ok(counts[team] <= counts[other], `the ${team} picked while ahead: ${JSON.stringify(counts)}`);
    counts = { ...counts, [team]: counts[team] + 1 };
    placed.add(id);
  }
}

test('declarations are checked when the app module loads', () => {
  assert.throws(() => defineInterleaving({ id: 'x', share: 1.5, challenger: Dear }), /share is 1.5/);
  assert.throws(() => defineInterleaving({ id: 'x', share: 0.5 }), /give a challenger model, or variants/);
  assert.throws(
    () =>
      defineInterleaving({
        id: 'x',
        share: 0.5,
        challenger: Dear,
        variants: { experiment: BoostTest, control: 'none', challenger: 'strong' },
      }),
    /not both/,
  );
  assert.throws(
    () =>
      defineInterleaving({
        id: 'x',
        share: 0.5,
        variants: { experiment: BoostTest, control: 'none', challenger: 'huge' },
      }),
    /huge is not a variant of experiment boost/,
  );
  const duel = defineInterleaving({ id: 'x', share: 0.25, challenger: Dear });
  assert.deepEqual(
    duel.variants.map((v) => [v.name, v.share]),
    [
      ['off', 0.75],
      ['interleaved', 0.25],
    ],
  );
  assert.equal(duel.unit, 'request');
  assert.throws(
    () =>
      defineRankingPipeline({
        name: 'S',
        candidate: Product,
        model: Cheap,
        shadow: { model: Dear, share: -1 },
      }),
    /the shadow's share is -1/,
  );
});

describe('the interleaved page', () => {
  test("every item is placed by one ranker as team draft picks, each ranker's top is in the first two places", async () => {
    const firsts = new Set<Team>();
    for (let r = 0; r < 12; r++) {
      const { status, body } = await rank(server, '/ranking', `page-${r}`);
      assert.equal(status, 200, JSON.stringify(body));
      const page = teamsOf(body);
      assert.deepEqual(
        body.ranked_candidates.map((c: { candidate_id: string }) => c.candidate_id),
        page.map(([id]) => id),
      );
      assertTeamDraft(page, CHEAP_FIRST, DEAR_FIRST);
      assert.deepEqual(new Set(page.slice(0, 2).map(([id]) => id)), new Set(['p00', 'p07']));
      assert.equal(page.filter(([, team]) => team === 'control').length, 4);
      firsts.add((page[0] as [string, Team])[1]);
      const scores = body.ranked_candidates.map((c: { ranked_score: number }) => c.ranked_score);
      assert.deepEqual(
        scores,
        [...scores].sort((a, b) => b - a),
        'the page is in descending ranked_score',
      );
      const assigned = body.events.find(
        (e: RankdEvent) => e.event_type === 'EXPERIMENTATION' && e.event_data.experiment_id === 'duel',
      );
      assert.equal(assigned?.event_data.result, 'interleaved');
      const rankers = eventOf(body.events, 'INTERLEAVING')?.event_data.rankers;
      assert.deepEqual(rankers, {
        control: { model: 'Cheap', version: 'c1' },
        challenger: { model: 'Dear', version: 'd1' },
      });
    }
    assert.deepEqual(
      firsts,
      new Set(['control', 'challenger']),
      'the coin gives the first pick to either ranker',
    );
  });

  test('the same request id is merged the same way again; a request forced off is served by the control alone', async () => {
    const once = teamsOf((await rank(server, '/ranking', 'again')).body);
    assert.deepEqual(teamsOf((await rank(server, '/ranking', 'again')).body), once);
    const off = await rank(server, '/ranking', 'off', { overrides: { variants: { duel: 'off' } } });
    assert.equal(off.status, 200);
    assert.deepEqual(
      off.body.ranked_candidates.map((c: { candidate_id: string }) => c.candidate_id),
      CHEAP_FIRST,
    );
    assert.equal(eventOf(off.body.events, 'INTERLEAVING'), undefined);
  });

  test('business logic: filtered items are never shown, dedupe and pin hold on the merged page', async () => {
    for (let r = 0; r < 8; r++) {
      const { status, body } = await rank(server, '/business', `business-${r}`);
      assert.equal(status, 200, JSON.stringify(body));
      const page = teamsOf(body);
      const ids = page.map(([id]) => id);
      assert.ok(!ids.includes('p01') && !ids.includes('p05'), `sold-out items shown: ${ids}`);
      assert.equal(ids.filter((id) => id === 'p02' || id === 'p04').length, 1, `one of group g: ${ids}`);
      assert.equal(ids[2], 'p06', `p06 is pinned to the third place: ${ids}`);
      assert.equal(new Set(ids).size, ids.length);
      // Each ranker's list is its page alone: in stock, one of group g (the best by its own score).
      const control = ['p00', 'p02', 'p06', 'p03', 'p07'];
      const challenger = ['p07', 'p06', 'p04', 'p03', 'p00'];
      for (const [id, team] of page) assert.ok((team === 'control' ? control : challenger).includes(id));
    }
  });

  test("two variants as rankers: each list is the pipeline under its variant; the request's own variant is kept", async () => {
    const { status, body } = await rank(server, '/variants', 'variants-1', { explain: true });
    assert.equal(status, 200, JSON.stringify(body));
    const page = teamsOf(body);
    // The strong variant lifts p03 to its top; both otherwise rank cheapest first.
    assertTeamDraft(page, CHEAP_FIRST, ['p03', ...CHEAP_FIRST.filter((id) => id !== 'p03')]);
    assert.deepEqual(
      new Set(page.slice(0, 2)),
      new Set(
        [
          ['p00', 'control'],
          ['p03', 'challenger'],
        ].map((p) => p),
      ),
    );
    assert.deepEqual(eventOf(body.events, 'INTERLEAVING')?.event_data.rankers, {
      control: { model: 'Cheap', version: 'c1', variant: 'none' },
      challenger: { model: 'Cheap', version: 'c1', variant: 'strong' },
    });
    assert.equal(body.explanation.variants.boost, 'none', "the request's own assignment is what it was");
  });

  test('an explained interleaved page says who placed each item, with its place in each list', async () => {
    const { body } = await rank(server, '/ranking', 'explained', { explain: true });
    const page = teamsOf(body);
    body.ranked_candidates.forEach(
      (
        c: {
          candidate_id: string;
          explanation: { model: { name: string }; interleaving: Record<string, unknown> };
        },
        i: number,
      ) => {
        const [, team] = page[i] as [string, Team];
        assert.equal(c.explanation.interleaving.ranker, team);
        assert.equal(c.explanation.model.name, team === 'control' ? 'Cheap' : 'Dear');
        assert.equal(c.explanation.interleaving.control_position, CHEAP_FIRST.indexOf(c.candidate_id) + 1);
        assert.equal(c.explanation.interleaving.challenger_position, DEAR_FIRST.indexOf(c.candidate_id) + 1);
      },
    );
    assert.equal(body.explanation.interleaving.experiment_id, 'duel');
    assert.deepEqual(body.explanation.interleaving.rankers.challenger, { model: 'Dear', version: 'd1' });
  });
});

/** `rankd ...args` run as a command on `redisUrl`'s stream of PROJECT: its standard output. */
function cli(redisUrl: string, ...args: string[]): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile(
      process.execPath,
      [...CLI, ...args],
      { cwd: ROOT, env: { ...process.env, REDIS_URL: redisUrl, PROJECT_NAME: PROJECT } },
      (error, stdout, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout)),
    ),
  );
}

/** `rankd experiment report <name> --json`, parsed. */
async function report(name: string, redisUrl: string, ...args: string[]): Promise<Record<string, unknown>> {
  return JSON.parse(await cli(redisUrl, 'experiment', 'report', name, '--json', ...args));
}

/**
 * Clicks for request `r`'s page: the challenger's first item on pages 0, 1, 2 mod 5 (a win), the
 * control's first on 3 (a loss), both on 4 (a tie); every seventh page gets none.
 */
function clicksFor(r: number, page: Array<[string, Team]>): string[] {
  if (r % 7 === 6) return [];
  const first = (team: Team) => page.find(([, t]) => t === team)?.[0] as string;
  const kind = r % 5;
  if (kind <= 2) return [first('challenger')];
  if (kind === 3) return [first('control')];
  return [first('challenger'), first('control')];
}

function expectedCounts(pages: Array<Array<[string, Team]>>) {
  let wins = 0;
  let losses = 0;
  let ties = 0;
  pages.forEach((page, r) => {
    const clicked = new Set(clicksFor(r, page));
    const control = page.filter(([id, team]) => team === 'control' && clicked.has(id)).length;
    const challenger = page.filter(([id, team]) => team === 'challenger' && clicked.has(id)).length;
    if (control + challenger === 0) return;
    if (challenger > control) wins += 1;
    else if (challenger < control) losses += 1;
    else ties += 1;
  });
  return { impressions: pages.length, wins, losses, ties };
}

// biome-ignore lint/suspicious/noExplicitAny: response bodies are arbitrary JSON that tests assert field by field
type Poster = (path: string, body: unknown) => Promise<{ status: number; body: any }>;

/** Ranks `count` interleaved pages of experiment `duel` as `prefix-r`; returns their attributions. */
async function servePages(
  post: Poster,
  prefix: string,
  count: number,
): Promise<Array<Array<[string, Team]>>> {
  const pages: Array<Array<[string, Team]>> = [];
  for (let r = 0; r < count; r++) {
    const { status, body } = await post('/api/v1/ranking', {
      request_id: `${prefix}-${r}`,
      candidates: IDS.map((product_id) => ({ product_id })),
      user_page_size: 4,
      include_events: true,
    });
    assert.equal(status, 200, JSON.stringify(body));
    pages.push(teamsOf(body));
  }
  return pages;
}

async function postClicks(post: Poster, prefix: string, pages: Array<Array<[string, Team]>>) {
  const events = pages.flatMap((page, r) => [
    ...clicksFor(r, page).map((id) => ({
      request_id: `${prefix}-${r}`,
      entity_id: id,
      feedback_type: 'click',
    })),
    // Not a click: never credited.
    { request_id: `${prefix}-${r}`, entity_id: (page[0] as [string, Team])[0], feedback_type: 'add_to_cart' },
  ]);
  const { status, body } = await post('/api/v1/events/feedback', { events });
  assert.equal(status, 200, JSON.stringify(body));
}

describe('click crediting and the report', () => {
  test('clicks posted as feedback are credited to the ranker that placed the item; the report counts them', async () => {
    // A server of its own on a Redis of its own: the report reads the whole stream.
    const own = await startTestRedis();
    const served = await testServer(own, { app, env: { PROJECT_NAME: PROJECT } });
    try {
      await uploadEntities(served, 'product', PRODUCTS);
      const post: Poster = (path, body) => postJson(served, path, body);
      const pages = await servePages(post, 'credit', 35);
      await postClicks(post, 'credit', pages);
      await served.rankd.events.flush();
      const result = await report('duel', own.url);
      const expected = expectedCounts(pages);
      assert.deepEqual(
        { impressions: result.impressions, wins: result.wins, losses: result.losses, ties: result.ties },
        expected,
      );
      assert.equal(result.withClicks, expected.wins + expected.losses + expected.ties);
      // 18 wins, 6 losses: p = 2·P(X ≤ 6 | n = 24) = 2 · 190051 / 2^24 = 0.0227, significant.
      assert.deepEqual([expected.wins, expected.losses], [18, 6]);
      assert.ok(Math.abs((result.pValue as number) - (2 * 190051) / 2 ** 24) < 1e-12, String(result.pValue));
      assert.equal(result.significant, true);
      assert.equal(result.decision, 'challenger_wins');
      const other = await report('business_duel', own.url);
      assert.equal(other.impressions, 0, 'another experiment has none of these pages');
      // The export's rows of an interleaved page: the experiment's column names the ranker that placed each item.
      const rows = (
        await cli(own.url, 'events', 'export', '--since', '0', '--format', 'jsonl', '--no-progress')
      )
        .trim()
        .split('\n')
        .map(
          (line) =>
            JSON.parse(line) as {
              request_id: string;
              entity_id: string;
              experiments: Record<string, string>;
            },
        );
      assert.equal(rows.length, 35 * 4);
      for (const row of rows) {
        const page = pages[Number(row.request_id.slice('credit-'.length))] ?? [];
        assert.equal(
          row.experiments.duel,
          page.find(([id]) => id === row.entity_id)?.[1],
          JSON.stringify(row),
        );
      }
    } finally {
      await served.close();
      await own.stop();
    }
  });

  test('the credit survives a restart: pages served by one process, clicks received by the next, same Redis', async () => {
    const own = await startTestRedis();
    const env = { REDIS_URL: own.url, PROJECT_NAME: PROJECT };
    const appPath = 'test/fixtures/interleaving/app.ts';
    try {
      const first = await startCliService(appPath, env);
      const over =
        (base: string): Poster =>
        async (path, body) => {
          const response = await fetch(`${base}${path}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(body),
          });
          return { status: response.status, body: await response.json() };
        };
      const upload = await over(first.base)('/api/v1/entities/upload', {
        entity_type: 'product',
        entities: PRODUCTS,
      });
      assert.equal(upload.status, 200);
      const pages = await servePages(over(first.base), 'restart', 21);
      first.child.kill('SIGTERM');
      assert.equal(await first.exited, 0, first.output());
      const second = await startCliService(appPath, env);
      await postClicks(over(second.base), 'restart', pages);
      const result = await report('duel', own.url);
      assert.deepEqual(
        { impressions: result.impressions, wins: result.wins, losses: result.losses, ties: result.ties },
        expectedCounts(pages),
      );
      // What promotion by interleaving will call: the same report, from the stream, in this process.
      const decided = await interleavingDecision(testConfig(own, { PROJECT_NAME: PROJECT }), {
        experimentId: 'duel',
        sinceMs: 0,
        untilMs: Date.now(),
        windowMs: 3_600_000,
      });
      for (const figure of ['impressions', 'wins', 'losses', 'ties', 'pValue', 'decision'] as const)
        assert.deepEqual(decided[figure], result[figure], figure);
      second.child.kill('SIGTERM');
      await second.exited;
    } finally {
      await own.stop();
    }
  });
});
