/**
 * Gradient histograms: for each feature's bins, the sum of gradients, the sum of hessians and the
 * row count, three float64 slots per bin (`FeatureBins.offsets` gives each feature's first bin).
 */

/** Slots per bin: gradient, hessian, count. */
export const SLOTS = 3;

/**
 * Adds the rows `order[start .. end)` into `hist` (which the caller zeroed) for the features in
 * `active` (`activeCount` of them, or all `features` when `activeCount === features`). Reads the
 * bins row by row: a row's bins lie side by side, so each row costs one cache line.
 */
export function buildHistogram(
  hist: Float64Array,
  bins: Uint8Array,
  features: number,
  offsets: Uint32Array,
  active: Int32Array,
  activeCount: number,
  order: Uint32Array,
  start: number,
  end: number,
  grad: Float64Array,
  hess: Float64Array,
): void {
  if (activeCount === features) {
    for (let i = start; i < end; i++) {
      const row = order[i] as number;
      const g = grad[row] as number;
      const h = hess[row] as number;
      const base = row * features;
      for (let f = 0; f < features; f++) {
        const slot = ((offsets[f] as number) + (bins[base + f] as number)) * SLOTS;
        hist[slot] = (hist[slot] as number) + g;
        hist[slot + 1] = (hist[slot + 1] as number) + h;
        hist[slot + 2] = (hist[slot + 2] as number) + 1;
      }
    }
    return;
  }
  for (let i = start; i < end; i++) {
    const row = order[i] as number;
    const g = grad[row] as number;
    const h = hess[row] as number;
    const base = row * features;
    for (let a = 0; a < activeCount; a++) {
      const f = active[a] as number;
      const slot = ((offsets[f] as number) + (bins[base + f] as number)) * SLOTS;
      hist[slot] = (hist[slot] as number) + g;
      hist[slot + 1] = (hist[slot + 1] as number) + h;
      hist[slot + 2] = (hist[slot + 2] as number) + 1;
    }
  }
}

/**
 * The histogram subtraction trick: a node's histogram minus its smaller child's is its larger
 * child's, so only the smaller child's rows are read. Done in place on `parent`, over the active
 * features' slots.
 */
export function subtractHistogram(
  parent: Float64Array,
  smaller: Float64Array,
  offsets: Uint32Array,
  active: Int32Array,
  activeCount: number,
): void {
  for (let a = 0; a < activeCount; a++) {
    const f = active[a] as number;
    const from = (offsets[f] as number) * SLOTS;
    const to = (offsets[f + 1] as number) * SLOTS;
    for (let s = from; s < to; s++) parent[s] = (parent[s] as number) - (smaller[s] as number);
  }
}
