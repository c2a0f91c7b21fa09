import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { defineApp, defineModel, defineRankingPipeline, ValidationError } from '../src/index.js';
import { type Pagination, pageSlice } from '../src/request/pagination.js';
import { RedisStats, rawClient, TemplateProduct } from './helpers/ranking-app.js';
import { startTestRedis, type TestRedis } from './helpers/redis-server.js';
import { postJson, testServer } from './helpers/server.js';

const page = (over: Partial<Pagination> = {}): Pagination => ({
  user_page_size: 8,
  user_page: 0,
  candidate_page_size: 24,
  candidate_page: 0,
  ...over,
});

/** Asserts `fn` throws a 422 ValidationError on `field`, of `type`, whose message matches `message`. */
function assertRejects(fn: () => unknown, field: string, type: string, message: RegExp) {
  assert.throws(fn, (error: unknown) => {
    assert.ok(error instanceof ValidationError, `a ValidationError, not ${String(error)}`);
    assert.equal(error.statusCode, 422);
    assert.equal(error.problems?.length, 1);
    assert.deepEqual(error.problems?.[0]?.loc, ['body', field]);
    assert.equal(error.problems?.[0]?.type, type);
    assert.match(error.problems?.[0]?.msg ?? '', message);
    return true;
  });
}

describe('pageSlice', () => {
  test("the predecessor's examples: n=24, user_page_size 8, candidate_page_size 24", () => {
    assert.deepEqual(pageSlice(24, page({ candidate_page: 0, user_page: 0 })), [0, 8]);
    assert.deepEqual(pageSlice(24, page({ candidate_page: 0, user_page: 1 })), [8, 16]);
    assert.deepEqual(pageSlice(24, page({ candidate_page: 0, user_page: 2 })), [16, 24]);
    assertRejects(
      () => pageSlice(24, page({ candidate_page: 0, user_page: 3 })),
      'user_page',
      'page_range',
      /past/,
    );
    // user_page counts from the first candidate overall: page 3 is the first of candidate page 1.
    assert.deepEqual(pageSlice(24, page({ candidate_page: 1, user_page: 3 })), [0, 8]);
    assert.deepEqual(pageSlice(24, page({ candidate_page: 1, user_page: 5 })), [16, 24]);
    assert.deepEqual(pageSlice(24, page({ candidate_page: 2, user_page: 6 })), [0, 8]);
  });

  test('the last page is cut at the number of candidates', () => {
    assert.deepEqual(pageSlice(20, page({ user_page: 2 })), [16, 20]);
    assert.deepEqual(pageSlice(1, page({ user_page_size: 100, candidate_page_size: 1000 })), [0, 1]);
    // The last, short candidate page of a list of 30 in pages of 24.
    assert.deepEqual(pageSlice(6, page({ candidate_page: 1, user_page: 3 })), [0, 6]);
  });

  test('a start that is not a multiple of the user page size (page sizes that do not divide)', () => {
    // candidate_page_size 10, user_page_size 4: candidate page 1 starts at item 10, user page 3 at item 12.
    assert.deepEqual(
      pageSlice(10, page({ user_page_size: 4, candidate_page_size: 10, candidate_page: 1, user_page: 3 })),
      [2, 6],
    );
    assertRejects(
      () =>
        pageSlice(10, page({ user_page_size: 4, candidate_page_size: 10, candidate_page: 1, user_page: 2 })),
      'user_page',
      'page_range',
      /before candidate_page 1/,
    );
  });

  test('no candidates → an empty slice, before any other check', () => {
    assert.deepEqual(pageSlice(0, page()), [0, 0]);
    assert.deepEqual(pageSlice(0, page({ user_page: 7, candidate_page: 3 })), [0, 0]);
    assert.deepEqual(pageSlice(0, page({ user_page_size: 50, candidate_page_size: 10 })), [0, 0]);
  });

  test('user_page_size greater than candidate_page_size is rejected on user_page_size', () => {
    assertRejects(
      () => pageSlice(5, page({ user_page_size: 25, candidate_page_size: 24 })),
      'user_page_size',
      'page_size',
      /user_page_size \(25\) is greater than candidate_page_size \(24\)/,
    );
  });

  test('more candidates than candidate_page_size is rejected on candidates', () => {
    assertRejects(
      () => pageSlice(25, page()),
      'candidates',
      'page_size',
      /25 candidates.*candidate_page_size is 24/,
    );
  });

  test('a user page before the candidate page is rejected on user_page', () => {
    assertRejects(
      () => pageSlice(24, page({ candidate_page: 1, user_page: 2 })),
      'user_page',
      'page_range',
      /user_page 2 is before candidate_page 1: .* first user page is 3/,
    );
  });

  test('a user page past the candidates is rejected on user_page', () => {
    assertRejects(
      () => pageSlice(24, page({ user_page: 30 })),
      'user_page',
      'page_range',
      /user_page 30 is past the 24 candidates/,
    );
    assertRejects(() => pageSlice(16, page({ user_page: 2 })), 'user_page', 'page_range', /past/);
  });
});

