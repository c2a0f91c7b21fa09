const scratch = new Float64Array(1);
const scratchBits = new BigInt64Array(scratch.buffer);

/**
 * The smallest double greater than `x`. Splits are flattened to one comparison, `x >= bound`, so
 * `x > t` becomes `x >= nextUp(t)` — exact for doubles. Infinity has no successor and yields NaN,
 * a bound no value reaches, which is what `x > Infinity` means.
 */
export function nextUp(x: number): number {
  if (Number.isNaN(x) || x === Number.POSITIVE_INFINITY) return Number.NaN;
  if (x === 0) return Number.MIN_VALUE;
  scratch[0] = x;
  scratchBits[0] = (scratchBits[0] as bigint) + (x > 0 ? 1n : -1n);
  return scratch[0] as number;
}

const scratch32 = new Float32Array(1);
const scratch32Bits = new Int32Array(scratch32.buffer);

/**
 * The smallest float32 greater than `x` (a float32). XGBoost inputs are float32, so for them
 * `x > t` is `x >= nextUpFloat32(t)`, and that bound is itself a float32: it survives being
 * stored in a Float32Array. Infinity yields NaN, as in {@link nextUp}.
 */
export function nextUpFloat32(x: number): number {
  if (Number.isNaN(x) || x === Number.POSITIVE_INFINITY) return Number.NaN;
  if (x === 0) return 2 ** -149;
  scratch32[0] = x;
  scratch32Bits[0] = (scratch32Bits[0] as number) + (x > 0 ? 1 : -1);
  return scratch32[0] as number;
}

/** LightGBM's kZeroThreshold (`1e-35f` widened to double): values this close to 0 are 0. */
export const LIGHTGBM_ZERO = Math.fround(1e-35);
