/**
 * The significance of an interleaving experiment on synthetic counts: the sign test's p-value
 * against exact binomial sums (BigInt) and against known values, the Wilson interval against
 * known values, the preference Δ and the decision at 95%.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  type InterleavingCounts,
  interleavingStatistics,
  signTestPValue,
  wilsonInterval,
} from '../src/experiments/interleaving-statistics.js';

/** 2·P(X ≤ min(w, l)) for X ~ Binomial(w + l, ½), from exact integer sums, capped at 1. */
function exactSignTest(wins: number, losses: number): number {
  const n = BigInt(wins + losses);
  const m = BigInt(Math.min(wins, losses));
  let coefficient = 1n;
  let sum = 0n;
  for (let k = 0n; k <= m; k++) {
    sum += coefficient;
    coefficient = (coefficient * (n - k)) / (k + 1n);
  }
  // Both below 2^401, so each converts to a double within a relative 2^-53.
  return Math.min(1, Number(2n * sum) / Number(2n ** n));
}

test('the sign test equals the exact binomial sum', () => {
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 400 }), fc.integer({ min: 0, max: 400 }), (wins, losses) => {
      const exact = exactSignTest(wins, losses);
      const p = signTestPValue(wins, losses);
      assert.ok(Math.abs(p - exact) <= 1e-9 * Math.max(exact, 1e-300), `${wins}/${losses}: ${p} vs ${exact}`);
    }),
  );
});

test('the sign test gives the known values (scipy.stats.binomtest, two-sided)', () => {
  // 2·(1 + 10 + 45)/2^10, 2·(1 + 20 + 190 + 1140 + 4845 + 15504)/2^20.
  assert.ok(Math.abs(signTestPValue(2, 8) - 0.109375) < 1e-15);
  assert.ok(Math.abs(signTestPValue(15, 5) - (2 * 21700) / 2 ** 20) < 1e-15);
  const known: Array<[number, number, number]> = [
    [6, 18, 0.022655844688415527],
    [480, 520, 0.2174482932041415],
    [5000, 5300, 0.003215819673645259],
    [0, 30, 1.862645149230957e-9],
  ];
  for (const [wins, losses, p] of known)
    assert.ok(Math.abs(signTestPValue(wins, losses) - p) < 1e-9 * p, `${wins}/${losses}`);
  assert.equal(signTestPValue(7, 7), 1);
  assert.equal(signTestPValue(0, 0), 1);
  // Large counts stay finite and exact enough: 50,000 each way is no evidence, 51,000 against 49,000 is.
  assert.equal(signTestPValue(50_000, 50_000), 1);
  assert.ok(signTestPValue(51_000, 49_000) < 1e-9);
});

test('the Wilson interval gives the known values', () => {
  const known: Array<[number, number, number, number]> = [
    [15, 20, 0.5312991223812561, 0.8881382985923344],
    [81, 263, 0.2552885198782742, 0.36620957698280004],
    [0, 10, 0, 0.27753279986288926],
  ];
  for (const [s, n, low, high] of known) {
    const [l, h] = wilsonInterval(s, n);
    assert.ok(Math.abs(l - low) < 1e-12 && Math.abs(h - high) < 1e-12, `${s}/${n}: [${l}, ${h}]`);
  }
  assert.deepEqual(wilsonInterval(0, 0), [0, 1]);
});

const counts = (wins: number, losses: number, ties: number): InterleavingCounts => ({
  impressions: wins + losses + ties + 100,
  withClicks: wins + losses + ties,
  wins,
  losses,
  ties,
  clicks: { control: 0, challenger: 0 },
});

test('Δ, its interval and the decision', () => {
  const win = interleavingStatistics(counts(18, 6, 6));
  // Δ = (18 + 3)/30 − ½ = 0.2; the interval is the Wilson interval of 18/24, less ½, times 24/30.
  assert.ok(Math.abs(win.delta - 0.2) < 1e-15);
  const [low, high] = wilsonInterval(18, 24);
  assert.deepEqual(win.deltaInterval, [(low - 0.5) * 0.8, (high - 0.5) * 0.8]);
  assert.ok(win.deltaInterval[0] > 0 && win.deltaInterval[0] < win.delta && win.delta < win.deltaInterval[1]);
  assert.equal(win.winShare, 0.75);
  assert.equal(win.significant, true);
  assert.equal(win.decision, 'challenger_wins');

  const loss = interleavingStatistics(counts(6, 18, 6));
  assert.ok(Math.abs(loss.delta + 0.2) < 1e-15);
  assert.equal(loss.decision, 'challenger_loses');

  // 13 against 7 is not significant at 95% (p = 0.263): undecided.
  const close = interleavingStatistics(counts(13, 7, 40));
  assert.ok(close.pValue > 0.05);
  assert.equal(close.significant, false);
  assert.equal(close.decision, 'undecided');
  assert.ok(close.deltaInterval[0] < 0 && close.deltaInterval[1] > 0);

  const none = interleavingStatistics(counts(0, 0, 0));
  assert.equal(none.delta, 0);
  assert.equal(none.decision, 'undecided');
});
