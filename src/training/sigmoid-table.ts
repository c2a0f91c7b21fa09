/**
 * σ(d) = 1 / (1 + e^−d) from a table with linear interpolation (error below 1e-6), as LightGBM's
 * lambdarank does: the gradients need it once per pair of rows, hundreds of thousands of times a
 * tree, and `Math.exp` costs three times as much (decisions/DR-018).
 */

/** The table covers d in [−RANGE, RANGE]; beyond it σ is within 1.2e-7 of 0 or 1. */
const RANGE = 16;
const STEPS = 4096;
const SCALE = STEPS / (2 * RANGE);

const TABLE = new Float64Array(STEPS + 2);
for (let i = 0; i <= STEPS + 1; i++) TABLE[i] = 1 / (1 + Math.exp(-(i / SCALE - RANGE)));

/** σ(d), interpolated; exact enough for gradients, cheap enough for every pair. */
export function sigmoid(d: number): number {
  let x = (d + RANGE) * SCALE;
  if (x < 0) x = 0;
  else if (x > STEPS) x = STEPS;
  const k = x | 0;
  const low = TABLE[k] as number;
  return low + (x - k) * ((TABLE[k + 1] as number) - low);
}
