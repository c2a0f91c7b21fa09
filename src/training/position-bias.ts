/**
 * How likely a user is to look at each position of a page, estimated from logged clicks
 * (docs/reference/training.md#position-bias). A click needs a look (examination) and a product
 * that attracts; under that model (the position-based click model) the chance of a click at
 * position k is θ_k · γ, θ_k the examination of position k and γ the product's attraction. The
 * same product in the same context (the same logged inputs: the same query match, the same user)
 * shown at two positions a and b has the same γ, so its click rates there differ by θ_a / θ_b
 * alone: an intervention the logs hold already whenever candidates, model versions or variants
 * moved a product (intervention harvesting, Agarwal et al. 2019).
 *
 * Each ratio θ_a / θ_b is the Mantel–Haenszel rate ratio over the contexts seen at both a and b,
 * which stays consistent with many contexts of few impressions each; the curve is the weighted
 * least-squares fit of log θ to every pair's log ratio (weights: the inverse of the
 * Greenland–Robins variance), with θ of the top position 1.
 */

/** One logged impression, as the estimate reads it. */
export interface PositionObservation {
  /** The product and its context: impressions with the same key are the same product, equally attractive. */
  readonly context: string;
  /** Position in the page shown, from 0 (the top). */
  readonly position: number;
  /** Whether the user acted on it (any feedback graded above 0). */
  readonly clicked: boolean;
}

/** What the estimate found, usable or not. */
export interface PositionBiasEstimate {
  /**
   * Examination of each position relative to the top (1 at position 0), positions from 0 up to
   * the page's last; `undefined` when the logs cannot tell ({@link reason} says why).
   */
  readonly curve: readonly number[] | undefined;
  /** Standard error of log θ per position (0 at the top; NaN where not estimated). */
  readonly logStandardErrors: readonly number[];
  /** Positions 0..estimated−1 were estimated; later ones (too little data) repeat the last estimate. */
  readonly estimated: number;
  /** Contexts seen at two positions or more: the data the estimate rests on. */
  readonly contexts: number;
  /** Impressions of those contexts. */
  readonly impressions: number;
  /** Why there is no curve. */
  readonly reason?: string;
}

/** How {@link estimatePositionBias} decides what it can estimate. */
export interface PositionBiasOptions {
  /**
   * A position counts as estimated while the standard error of its log θ stays at most this
   * (0.2: about ±20%). @defaultValue 0.2
   */
  readonly maxLogStandardError?: number;
  /** The most positions estimated (a deeper position shares the last one's). @defaultValue 100 */
  readonly maxPositions?: number;
}

/** Clicks and impressions of one context at one position. */
interface Cell {
  impressions: number;
  clicks: number;
}

/** Sums over contexts of one pair of positions (a < b): the Mantel–Haenszel terms. */
interface PairSums {
  /** Σ c_a·n_b / T. */
  a: number;
  /** Σ c_b·n_a / T. */
  b: number;
  /** Σ n_a·n_b·(c_a + c_b) / T², the Greenland–Robins variance numerator. */
  v: number;
}

/** Solves the symmetric positive system `m·x = y` in place (Gaussian elimination); undefined if singular. */
function solve(m: number[][], y: number[]): number[] | undefined {
  const n = y.length;
  for (let i = 0; i < n; i++) {
    const row = m[i] as number[];
    const pivot = row[i] as number;
    if (!(Math.abs(pivot) > 1e-12)) return undefined;
    for (let r = i + 1; r < n; r++) {
      const other = m[r] as number[];
      const f = (other[i] as number) / pivot;
      if (f === 0) continue;
      for (let c = i; c < n; c++) other[c] = (other[c] as number) - f * (row[c] as number);
      y[r] = (y[r] as number) - f * (y[i] as number);
    }
  }
  const x = new Array<number>(n).fill(0);
  for (let i = n - 1; i >= 0; i--) {
    const row = m[i] as number[];
    let sum = y[i] as number;
    for (let c = i + 1; c < n; c++) sum -= (row[c] as number) * (x[c] as number);
    x[i] = sum / (row[i] as number);
  }
  return x;
}

/** The diagonal of a symmetric positive matrix's inverse (each unknown's variance); undefined if singular. */
function inverseDiagonal(m: readonly number[][]): number[] | undefined {
  const n = m.length;
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const unit = new Array<number>(n).fill(0);
    unit[i] = 1;
    const column = solve(
      m.map((row) => [...row]),
      unit,
    );
    if (column === undefined) return undefined;
    out.push(column[i] as number);
  }
  return out;
}

/**
 * Estimates the examination curve from logged impressions (see the module's comment). Positions
 * deeper than the last one estimated to `maxLogStandardError` take that one's value; with fewer
 * than two positions estimated there is no curve.
 */
