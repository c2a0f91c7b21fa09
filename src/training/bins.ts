import { TrainingInputError } from '../errors/index.js';

/**
 * Histogram bins of a data set's features. Values are read as float32 (what XGBoost and rankd's
 * evaluator compare), so a split on a bin boundary sends each row where the saved model will.
 *
 * Feature `f` has `cuts[f].length + 1` value bins and one missing bin after them: a value `x` is in
 * bin `b` = the number of cuts ≤ x, so bins `0..b` are exactly the values `x < cuts[f][b]`, the
 * split condition XGBoost writes. `upper[f]` (just above the largest value) lets a split send
 * every value left and the missing ones right.
 */
export interface FeatureBins {
  readonly rows: number;
  readonly features: number;
  /** Row-major bin of every value, `rows × features`: what histograms read, a row at a time. */
  readonly bins: Uint8Array;
  /** The same bins column-major, `features × rows`: what a split reads, one feature's column (DR-018). */
  readonly columns: Uint8Array;
  /** Per feature: ascending float32 cut points. */
  readonly cuts: readonly Float32Array[];
  /** Per feature: the smallest float32 above every value, NaN when there is none (no finite value, or one past float32's range). */
  readonly upper: Float64Array;
  /** Per feature: the first histogram slot; feature f owns `offsets[f] .. offsets[f + 1]` (values, then missing). */
  readonly offsets: Uint32Array;
}

/** The smallest float32 greater than `x` (finite float32 `x`). */
function nextFloat32Up(x: number): number {
  const buffer = new Float32Array([x]);
  const bits = new Int32Array(buffer.buffer);
  if (x === 0) return 1.401298464324817e-45;
  bits[0] = (bits[0] as number) + (x > 0 ? 1 : -1);
  return buffer[0] as number;
}

/**
 * Cut points of one feature's sorted finite values: each distinct value its own bin when they fit
 * in `valueBins`, otherwise bins of about equal row counts. A value repeated more than a bin's
 * share takes a bin alone rather than being split (a cut can only fall between distinct values).
 */
function quantileCuts(sorted: Float32Array, valueBins: number): Float32Array {
  const n = sorted.length;
  const cuts: number[] = [];
  if (n === 0) return new Float32Array(0);
  let distinct = 1;
  for (let i = 1; i < n; i++) if (sorted[i] !== sorted[i - 1]) distinct++;
  if (distinct <= valueBins) {
    for (let i = 1; i < n; i++) if (sorted[i] !== sorted[i - 1]) cuts.push(sorted[i] as number);
    return Float32Array.from(cuts);
  }
  let binStart = 0;
  let i = 0;
  while (i < n && cuts.length < valueBins - 1) {
    const target = (n - binStart) / (valueBins - cuts.length);
    // Skip to the end of this run of equal values.
    let j = i + 1;
    while (j < n && sorted[j] === sorted[i]) j++;
    if (j - binStart >= target && j < n) {
      cuts.push(sorted[j] as number);
      binStart = j;
    }
    i = j;
  }
  return Float32Array.from(cuts);
}

/** The bin of `x` (already float32) among ascending `cuts`: how many cuts are ≤ x. */
export function binOf(cuts: Float32Array, x: number): number {
  let lo = 0;
  let hi = cuts.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((cuts[mid] as number) <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Bins every feature of a row-major `rows × features` matrix into at most `maxBins` bins (missing
 * values, NaN and ±Infinity, in a bin of their own), by quantiles of the non-missing values.
 */
export function binFeatures(
  values: Float64Array,
  rows: number,
  features: number,
  maxBins = 256,
): FeatureBins {
  if (!Number.isInteger(maxBins) || maxBins < 3 || maxBins > 256) {
    throw new TrainingInputError(`maxBins is ${maxBins}; it must be an integer from 3 to 256`);
  }
  const bins = new Uint8Array(rows * features);
  const columns = new Uint8Array(rows * features);
  const cuts: Float32Array[] = [];
  const upper = new Float64Array(features);
  const offsets = new Uint32Array(features + 1);
  const column = new Float32Array(rows);
  for (let f = 0; f < features; f++) {
    let finite = 0;
    let infinite = false;
    for (let r = 0; r < rows; r++) {
      // ±Infinity is missing (as models read it); a finite value past float32's range is not.
      const raw = values[r * features + f] as number;
      if (!Number.isFinite(raw)) continue;
      const x = Math.fround(raw);
      if (Number.isFinite(x)) column[finite++] = x;
      else if (x === Number.POSITIVE_INFINITY) infinite = true;
    }
    const sorted = column.subarray(0, finite).sort();
    const featureCuts = quantileCuts(sorted, maxBins - 1);
    cuts.push(featureCuts);
    const largest = finite > 0 ? (sorted[finite - 1] as number) : Number.NaN;
    const above = finite > 0 && !infinite ? nextFloat32Up(largest) : Number.NaN;
    upper[f] = Number.isFinite(above) ? above : Number.NaN;
    const missingBin = featureCuts.length + 1;
    offsets[f + 1] = (offsets[f] as number) + missingBin + 1;
    for (let r = 0; r < rows; r++) {
      const raw = values[r * features + f] as number;
      const bin = Number.isFinite(raw) ? binOf(featureCuts, Math.fround(raw)) : missingBin;
      bins[r * features + f] = bin;
      columns[f * rows + r] = bin;
    }
  }
  return { rows, features, bins, columns, cuts, upper, offsets };
}
