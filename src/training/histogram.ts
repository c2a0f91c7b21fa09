/**
 * Gradient histograms: for each feature's bins, the sums of gradients and hessians (two float64
 * slots per bin, `sums`) and the row count (`counts`); `FeatureBins.offsets` gives each feature's
 * first bin. Counts apart from the sums keep the float64 array half as wide to write (DR-018).
 */
export interface Histogram {
  readonly sums: Float64Array;
  readonly counts: Uint32Array;
}

/** An empty histogram of `bins` bins. */
export function newHistogram(bins: number): Histogram {
  return { sums: new Float64Array(bins * 2), counts: new Uint32Array(bins) };
}

/** Empties a histogram for reuse. */
export function clearHistogram(hist: Histogram): void {
  hist.sums.fill(0);
  hist.counts.fill(0);
}

/**
 * Adds the rows `order[start .. end)` into `hist` (zeroed by the caller) for the features in
 * `active` (`activeCount` of them; all when `activeCount === features`). Reads the row-major
 * bins: a row's bins lie side by side, so each row costs one cache line.
 */
export function buildHistogram(
  hist: Histogram,
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
  const { sums, counts } = hist;
  if (activeCount === features) {
    for (let i = start; i < end; i++) {
      const row = order[i] as number;
      const g = grad[row] as number;
      const h = hess[row] as number;
      const base = row * features;
      for (let f = 0; f < features; f++) {
        const bin = (offsets[f] as number) + (bins[base + f] as number);
        const slot = bin << 1;
        sums[slot] = (sums[slot] as number) + g;
        sums[slot + 1] = (sums[slot + 1] as number) + h;
        counts[bin] = (counts[bin] as number) + 1;
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
      const bin = (offsets[f] as number) + (bins[base + f] as number);
      const slot = bin << 1;
      sums[slot] = (sums[slot] as number) + g;
      sums[slot + 1] = (sums[slot + 1] as number) + h;
      counts[bin] = (counts[bin] as number) + 1;
    }
  }
}

/**
 * The histogram subtraction trick: a node's histogram minus its smaller child's is its larger
 * child's, so only the smaller child's rows are read. Done in place on `parent`, over the active
 * features' bins.
 */
export function subtractHistogram(
  parent: Histogram,
  smaller: Histogram,
  offsets: Uint32Array,
  active: Int32Array,
  activeCount: number,
): void {
  const { sums, counts } = parent;
  for (let a = 0; a < activeCount; a++) {
    const f = active[a] as number;
    const from = offsets[f] as number;
    const to = offsets[f + 1] as number;
    for (let b = from; b < to; b++) counts[b] = (counts[b] as number) - (smaller.counts[b] as number);
    for (let s = from * 2; s < to * 2; s++) sums[s] = (sums[s] as number) - (smaller.sums[s] as number);
  }
}
