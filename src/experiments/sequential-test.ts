import type { InterleavingDecision } from './interleaving-statistics.js';

/** The Lanczos coefficients (g = 7, n = 9): ln Γ to about 15 digits. */
const LANCZOS = [
  0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
  12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
];

/** ln Γ(x) for x > 0. */
export function logGamma(x: number): number {
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - logGamma(1 - x);
  const z = x - 1;
  let sum = LANCZOS[0] as number;
  for (let i = 1; i < LANCZOS.length; i++) sum += (LANCZOS[i] as number) / (z + i);
  const t = z + 7.5;
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(sum);
}

const logBeta = (a: number, b: number) => logGamma(a) + logGamma(b) - logGamma(a + b);

/** How the sequential test is set. */
export interface SequentialTestOptions {
  /** The chance of a decision at all, over every look, when both rankers are as good. @defaultValue 0.05 */
  readonly alpha?: number;
  /**
   * The mixture Beta(m, m) over the challenger's win share: its spread (sd ≈ 1/(2√(2m+1)), 0.05
   * for the default) is the size of preference the test is quickest to find. @defaultValue 50
   */
  readonly mixture?: number;
}

/** What the sequential test says of the wins and losses so far. */
export interface SequentialTestResult {
  /**
   * The mixture likelihood ratio Λ (an e-value): how much likelier the wins and losses are if the
   * win share is drawn from the mixture than if it is ½. Under ½ its expectation is 1 at every look.
   */
  readonly likelihoodRatio: number;
  /** min(1, 1/Λ): a p-value that stays valid however often it is looked at. */
  readonly alwaysValidPValue: number;
  /** Decided when Λ ≥ 1/α, in the direction of the wins; else `undecided`. */
  readonly decision: InterleavingDecision;
  readonly alpha: number;
  readonly mixture: number;
}

/**
 * The mixture sequential probability ratio test (mSPRT; Johari, Pekelis and Walsh, "Always valid
 * inference", 2017) of an interleaving experiment's wins against its losses (ties left out):
 * Λ = B(wins + m, losses + m) / B(m, m) × 2^(wins + losses), the Beta(m, m) mixture of the
 * binomial likelihood over the one at ½. Λ is a non-negative martingale under ½, so by Ville's
 * inequality the chance that it ever reaches 1/α, at any number of looks, is at most α: looking
 * after every page does not inflate false wins, unlike a fixed-sample sign test looked at again
 * and again. Promotion by interleaving decides with this (`rankd promotion decide`).
 */
export function sequentialTest(
  wins: number,
  losses: number,
  options: SequentialTestOptions = {},
): SequentialTestResult {
  const alpha = options.alpha ?? 0.05;
  const mixture = options.mixture ?? 50;
  const n = wins + losses;
  const logRatio = logBeta(wins + mixture, losses + mixture) - logBeta(mixture, mixture) + n * Math.LN2;
  const likelihoodRatio = Math.exp(logRatio);
  const decided = logRatio >= -Math.log(alpha);
  return {
    likelihoodRatio,
    alwaysValidPValue: Math.min(1, Math.exp(-logRatio)),
    decision: !decided ? 'undecided' : wins > losses ? 'challenger_wins' : 'challenger_loses',
    alpha,
    mixture,
  };
}
