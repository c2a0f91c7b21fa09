/**
 * The sequential test `rankd promotion decide` decides with (mSPRT): its likelihood ratio against
 * a direct numerical integration of the Beta mixture, its symmetry and direction, and what it is
 * for: looked at after every page of streams where both rankers are as good, it decides in at
 * most α of them, while the fixed-sample sign test looked at as often decides far more often; and
 * it does decide when one ranker is better.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { signTestPValue } from '../src/experiments/interleaving-statistics.js';
import { logGamma, sequentialTest } from '../src/experiments/sequential-test.js';
import { seededRandom } from '../src/training/random.js';

test('ln Γ at known points', () => {
  assert.ok(Math.abs(logGamma(5) - Math.log(24)) < 1e-12);
  assert.ok(Math.abs(logGamma(0.5) - 0.5 * Math.log(Math.PI)) < 1e-12);
  assert.ok(Math.abs(logGamma(101) - 363.73937555556347) < 1e-9);
});

/** Λ by Simpson's rule: ∫ p^w (1−p)^l Beta(m, m)(p) dp ÷ ½^(w+l), the density normalised by the same rule. */
function integrated(wins: number, losses: number, m: number): number {
  const steps = 20_000;
  const h = 1 / steps;
  let numerator = 0;
  let norm = 0;
  for (let i = 1; i < steps; i++) {
    const p = i * h;
    const weight = i % 2 === 1 ? 4 : 2;
    const prior = Math.exp((m - 1) * (Math.log(p) + Math.log(1 - p)));
    norm += weight * prior;
    numerator += weight * prior * Math.exp(wins * Math.log(2 * p) + losses * Math.log(2 * (1 - p)));
  }
  return numerator / norm;
}

test('the likelihood ratio is the Beta mixture over the binomial at ½', () => {
  for (const [wins, losses, m] of [
    [0, 0, 50],
    [30, 10, 50],
    [10, 30, 50],
    [120, 80, 50],
    [55, 45, 5],
    [7, 0, 2],
  ] as const) {
    const { likelihoodRatio } = sequentialTest(wins, losses, { mixture: m });
    const expected = integrated(wins, losses, m);
    assert.ok(
      Math.abs(likelihoodRatio / expected - 1) < 1e-6,
      `${wins}/${losses}, m ${m}: ${likelihoodRatio} vs ${expected}`,
    );
  }
});

test('symmetric, and decided in the direction of the wins once Λ reaches 1/α', () => {
  const a = sequentialTest(70, 30);
  const b = sequentialTest(30, 70);
  assert.ok(Math.abs(a.likelihoodRatio - b.likelihoodRatio) < 1e-9 * a.likelihoodRatio);
  assert.equal(a.decision, 'challenger_wins');
  assert.equal(b.decision, 'challenger_loses');
  assert.ok(a.likelihoodRatio >= 20 && Math.abs(a.alwaysValidPValue - 1 / a.likelihoodRatio) < 1e-15);
  const even = sequentialTest(50, 50);
  assert.ok(even.likelihoodRatio < 1);
  assert.equal(even.decision, 'undecided');
  assert.equal(even.alwaysValidPValue, 1);
  // All wins: 28 pages are not enough at m = 50 (Λ ≈ 16), 30 are (Λ ≈ 30).
  assert.equal(sequentialTest(28, 0).decision, 'undecided');
  assert.equal(sequentialTest(30, 0).decision, 'challenger_wins');
  // A stricter α asks for more.
  assert.equal(sequentialTest(30, 0, { alpha: 0.01 }).decision, 'undecided');
});

/** Streams of decided pages, each a win with probability `p`; per stream, whether each test ever decided within `looks`. */
function everDecided(p: number, streams: number, looks: number, seed: number) {
  const random = seededRandom(seed);
  let sequential = 0;
  let signTest = 0;
  for (let s = 0; s < streams; s++) {
    let wins = 0;
    let losses = 0;
    let sequentialDecided = false;
    let signDecided = false;
    for (let n = 1; n <= looks; n++) {
      if (random() < p) wins += 1;
      else losses += 1;
      if (!sequentialDecided && sequentialTest(wins, losses).decision !== 'undecided')
        sequentialDecided = true;
      if (!signDecided && signTestPValue(wins, losses) < 0.05) signDecided = true;
    }
    if (sequentialDecided) sequential += 1;
    if (signDecided) signTest += 1;
  }
  return { sequential: sequential / streams, signTest: signTest / streams };
}

test('looked at after every page of 400, with both rankers as good: at most α decide; the sign test looked at as often, far more', () => {
  const { sequential, signTest } = everDecided(0.5, 300, 400, 11);
  // At most α = 5% in expectation; 300 streams give a standard error of 1.3 points.
  assert.ok(sequential <= 0.05 + 0.04, `mSPRT decided in ${sequential}`);
  assert.ok(signTest > 0.15, `the sign test looked at each page decided in ${signTest}`);
  assert.ok(signTest > 2 * sequential, `${signTest} vs ${sequential}`);
});

test('with a better challenger (win share 0.65) it decides, and for the challenger', () => {
  const random = seededRandom(5);
  let decidedFor = 0;
  for (let s = 0; s < 50; s++) {
    let wins = 0;
    let losses = 0;
    for (let n = 1; n <= 1000; n++) {
      if (random() < 0.65) wins += 1;
      else losses += 1;
      const { decision } = sequentialTest(wins, losses);
      if (decision === 'undecided') continue;
      if (decision === 'challenger_wins') decidedFor += 1;
      break;
    }
  }
  assert.ok(decidedFor >= 48, `decided for the challenger in ${decidedFor} of 50`);
});
