import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { fitScores, longestNonIncreasing } from '../src/business-logic/fit-scores.js';
import {
  type BusinessLogicStep,
  boost,
  dedupe,
  diversity,
  filter,
  pin,
  type RankdRequest,
  type ScoredCandidate,
} from '../src/index.js';
import { pageLayout } from '../src/request/pagination.js';

// Unit tests: each step is called as the pipeline calls it (candidates sorted by descending
// score), then the pipeline's stable re-sort is simulated to check it keeps the step's order.

type Attributes = Record<string, unknown>;

/** Candidates from `[id, score, attributes]`, in the order given (the tests give them sorted). */
function list(...spec: Array<[id: string, score: number, attributes?: Attributes]>): ScoredCandidate[] {
  return spec.map(([id, score, attributes]) => ({ id, score, entity: { product_id: id, ...attributes } }));
}

/** p1..p6 scored 6..1: the predecessor's pinning fixture. */
const SIX = () => list(['p1', 6], ['p2', 5], ['p3', 4], ['p4', 3], ['p5', 2], ['p6', 1]);

/** What the pipeline does after each step: a stable sort by descending score. */
const resort = (candidates: readonly ScoredCandidate[]) => [...candidates].sort((a, b) => b.score - a.score);

const ids = (candidates: readonly ScoredCandidate[]) => candidates.map((c) => c.id);
const view = (candidates: readonly ScoredCandidate[]) => candidates.map((c) => [c.id, c.score]);

/**
 * Applies a step to a copy of `input`, checks what every step promises (scores never increase
 * along the returned list, so the re-sort keeps it; the input is not modified) and returns it.
 */
async function run(
  step: BusinessLogicStep,
  input: ScoredCandidate[],
  request: RankdRequest = {},
): Promise<ScoredCandidate[]> {
  const before = view(input);
  const out = await step.apply(input, request);
  for (let i = 1; i < out.length; i++)
    assert.ok(
      (out[i - 1]?.score ?? 0) >= (out[i]?.score ?? 0),
      `scores increase at ${i}: ${JSON.stringify(view(out))}`,
    );
  assert.deepEqual(ids(resort(out)), ids(out), 'the stable re-sort keeps the returned order');
  for (const c of out) assert.ok(Number.isFinite(c.score), `${c.id} has a finite score`);
  assert.deepEqual(view(input), before, 'the input is left as it was');
  return out;
}

describe('boost', () => {
  test('additive by id: the boosted candidate moves up, the others keep their scores', async () => {
    const out = await run(boost({ by: 'id', values: { p5: 3.5 } }), SIX());
    assert.deepEqual(view(out), [
      ['p1', 6],
      ['p5', 5.5],
      ['p2', 5],
      ['p3', 4],
      ['p4', 3],
      ['p6', 1],
    ]);
  });

  test('multiplicative by brand, values as a Map; a brand without a value and a missing brand are left alone', async () => {
    const input = list(
      ['a', 4, { brand: 'acme' }],
      ['b', 3, { brand: 'globex' }],
      ['c', 2, { brand: 'initech' }],
      ['d', 1, { brand: null }],
    );
    const step = boost({
      by: 'brand',
      values: new Map([
        ['globex', 2],
        ['initech', 0.5],
      ]),
      mode: 'multiply',
    });
    assert.deepEqual(view(await run(step, input)), [
      ['b', 6],
      ['a', 4],
      ['c', 1],
      ['d', 1],
    ]);
  });

  test('by a category array: several matching categories boost once, by the largest value', async () => {
    const input = list(
      ['a', 10, { categories: ['x'] }],
      ['b', 9, { categories: ['x', 'y', 'y'] }],
      ['c', 8, { categories: [] }],
      ['d', 7, { categories: ['z', 'y'] }],
    );
    const added = await run(boost({ by: 'categories', values: { x: 1, y: 3, w: 100 } }), input);
    // b matches x (1) and y (3): +3, not +4 nor +3 twice.
    assert.deepEqual(view(added), [
      ['b', 12],
      ['a', 11],
      ['d', 10],
      ['c', 8],
    ]);
    const multiplied = await run(
      boost({ by: 'categories', values: { x: 2, y: 0.5 }, mode: 'multiply' }),
      input,
    );
    // For multiply too the largest factor wins: b × 2.
    assert.deepEqual(view(multiplied), [
      ['a', 20],
      ['b', 18],
      ['c', 8],
      ['d', 3.5],
    ]);
  });

  test('by a function; keys compare as strings; ties after a boost keep the input order', async () => {
    const input = list(['a', 5, { group: 1 }], ['b', 4, { group: 2 }], ['c', 3, { group: 3 }]);
    const step = boost({ by: (entity) => entity.group as number, values: { '3': 2, '2': 1 } });
    // c reaches 5 = a, b reaches 5 too: all tie, and the stable order is the input order.
    assert.deepEqual(view(await run(step, input)), [
      ['a', 5],
      ['b', 5],
      ['c', 5],
    ]);
  });

  test('negative additive boosts demote; mode defaults to add', async () => {
    const out = await run(boost({ by: 'id', values: { p1: -10 } }), SIX());
    assert.deepEqual(ids(out), ['p2', 'p3', 'p4', 'p5', 'p6', 'p1']);
    assert.equal(out.at(-1)?.score, -4);
  });

  test('a candidate that matches nothing is returned unchanged (no score change, so no event)', async () => {
    const input = SIX();
    const out = await run(boost({ by: 'brand', values: { acme: 1 } }), input);
    assert.deepEqual(view(out), view(input));
    for (const [i, c] of out.entries()) assert.equal(c, input[i]);
  });

  test('invalid values or mode are refused when the step is declared', () => {
    assert.throws(() => boost({ by: 'id', values: { a: Number.NaN } }), /finite number/);
    assert.throws(() => boost({ by: 'id', values: { a: Number.POSITIVE_INFINITY } }), /finite number/);
    assert.throws(
      () => boost({ by: 'id', values: {}, mode: 'max' as 'add' }),
      /mode must be 'add' or 'multiply'/,
    );
    assert.equal(boost({ by: 'id', values: {} }).name, 'boost');
    assert.equal(boost({ name: 'BrandBoost', by: 'id', values: {} }).name, 'BrandBoost');
  });
});