// Over HTTP: candidates c00..cNN (not in the index) scored by their number, so the ranked order is known.
const NumberModel = defineModel({
  name: 'NumberModel',
  entity: TemplateProduct,
  score: (products) => products.map((p) => Number(String(p.product_id).slice(1))),
});
const app = defineApp({
  name: 'pagination-test',
  pipelines: [
    defineRankingPipeline({ name: 'MyRankingPipeline', candidate: TemplateProduct, model: NumberModel }),
  ],
});

const idsOf = (n: number) => Array.from({ length: n }, (_, i) => `c${String(i).padStart(2, '0')}`);
/** The ranked order of idsOf(n): highest number first. */
const rankedOf = (n: number) => idsOf(n).reverse();

let redis: TestRedis;
let server: FastifyInstance;
let raw: Awaited<ReturnType<typeof rawClient>>;
let stats: RedisStats;

before(async () => {
  redis = await startTestRedis();
  server = await testServer(redis, { app });
  raw = await rawClient(redis);
  stats = new RedisStats(raw);
});

after(async () => {
  await server?.close();
  await raw?.close();
  await redis?.stop();
});

const rank = (n: number, pagination: Record<string, unknown>) =>
  postJson(server, '/api/v1/ranking', {
    request_id: 'pg',
    query: { query: 'q' },
    candidates: idsOf(n).map((product_id) => ({ product_id })),
    ...pagination,
  });
const rankedIds = (body: { ranked_candidates: Array<{ candidate_id: string }> }) =>
  body.ranked_candidates.map((r) => r.candidate_id);

/** Asserts a 422 whose detail names `field` (its loc ends with it). */
function assertField422(
  res: { status: number; body: { detail: unknown; error_code: string } },
  field: string,
) {
  assert.equal(res.status, 422, JSON.stringify(res.body));
  assert.equal(res.body.error_code, 'RANKD_VALIDATION');
  assert.ok(Array.isArray(res.body.detail), JSON.stringify(res.body));
  const fields = (res.body.detail as Array<{ loc: Array<string | number> }>).map((p) => p.loc.at(-1));
  assert.ok(fields.includes(field), `the detail names ${field}: ${JSON.stringify(res.body.detail)}`);
}