export function estimatePositionBias(
  observations: Iterable<PositionObservation>,
  options: PositionBiasOptions = {},
): PositionBiasEstimate {
  const maxPositions = options.maxPositions ?? 100;
  const maxError = options.maxLogStandardError ?? 0.2;
  const byContext = new Map<string, Map<number, Cell>>();
  let page = 0;
  for (const { context, position, clicked } of observations) {
    if (!Number.isInteger(position) || position < 0) continue;
    const k = Math.min(position, maxPositions - 1);
    page = Math.max(page, k + 1);
    const cells = byContext.get(context) ?? new Map<number, Cell>();
    byContext.set(context, cells);
    const cell = cells.get(k) ?? { impressions: 0, clicks: 0 };
    cells.set(k, cell);
    cell.impressions += 1;
    if (clicked) cell.clicks += 1;
  }
  const pairs = new Map<number, PairSums>();
  let contexts = 0;
  let impressions = 0;
  for (const cells of byContext.values()) {
    if (cells.size < 2) continue;
    contexts += 1;
    const seen = [...cells.entries()].sort((x, y) => x[0] - y[0]);
    for (const [, cell] of seen) impressions += cell.impressions;
    for (let i = 0; i < seen.length; i++) {
      const [a, ca] = seen[i] as [number, Cell];
      for (let j = i + 1; j < seen.length; j++) {
        const [b, cb] = seen[j] as [number, Cell];
        const total = ca.impressions + cb.impressions;
        const key = a * maxPositions + b;
        const sums = pairs.get(key) ?? { a: 0, b: 0, v: 0 };
        pairs.set(key, sums);
        sums.a += (ca.clicks * cb.impressions) / total;
        sums.b += (cb.clicks * ca.impressions) / total;
        sums.v += (ca.impressions * cb.impressions * (ca.clicks + cb.clicks)) / (total * total);
      }
    }
  }
  const none = (reason: string): PositionBiasEstimate => ({
    curve: undefined,
    logStandardErrors: new Array<number>(page).fill(Number.NaN),
    estimated: 0,
    contexts,
    impressions,
    reason,
  });
  if (page < 2) return none('every impression was at the top position');
  if (pairs.size === 0) return none('no product was shown at two positions in the same context');
  // The pairs with clicks on both sides: each a log ratio and its weight (inverse variance).
  const equations: Array<{ a: number; b: number; logRatio: number; weight: number }> = [];
  for (const [key, sums] of pairs) {
    if (!(sums.a > 0 && sums.b > 0 && sums.v > 0)) continue;
    const a = Math.floor(key / maxPositions);
    const b = key % maxPositions;
    equations.push({ a, b, logRatio: Math.log(sums.a / sums.b), weight: (sums.a * sums.b) / sums.v });
  }
  // Only positions linked to the top by a chain of pairs have a value relative to it.
  const linked = new Set([0]);
  for (let grown = true; grown; ) {
    grown = false;
    for (const { a, b } of equations)
      if (linked.has(a) !== linked.has(b)) {
        linked.add(a);
        linked.add(b);
        grown = true;
      }
  }
  linked.delete(0);
  if (linked.size === 0) return none('no pair of positions had clicks at both in the same context');
  // Weighted least squares on log θ of the linked positions, θ_0 = 1 (log 0).
  const unknowns = [...linked].sort((x, y) => x - y);
  const index = new Map(unknowns.map((p, i) => [p, i]));
  const normal = unknowns.map(() => new Array<number>(unknowns.length).fill(0));
  const rhs = new Array<number>(unknowns.length).fill(0);
  for (const { a, b, logRatio, weight } of equations) {
    const ia = index.get(a);
    const ib = index.get(b);
    if (ia !== undefined) {
      (normal[ia] as number[])[ia] = ((normal[ia] as number[])[ia] as number) + weight;
      rhs[ia] = (rhs[ia] as number) + weight * logRatio;
    }
    if (ib !== undefined) {
      (normal[ib] as number[])[ib] = ((normal[ib] as number[])[ib] as number) + weight;
      rhs[ib] = (rhs[ib] as number) - weight * logRatio;
    }
    if (ia !== undefined && ib !== undefined) {
      (normal[ia] as number[])[ib] = ((normal[ia] as number[])[ib] as number) - weight;
      (normal[ib] as number[])[ia] = ((normal[ib] as number[])[ia] as number) - weight;
    }
  }
  const solved = solve(
    normal.map((row) => [...row]),
    [...rhs],
  );
  const variances = inverseDiagonal(normal);
  if (solved === undefined || variances === undefined)
    return none('the positions are not connected by products shown at both');
  const logs = [0];
  const errors = [0];
  for (let k = 1; k < page; k++) {
    const i = index.get(k);
    logs.push(i === undefined ? Number.NaN : (solved[i] as number));
    errors.push(i === undefined ? Number.NaN : Math.sqrt(variances[i] as number));
  }
  let estimated = 1;
  while (estimated < page && (errors[estimated] as number) <= maxError) estimated++;
  if (estimated < 2)
    return {
      ...none(
        `too few clicks on products seen at several positions: position 2's estimate is ${Number.isNaN(errors[1]) ? 'missing' : `±${Math.round(100 * (Math.exp(errors[1] as number) - 1))}%`}`,
      ),
      logStandardErrors: errors,
    };
  const curve = logs.slice(0, estimated).map(Math.exp);
  const last = curve[curve.length - 1] as number;
  while (curve.length < page) curve.push(last);
  return {
    curve,
    logStandardErrors: [
      ...errors.slice(0, estimated),
      ...new Array<number>(page - estimated).fill(Number.NaN),
    ],
    estimated,
    contexts,
    impressions,
  };
}

/**
 * Inverse-propensity weights of rows at `positions` under `curve`: 1/θ at the row's position,
 * at most `maxWeight` (clipping: a click deep in the page counts at most that many times). Rows
 * past the curve's end take its last value.
 */
export function inversePropensityWeights(
  positions: ArrayLike<number>,
  curve: readonly number[],
  maxWeight: number,
): Float64Array {
  const out = new Float64Array(positions.length);
  const last = curve.length - 1;
  for (let i = 0; i < positions.length; i++) {
    const theta = curve[Math.min(Math.max(0, positions[i] as number), last)] as number;
    out[i] = Math.min(maxWeight, 1 / theta);
  }
  return out;
}