describe('pin: the predecessor test cases (its section 6.4), computed correctly', () => {
  test('{p6:11, p5:10, p3:0, p2:0, p4:2} with down-ranking → p3, p2, p4, p1, p5, p6', async () => {
    const step = pin({ positions: { p6: 11, p5: 10, p3: 0, p2: 0, p4: 2 }, allowDownRanking: true });
    const out = await run(step, SIX());
    // The predecessor expected p2, p3, p1, p4, p5, p6 (scores 11, 10, 6, 3.5, 0.5, 0). It differs:
    // - p3 and p2 both pinned to 0: it scored pins at 0 as first score + own score, so the better
    //   scored p2 won; here the pin listed first (p3) gets 0 and p2 the next free position, 1.
    // - p4 pinned to 2: it took the mean of the scores at positions 2 and 3 of the list before
    //   pinning (4 and 3, p4's own), which put p4 at 3; here p4 is at 2.
    // - p6 (11) and p5 (10) are both beyond the list: p6, listed first, is last; p5 takes the
    //   nearest free position before it. The predecessor got the same order by its 1/score rule.
    // p1 is the only unpinned candidate and keeps 6; pins above it step up by 1 from it; p5 and
    // p6 already fit below it and keep their scores (no BUSINESS_LOGIC event for them).
    assert.deepEqual(view(out), [
      ['p3', 9],
      ['p2', 8],
      ['p4', 7],
      ['p1', 6],
      ['p5', 2],
      ['p6', 1],
    ]);
  });

  test('{p6:11, p5:12, p3:0, p2:22, p4:2} without down-ranking → p3, p1, p4, p2, p5, p6', async () => {
    const step = pin({ positions: { p6: 11, p5: 12, p3: 0, p2: 22, p4: 2 } });
    const out = await run(step, SIX());
    // The predecessor expected p3, p1, p2, p4, p5, p6: p4, pinned to 2 from 3, stayed at 3 for the
    // mean-of-positions-2-and-3 reason above. Here p4 is at 2. Beyond the list means last, so p5
    // and p2 would move down: ignored (they stay unpinned); p6 is already last.
    // The predecessor's `cur = len - i` did not change this case's outcome (see the next describe).
    assert.deepEqual(view(out), [
      ['p3', 7],
      ['p1', 6],
      ['p4', 5.5],
      ['p2', 5],
      ['p5', 2],
      ['p6', 1],
    ]);
  });
});