describe('pagination over HTTP', () => {
  test('the spec 4.4.3 combinations', async () => {
    const spec = { user_page_size: 8, candidate_page_size: 24 };
    const first = await rank(24, { ...spec, user_page: 0, candidate_page: 0 });
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.deepEqual(rankedIds(first.body), rankedOf(24).slice(0, 8));
    const third = await rank(24, { ...spec, user_page: 2, candidate_page: 0 });
    assert.deepEqual(rankedIds(third.body), rankedOf(24).slice(16, 24));
    assertField422(await rank(24, { ...spec, user_page: 3, candidate_page: 0 }), 'user_page');
    const nextCandidatePage = await rank(24, { ...spec, user_page: 3, candidate_page: 1 });
    assert.equal(nextCandidatePage.status, 200);
    assert.deepEqual(rankedIds(nextCandidatePage.body), rankedOf(24).slice(0, 8));
  });

  test('user_page_size 0 is a 422 on user_page_size, not the predecessor’s 500', async () => {
    const res = await rank(24, {
      user_page_size: 0,
      user_page: 0,
      candidate_page_size: 24,
      candidate_page: 0,
    });
    assertField422(res, 'user_page_size');
    assert.match(JSON.stringify(res.body.detail), /expected at least 1, got the number 0/);
  });

  test('negative pages are a 422 on the field', async () => {
    assertField422(await rank(24, { user_page_size: 8, user_page: -1 }), 'user_page');
    assertField422(await rank(24, { user_page_size: 8, candidate_page: -1 }), 'candidate_page');
    assertField422(await rank(24, { user_page_size: -8 }), 'user_page_size');
    assertField422(await rank(24, { candidate_page_size: -24 }), 'candidate_page_size');
  });

  test('page sizes over their limits are a 422 on the field', async () => {
    assertField422(await rank(24, { user_page_size: 101, candidate_page_size: 1000 }), 'user_page_size');
    assertField422(await rank(24, { user_page_size: 8, candidate_page_size: 1001 }), 'candidate_page_size');
    assertField422(await rank(24, { candidate_page_size: 0 }), 'candidate_page_size');
    // The limits themselves are accepted.
    const atLimits = await rank(24, { user_page_size: 100, candidate_page_size: 1000 });
    assert.equal(atLimits.status, 200, JSON.stringify(atLimits.body));
    assert.deepEqual(rankedIds(atLimits.body), rankedOf(24));
  });

  test('pagination fields must be integers', async () => {
    assertField422(await rank(24, { user_page_size: 2.5 }), 'user_page_size');
    assertField422(await rank(24, { user_page: '1' }), 'user_page');
    assertField422(await rank(24, { candidate_page: null }), 'candidate_page');
  });

  test('more than 1000 candidates is a 422 on candidates', async () => {
    const ids = Array.from({ length: 1001 }, (_, i) => ({ product_id: `x${i}` }));
    for (const pagination of [{ candidate_page_size: 1000 }, {}]) {
      const res = await postJson(server, '/api/v1/ranking', {
        request_id: 'big',
        candidates: ids,
        ...pagination,
      });
      assertField422(res, 'candidates');
    }
    const exactly = await postJson(server, '/api/v1/ranking', {
      request_id: 'big',
      candidates: ids.slice(0, 1000),
      user_page_size: 3,
    });
    assert.equal(exactly.status, 200, JSON.stringify(exactly.body));
    assert.equal(exactly.body.ranked_candidates.length, 3);
  });

  test('user_page_size greater than candidate_page_size is a 422 on user_page_size', async () => {
    assertField422(await rank(5, { user_page_size: 10, candidate_page_size: 8 }), 'user_page_size');
  });

  test('more candidates than candidate_page_size is a 422 on candidates', async () => {
    assertField422(await rank(24, { user_page_size: 8, candidate_page_size: 16 }), 'candidates');
  });

  test('a page past the candidates is a 422 naming user_page', async () => {
    const res = await rank(24, { user_page_size: 8, user_page: 3, candidate_page_size: 24 });
    assertField422(res, 'user_page');
    assert.match(res.body.detail[0].msg, /user_page 3 is past the 24 candidates/);
    assertField422(await rank(5, { user_page_size: 5, user_page: 1 }), 'user_page');
  });

  test('a user page before the candidate page is a 422 naming user_page', async () => {
    const res = await rank(24, {
      user_page_size: 8,
      user_page: 1,
      candidate_page_size: 24,
      candidate_page: 1,
    });
    assertField422(res, 'user_page');
    assert.match(res.body.detail[0].msg, /before candidate_page 1/);
  });

  test('empty candidates → 200 with an empty list', async () => {
    for (const pagination of [
      {},
      { user_page_size: 8, user_page: 4, candidate_page_size: 24, candidate_page: 1 },
    ]) {
      const res = await rank(0, pagination);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(res.body, { ranked_candidates: [] });
    }
  });

  test('defaults: user_page_size 10, user_page 0, one candidate page of everything sent', async () => {
    const res = await rank(24, {});
    assert.equal(res.status, 200);
    assert.deepEqual(rankedIds(res.body), rankedOf(24).slice(0, 10));
    const second = await rank(24, { user_page: 2 });
    assert.deepEqual(rankedIds(second.body), rankedOf(24).slice(20, 24));
    const few = await rank(3, {});
    assert.deepEqual(rankedIds(few.body), rankedOf(3));
  });

  test('a rejected request makes no Redis call', async () => {
    await stats.reset();
    const rejected = [
      await rank(24, { user_page_size: 0 }),
      await rank(24, { user_page: -1 }),
      await rank(24, { user_page_size: 8, user_page: 3, candidate_page_size: 24 }),
      await rank(24, { user_page_size: 8, user_page: 1, candidate_page_size: 24, candidate_page: 1 }),
      await rank(5, { user_page_size: 10, candidate_page_size: 8 }),
      await rank(24, { candidate_page_size: 16 }),
    ];
    for (const res of rejected) assert.equal(res.status, 422);
    assert.equal(await stats.calls('mget'), 0);
    // The counter does count: an accepted request reads the index.
    assert.equal((await rank(24, {})).status, 200);
    assert.ok((await stats.calls('mget')) >= 1);
  });

  test('no combination of page fields answers anything but 200 or 422, and each 200 is the documented slice', async () => {
    type Combo = {
      user_page_size?: number;
      user_page?: number;
      candidate_page_size?: number;
      candidate_page?: number;
    };
    /** The documented rules (docs/reference/ranking.md), stated independently of the implementation. */
    const expected = (n: number, c: Combo): string[] | 422 => {
      const ups = c.user_page_size ?? 10;
      const up = c.user_page ?? 0;
      const cp = c.candidate_page ?? 0;
      const cps = c.candidate_page_size ?? Math.max(n, ups);
      if (ups < 1 || ups > 100 || cps < 1 || cps > 1000 || up < 0 || cp < 0) return 422;
      if (n === 0) return [];
      if (ups > cps || n > cps) return 422;
      const start = up * ups - cp * cps;
      if (start < 0 || start >= n) return 422;
      return rankedOf(n).slice(start, Math.min(start + ups, n));
    };
    const options = (values: number[]) => [undefined, ...values];
    let ok = 0;
    let rejected = 0;
    for (const n of [0, 7, 24]) {
      for (const user_page_size of options([0, 1, 7, 8, 25, 101]))
        for (const user_page of options([-1, 2, 3]))
          for (const candidate_page_size of options([0, 8, 24, 1001]))
            for (const candidate_page of options([-1, 1])) {
              const combo: Combo = {};
              if (user_page_size !== undefined) combo.user_page_size = user_page_size;
              if (user_page !== undefined) combo.user_page = user_page;
              if (candidate_page_size !== undefined) combo.candidate_page_size = candidate_page_size;
              if (candidate_page !== undefined) combo.candidate_page = candidate_page;
              const res = await rank(n, combo);
              const want = expected(n, combo);
              const label = `n=${n} ${JSON.stringify(combo)} → ${res.status} ${JSON.stringify(res.body)}`;
              if (want === 422) {
                assert.equal(res.status, 422, label);
                rejected++;
              } else {
                assert.equal(res.status, 200, label);
                assert.deepEqual(rankedIds(res.body), want, label);
                ok++;
              }
            }
    }
    // Both outcomes were exercised.
    assert.ok(ok > 50, `${ok} accepted`);
    assert.ok(rejected > 50, `${rejected} rejected`);
  });
});
