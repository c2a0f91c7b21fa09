/** z of a two-sided 95% interval. */
const Z95 = 1.959963984540054;

/**
 * What an interleaving experiment's impressions came to: on each page with clicks on its items,
 * the challenger wins when more of the clicked items were placed by it, loses when fewer, else ties.
 */
export interface InterleavingCounts {
  /** Interleaved pages shown. */
  readonly impressions: number;
  /** Of those, pages with at least one credited click. */
  readonly withClicks: number;
  readonly wins: number;
  readonly losses: number;
  readonly ties: number;
  /** Clicked items credited to each ranker, over all pages. */
  readonly clicks: Readonly<{ control: number; challenger: number }>;
}

/** What the report decides: the challenger is better, worse, or it cannot say yet (at 95%). */
export type InterleavingDecision = 'challenger_wins' | 'challenger_loses' | 'undecided';

/** The statistics of an interleaving experiment, from its {@link InterleavingCounts}. */
export interface InterleavingStatistics {
  /**
   * The preference Δ = (wins + ½ ties) / (pages with clicks) − ½, from −½ to ½ (Chapelle,
   * Joachims, Radlinski and Yue, 2012): above 0, users preferred the challenger's items.
   */
  readonly delta: number;
  /** 95% interval of Δ: the Wilson interval of the challenger's share of decided pages, scaled. */
  readonly deltaInterval: readonly [number, number];
  /** Wins ÷ (wins + losses): the challenger's share of the pages that were not ties. */
  readonly winShare: number;
  /** Its 95% Wilson score interval. */
  readonly winShareInterval: readonly [number, number];
  /** Two-sided exact binomial sign test of wins against losses (ties left out), p = ½. */
  readonly pValue: number;
  /** `pValue < 0.05`. */
  readonly significant: boolean;
  readonly decision: InterleavingDecision;
}

/**
 * P(X ≤ k) for X ~ Binomial(n, ½), exactly (to the double's precision): the probability at k
 * from its logarithm, then the smaller ones below it as ratios, stopping once they no longer count.
 */
function lowerTail(k: number, n: number): number {
  let logAtK = -n * Math.LN2;
  for (let j = 1; j <= k; j++) logAtK += Math.log((n - k + j) / j);
  let sum = 0;
  let term = 1;
  for (let i = k; i >= 0; i--) {
    sum += term;
    term *= i / (n - i + 1);
    if (term < sum * 1e-17) break;
  }
  return Math.exp(logAtK) * sum;
}

/**
 * The two-sided exact sign test of `wins` against `losses`: the probability, if both rankers were
 * as good, of a split at least this uneven. 1 when there is nothing to test.
 */
export function signTestPValue(wins: number, losses: number): number {
  const n = wins + losses;
  if (n === 0) return 1;
  return Math.min(1, 2 * lowerTail(Math.min(wins, losses), n));
}

/** The Wilson score interval of `successes` in `trials` at `z` (95% by default); [0, 1] for no trials. */
export function wilsonInterval(successes: number, trials: number, z = Z95): [number, number] {
  if (trials === 0) return [0, 1];
  const p = successes / trials;
  const z2 = z * z;
  const scale = 1 + z2 / trials;
  const center = (p + z2 / (2 * trials)) / scale;
  const half = (z / scale) * Math.sqrt((p * (1 - p)) / trials + z2 / (4 * trials * trials));
  return [Math.max(0, center - half), Math.min(1, center + half)];
}

/** The preference Δ, its interval, the sign test and the decision at 95% for `counts`. */
export function interleavingStatistics(counts: InterleavingCounts): InterleavingStatistics {
  const { wins, losses, ties } = counts;
  const decided = wins + losses;
  const pages = decided + ties;
  const delta = pages === 0 ? 0 : (wins + ties / 2) / pages - 0.5;
  const winShareInterval = wilsonInterval(wins, decided);
  // Δ = (share − ½) × decided ÷ pages, ties taken as they came.
  const scale = pages === 0 ? 0 : decided / pages;
  const deltaInterval: [number, number] = [
    (winShareInterval[0] - 0.5) * scale,
    (winShareInterval[1] - 0.5) * scale,
  ];
  const pValue = signTestPValue(wins, losses);
  const significant = pValue < 0.05;
  return {
    delta,
    deltaInterval,
    winShare: decided === 0 ? 0.5 : wins / decided,
    winShareInterval,
    pValue,
    significant,
    decision: !significant ? 'undecided' : wins > losses ? 'challenger_wins' : 'challenger_loses',
  };
}