describe('pin', () => {
  const ABC = () => list(['a', 6], ['b', 4], ['c', 2]);

  test('to the first position: one above the first score', async () => {
    assert.deepEqual(view(await run(pin({ positions: { c: 0 } }), ABC())), [
      ['c', 7],
      ['a', 6],
      ['b', 4],
    ]);
  });

  test('to the last position (down-ranking allowed): one below the last score', async () => {
    assert.deepEqual(view(await run(pin({ positions: { a: 2 }, allowDownRanking: true }), ABC())), [
      ['b', 4],
      ['c', 2],
      ['a', 1],
    ]);
  });

  test('between two candidates: the midpoint of their scores', async () => {
    assert.deepEqual(view(await run(pin({ positions: { c: 1 } }), ABC())), [
      ['a', 6],
      ['c', 5],
      ['b', 4],
    ]);
  });

  test('beyond the list means last', async () => {
    const out = await run(pin({ positions: { a: 99 }, allowDownRanking: true }), ABC());
    assert.deepEqual(ids(out), ['b', 'c', 'a']);
    // c is last already: pinning it beyond the list changes nothing.
    const input = ABC();
    assert.deepEqual(view(await run(pin({ positions: { c: 3 } }), input)), view(input));
  });

  test('without down-ranking, a pin below the current position is ignored (beyond the list included)', async () => {
    const input = ABC();
    for (const positions of [{ a: 2 }, { a: 99 }, { b: 2 }, { a: 1 }] as Array<Record<string, number>>)
      assert.deepEqual(view(await run(pin({ positions }), input)), view(input), JSON.stringify(positions));
  });

  test('to the position it already has: nothing changes, the same objects come back', async () => {
    for (const allowDownRanking of [false, true]) {
      const input = SIX();
      const out = await run(pin({ positions: { p1: 0, p3: 2, p6: 5 }, allowDownRanking }), input);
      assert.deepEqual(view(out), view(input));
      for (const [i, c] of out.entries()) assert.equal(c, input[i]);
    }
  });

  test('an id that is not among the candidates is a no-op', async () => {
    const input = SIX();
    assert.deepEqual(view(await run(pin({ positions: { ghost: 0, other: 3 } }), input)), view(input));
    assert.deepEqual(await run(pin({ positions: { ghost: 0 } }), []), []);
  });

  test('two pins on one position: the one listed first gets it, the other the next free position', async () => {
    const input = () => list(['a', 6], ['b', 5], ['c', 4], ['d', 3], ['e', 2]);
    const first = await run(pin({ positions: { e: 1, d: 1 } }), input());
    assert.deepEqual(ids(first), ['a', 'e', 'd', 'b', 'c']);
    const second = await run(pin({ positions: { d: 1, e: 1 } }), input());
    assert.deepEqual(ids(second), ['a', 'd', 'e', 'b', 'c']);
    // Both between a (6) and b (5), evenly spaced; a, b and c keep theirs.
    const scores = first.map((c) => c.score);
    assert.deepEqual([scores[0], scores[3], scores[4]], [6, 5, 4]);
    assert.ok(
      Math.abs((scores[1] ?? 0) - (6 - 1 / 3)) < 1e-12 && Math.abs((scores[2] ?? 0) - (5 + 1 / 3)) < 1e-12,
    );
    // A pin bumped by an earlier one takes the next free position even if a later pin wanted it.
    const chain = await run(pin({ positions: { e: 0, d: 0, c: 1 } }), input());
    assert.deepEqual(ids(chain), ['e', 'd', 'c', 'a', 'b']);
  });

  test('two pins beyond the list: the first listed is last, the second just above it', async () => {
    const out = await run(
      pin({ positions: { a: 99, b: 50 }, allowDownRanking: true }),
      list(['a', 6], ['b', 5], ['c', 4], ['d', 3], ['e', 2]),
    );
    assert.deepEqual(view(out), [
      ['c', 4],
      ['d', 3],
      ['e', 2],
      ['b', 1],
      ['a', 0],
    ]);
  });

  test('ties: a pin between equal scores takes that score, and the stable re-sort keeps the order', async () => {
    const input = () => list(['a', 5], ['b', 3], ['c', 3], ['d', 1]);
    assert.deepEqual(view(await run(pin({ positions: { d: 2 } }), input())), [
      ['a', 5],
      ['b', 3],
      ['d', 3],
      ['c', 3],
    ]);
    const top = () => list(['a', 5], ['b', 5], ['c', 1]);
    assert.deepEqual(view(await run(pin({ positions: { c: 1 } }), top())), [
      ['a', 5],
      ['c', 5],
      ['b', 5],
    ]);
    assert.deepEqual(view(await run(pin({ positions: { c: 0 } }), top())), [
      ['c', 6],
      ['a', 5],
      ['b', 5],
    ]);
    // A candidate tied with the one above it, pinned above it: its own score already fits (a tie
    // with the one now below it), so it keeps it; the returned order survives the stable re-sort.
    assert.deepEqual(view(await run(pin({ positions: { b: 0 } }), top())), [
      ['b', 5],
      ['a', 5],
      ['c', 1],
    ]);
  });

  test('several pins in a row at the top step up by 1; in the middle they are spread evenly', async () => {
    const top = await run(pin({ positions: { p6: 0, p5: 1, p4: 2 } }), SIX());
    assert.deepEqual(view(top), [
      ['p6', 9],
      ['p5', 8],
      ['p4', 7],
      ['p1', 6],
      ['p2', 5],
      ['p3', 4],
    ]);
    const middle = await run(pin({ positions: { p6: 1, p5: 2, p4: 3 } }), SIX());
    assert.deepEqual(ids(middle), ['p1', 'p6', 'p5', 'p4', 'p2', 'p3']);
    assert.deepEqual(
      middle.map((c) => c.score),
      [6, 5.75, 5.5, 5.25, 5, 4],
    );
  });

  test('the predecessor’s `cur = len - i`: a bottom item pinned up was ignored, a top one pinned down was moved', async () => {
    // p6 (index 5) to 1 is a move up: allowed without down-ranking. The predecessor compared 1
    // with len - i = 1 and ignored the pin.
    assert.deepEqual(view(await run(pin({ positions: { p6: 1 } }), SIX())), [
      ['p1', 6],
      ['p6', 5.5],
      ['p2', 5],
      ['p3', 4],
      ['p4', 3],
      ['p5', 2],
    ]);
    // p1 (index 0) to 4 is a move down: ignored. The predecessor compared 4 with len - i = 6 and moved it.
    const input = SIX();
    assert.deepEqual(view(await run(pin({ positions: { p1: 4 } }), input)), view(input));
  });

  test('positions computed per request', async () => {
    const step = pin({ positions: (request) => (request.pins ?? {}) as Record<string, number> });
    assert.deepEqual(ids(await run(step, SIX(), { pins: { p4: 0 } })), ['p4', 'p1', 'p2', 'p3', 'p5', 'p6']);
    assert.deepEqual(ids(await run(step, SIX(), {})), ids(SIX()));
    const async = pin({ positions: async () => new Map([['p2', 0]]) });
    assert.deepEqual(ids(await run(async, SIX())), ['p2', 'p1', 'p3', 'p4', 'p5', 'p6']);
  });

  test('listing order: a Map keeps its order; an object lists integer-like ids first, ascending', async () => {
    const input = () => list(['x', 3], ['10', 2], ['2', 1]);
    const byMap = pin({
      positions: new Map([
        ['10', 0],
        ['2', 0],
      ]),
    });
    assert.deepEqual(ids(await run(byMap, input())), ['10', '2', 'x']);
    // JavaScript enumerates {"10": 0, "2": 0} as "2", "10": "2" is listed first.
    assert.deepEqual(ids(await run(pin({ positions: { '10': 0, '2': 0 } }), input())), ['2', '10', 'x']);
  });

  test('an id present twice: its first (best-scored) occurrence is pinned', async () => {
    const out = await run(pin({ positions: { x: 0 } }), list(['a', 6], ['x', 5], ['b', 4], ['x', 3]));
    assert.deepEqual(view(out), [
      ['x', 7],
      ['a', 6],
      ['b', 4],
      ['x', 3],
    ]);
  });

  test('every candidate pinned: the order is the pins’, scores still never increase', async () => {
    const out = await run(
      pin({ positions: { b: 0, a: 1 }, allowDownRanking: true }),
      list(['a', 2], ['b', 1]),
    );
    assert.deepEqual(view(out), [
      ['b', 1],
      ['a', 0],
    ]);
  });

  test('negative or fractional positions are refused (when declared, or when computed)', async () => {
    assert.throws(() => pin({ positions: { a: -1 } }), /integer ≥ 0/);
    assert.throws(() => pin({ positions: { a: 1.5 } }), /integer ≥ 0/);
    const computed = pin({ name: 'Promoted', positions: () => ({ p1: Number.NaN }) });
    await assert.rejects(async () => computed.apply(SIX(), {}), /Promoted: the position of "p1"/);
  });

  test('property: any pins give a permutation in the pinned order that the re-sort keeps', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 1, maxLength: 12 }),
        fc.uniqueArray(fc.tuple(fc.nat(14), fc.nat(14)), { selector: ([index]) => index, maxLength: 8 }),
        fc.boolean(),
        async (rawScores, rawPins, allowDownRanking) => {
          const scores = [...rawScores].sort((a, b) => b - a);
          const input = list(...scores.map((score, i): [string, number] => [`c${i}`, score]));
          const n = input.length;
          const pins = new Map(rawPins.map(([index, position]) => [`c${index}`, position] as const));
          const out = await run(pin({ positions: pins, allowDownRanking }), input);
          assert.deepEqual([...ids(out)].sort(), [...ids(input)].sort(), 'a permutation');
          // A pin applies when its id exists and (with down-ranking) always, else when it is not a move down.
          const applies = (id: string, position: number) => {
            const index = Number(id.slice(1));
            return index < n && (allowDownRanking || Math.min(position, n - 1) <= index);
          };
          const applied = [...pins].filter(([id, position]) => applies(id, position));
          const appliedIds = new Set<string>(applied.map(([id]) => id));
          // The others keep their relative order and their scores.
          const others = out.filter((c) => !appliedIds.has(c.id));
          assert.deepEqual(view(others), view(input.filter((c) => !appliedIds.has(c.id))));
          // With distinct clamped positions, every applied pin is exactly at its position.
          const clamped = applied.map(([, position]) => Math.min(position, n - 1));
          if (new Set(clamped).size === clamped.length)
            for (const [id, position] of applied) assert.equal(out[Math.min(position, n - 1)]?.id, id);
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('filter', () => {
  test('drops candidates by predicate; the rest keep order and scores', async () => {
    const input = list(
      ['a', 4, { number_in_stock: 0 }],
      ['b', 3, { number_in_stock: 5 }],
      ['c', 2, { number_in_stock: null }],
      ['d', 1, { number_in_stock: 1 }],
    );
    const inStock = filter({
      name: 'in_stock',
      keep: (p) => ((p.number_in_stock as number | null) ?? 0) > 0,
    });
    assert.equal(inStock.name, 'in_stock');
    assert.deepEqual(view(await run(inStock, input)), [
      ['b', 3],
      ['d', 1],
    ]);
  });

  test('the predicate gets the score and the request', async () => {
    const step = filter({ keep: (_, score, request) => score >= (request.min_score as number) });
    assert.deepEqual(ids(await run(step, SIX(), { min_score: 4 })), ['p1', 'p2', 'p3']);
    assert.deepEqual(await run(step, SIX(), { min_score: 99 }), []);
  });
});

describe('dedupe', () => {
  test('keeps the highest-scored candidate per brand; a missing brand is never a duplicate', async () => {
    const input = list(
      ['a', 6, { brand: 'X' }],
      ['b', 5, { brand: 'Y' }],
      ['c', 4, { brand: 'X' }],
      ['d', 3, { brand: null }],
      ['e', 2, {}],
      ['f', 1, { brand: 'Y' }],
      ['g', 0, { brand: '' }],
      ['h', -1, { brand: '' }],
    );
    assert.deepEqual(view(await run(dedupe({ by: 'brand' }), input)), [
      ['a', 6],
      ['b', 5],
      ['d', 3],
      ['e', 2],
      ['g', 0],
      ['h', -1],
    ]);
  });

  test('equal scores: the first in the ranked order is kept; an unsorted input is ranked first', async () => {
    const tied = list(['a', 1, { brand: 'X' }], ['b', 1, { brand: 'X' }]);
    assert.deepEqual(ids(await run(dedupe({ by: 'brand' }), tied)), ['a']);
    const unsorted = list(['low', 1, { brand: 'X' }], ['high', 9, { brand: 'X' }]);
    assert.deepEqual(ids(await run(dedupe({ by: 'brand' }), unsorted)), ['high']);
  });

  test('an array attribute: dropped when any of its values belongs to a kept candidate', async () => {
    const input = list(
      ['a', 4, { categories: ['x', 'y'] }],
      ['b', 3, { categories: ['y'] }],
      ['c', 2, { categories: ['z'] }],
      ['d', 1, { categories: ['w', 'z'] }],
      ['e', 0, { categories: [] }],
    );
    assert.deepEqual(ids(await run(dedupe({ by: 'categories' }), input)), ['a', 'c', 'e']);
  });

  test('by id (duplicate candidates) and by a function', async () => {
    const input = list(['a', 3, { title: 'Red Mug' }], ['b', 2, { title: 'red mug ' }], ['a', 1]);
    assert.deepEqual(view(await run(dedupe({ by: 'id' }), input)), [
      ['a', 3],
      ['b', 2],
    ]);
    const byTitle = dedupe({ by: (p) => (p.title as string | undefined)?.trim().toLowerCase() });
    assert.deepEqual(ids(await run(byTitle, input)), ['a', 'a']);
  });
});

describe('diversity', () => {
  // Scores 9..1; brands A A A B B A C B A.
  const NINE = () =>
    list(
      ...(['A', 'A', 'A', 'B', 'B', 'A', 'C', 'B', 'A'] as const).map(
        (brand, i): [string, number, Attributes] => [`i${i + 1}`, 9 - i, { brand }],
      ),
    );
  const brandsOf = (out: ScoredCandidate[]) => out.map((c) => c.entity.brand);
  const pages = <T>(items: T[], size: number, offset = 0) => {
    const result = offset > 0 ? [items.slice(0, offset)] : [];
    for (let i = offset; i < items.length; i += size) result.push(items.slice(i, i + size));
    return result;
  };

  test('k = 1, pages of 3: one per brand per page while the brands last, then score order', async () => {
    const out = await run(diversity({ by: 'brand', maxPerValue: 1 }), NINE(), { user_page_size: 3 });
    // Page 1: i1 (A), i4 (first B), i7 (first C). Page 2: i2 (A), i5 (B), then no brand fits
    // (A and B used, no C left): the best remaining, i3. Page 3: i6, i8, i9.
    assert.deepEqual(ids(out), ['i1', 'i4', 'i7', 'i2', 'i5', 'i3', 'i6', 'i8', 'i9']);
    assert.deepEqual(pages(brandsOf(out), 3), [
      ['A', 'B', 'C'],
      ['A', 'B', 'A'],
      ['A', 'B', 'A'],
    ]);
    // Scores: the longest never-increasing run (i1 9, i2 8, i3 7, i6 4, i8 2, i9 1) keeps its
    // scores; i4, i7 and i5 get scores between their new neighbours.
    const score = new Map(out.map((c) => [c.id, c.score]));
    for (const [id, s] of [
      ['i1', 9],
      ['i2', 8],
      ['i3', 7],
      ['i6', 4],
      ['i8', 2],
      ['i9', 1],
    ] as const)
      assert.equal(score.get(id), s, id);
    assert.ok(Math.abs((score.get('i4') ?? 0) - (9 - 1 / 3)) < 1e-12);
    assert.ok(Math.abs((score.get('i7') ?? 0) - (8 + 1 / 3)) < 1e-12);
    assert.equal(score.get('i5'), 7.5);
  });

  test('k = 2, pages of 4: the third A waits for the second page', async () => {
    const out = await run(diversity({ by: 'brand', maxPerValue: 2 }), NINE(), { user_page_size: 4 });
    assert.deepEqual(ids(out), ['i1', 'i2', 'i4', 'i5', 'i3', 'i6', 'i7', 'i8', 'i9']);
    assert.deepEqual(pages(brandsOf(out), 4), [['A', 'A', 'B', 'B'], ['A', 'A', 'C', 'B'], ['A']]);
    // Only i3 (7, now after i5 at 5) changes: between i5 (5) and i6 (4).
    assert.deepEqual(
      out.map((c) => c.score),
      [9, 8, 6, 5, 4.5, 4, 3, 2, 1],
    );
  });

  test('the default page size is 10; a cap already met changes nothing', async () => {
    const input = NINE();
    const out = await run(diversity({ by: 'brand', maxPerValue: 5 }), input);
    assert.deepEqual(view(out), view(input));
    // k = 3 over one page of 10: i6, the fourth A, moves below i8.
    const three = await run(diversity({ by: 'brand', maxPerValue: 3 }), NINE());
    assert.deepEqual(ids(three), ['i1', 'i2', 'i3', 'i4', 'i5', 'i7', 'i8', 'i6', 'i9']);
  });

  test('a user page that starts mid-way through the candidates: boundaries follow the user pages', async () => {
    // 8 candidates of candidate page 1 (size 8), user pages of 3: user page 3 starts at
    // 3 × 3 − 8 = 1, so the pages of this list are [0], [1–3], [4–6], [7].
    const input = list(
      ...(['A', 'A', 'B', 'B', 'C', 'C', 'D', 'D'] as const).map((brand, i): [string, number, Attributes] => [
        `j${i + 1}`,
        8 - i,
        { brand },
      ]),
    );
    const request = {
      user_page_size: 3,
      user_page: 3,
      candidate_page: 1,
      candidate_page_size: 8,
      candidates: input.map((c) => c.entity),
    };
    assert.deepEqual(pageLayout(request), { size: 3, offset: 1 });
    const out = await run(diversity({ by: 'brand', maxPerValue: 1 }), input, request);
    assert.deepEqual(ids(out), ['j1', 'j2', 'j3', 'j5', 'j4', 'j6', 'j7', 'j8']);
    assert.deepEqual(pages(brandsOf(out), 3, 1), [['A'], ['A', 'B', 'C'], ['B', 'C', 'D'], ['D']]);
    // The same candidates on candidate page 0: pages [0–2], [3–5], [6–7].
    const aligned = await run(diversity({ by: 'brand', maxPerValue: 1 }), input, { user_page_size: 3 });
    assert.deepEqual(pages(brandsOf(aligned), 3), [
      ['A', 'B', 'C'],
      ['A', 'B', 'C'],
      ['D', 'D'],
    ]);
  });

  test('candidates without a value are never capped; arrays count every value', async () => {
    const input = list(
      ['a', 5, { categories: ['x', 'y'] }],
      ['b', 4, { categories: ['y'] }],
      ['c', 3, { categories: [] }],
      ['d', 2, { categories: ['x'] }],
      ['e', 1, { categories: ['z'] }],
    );
    const out = await run(diversity({ by: 'categories', maxPerValue: 1 }), input, { user_page_size: 3 });
    // Page 1: a (x, y), c (no value), e (z); b and d (y, x) wait for page 2.
    assert.deepEqual(ids(out), ['a', 'c', 'e', 'b', 'd']);
  });

  test('one brand only: nothing can be diversified, nothing changes', async () => {
    const input = list(['a', 3, { brand: 'A' }], ['b', 2, { brand: 'A' }], ['c', 1, { brand: 'A' }]);
    const out = await run(diversity({ by: 'brand', maxPerValue: 1 }), input, { user_page_size: 2 });
    assert.deepEqual(view(out), view(input));
  });

  test('maxPerValue must be an integer ≥ 1', () => {
    for (const maxPerValue of [0, -1, 1.5, Number.NaN])
      assert.throws(() => diversity({ by: 'brand', maxPerValue }), /maxPerValue/);
  });
});

describe('scores between neighbours (fitScores)', () => {
  test('huge scores of opposite signs stay finite and in order', () => {
    const input = list(['a', 1e308], ['b', -1e308], ['c', 0]);
    const out = fitScores(input, (i) => i !== 2 && i !== 1);
    // Only a is anchored: b fits below it and keeps its score; c steps down by 1 from b (a tie at this magnitude).
    for (const c of out) assert.ok(Number.isFinite(c.score));
    const between = fitScores(list(['a', 1.7e308], ['x', 1.75e308], ['b', -1.7e308]), (i) => i !== 1);
    // The gap overflows a double; the midpoint is computed without it.
    assert.equal(between[1]?.score, 0);
  });

  test('longestNonIncreasing keeps ties and finds the longest run', () => {
    assert.deepEqual(longestNonIncreasing([9, 6, 3, 8, 5, 7, 4, 2, 1]), [
      true,
      false,
      false,
      true,
      false,
      true,
      true,
      true,
      true,
    ]);
    assert.deepEqual(longestNonIncreasing([2, 2, 2]), [true, true, true]);
    assert.deepEqual(longestNonIncreasing([]), []);
    assert.deepEqual(longestNonIncreasing([1, 2]).filter(Boolean).length, 1);
  });
});
