import type { FeatureValue } from '../features/feature-kind.js';
import { currentContext } from '../request/request-context.js';

/** The number a model sees for a feature value: booleans are 1/0; anything not a finite number is missing (NaN). */
export function numericValue(value: FeatureValue | null | undefined): number {
  if (typeof value === 'number') return Number.isFinite(value) ? value : Number.NaN;
  if (typeof value === 'boolean') return value ? 1 : 0;
  return Number.NaN;
}

/**
 * The features of a batch of entities as one row-major matrix, the input of tree, ONNX and remote
 * models: row `i` holds `features` of `entities[i]`, read with getFeature, so declared defaults
 * apply. Null, strings and vectors are NaN (missing); booleans 1 and 0. Writes into `out` when it is
 * large enough, so a caller can reuse one buffer.
 *
 * @example
 * ```ts
 * import { featureMatrix } from 'rankd';
 *
 * const FEATURES = ['product_stats:ctr_7d', 'text_match:title'];
 * // In a model's `score`: row i holds entity i's features, in FEATURES order.
 * const rows = (products: readonly object[]) => featureMatrix(products, FEATURES);
 * ```
 */
export function featureMatrix(
  entities: readonly object[],
  features: readonly string[],
  out?: Float64Array,
): Float64Array {
  const rows = entities.length;
  const cols = features.length;
  const size = rows * cols;
  const matrix = out !== undefined && out.length >= size ? out : new Float64Array(size);
  // Column by column, each name resolved once, each entity identified once and its row in each
  // group found once: a thousand candidates × fifty features is fifty thousand reads, where
  // per-read overhead dominates (DR-010).
  const read = currentContext().featureReader(entities);
  for (let col = 0; col < cols; col++) {
    const values = read(features[col] as string);
    for (let row = 0; row < rows; row++) matrix[row * cols + col] = numericValue(values[row]);
  }
  return matrix;
}

/**
 * The features of a batch of entities as one column each: `columns[j][i]` is the number
 * {@link featureMatrix} would hold for feature `j` of `entities[i]`. For models written by hand,
 * which read a feature by name. The columns are views of one buffer.
 *
 * @example
 * import { featureColumns } from 'rankd';
 * // In a model's `score`: one Float64Array per feature, missing NaN, booleans 1 and 0.
 * const columns = (products: readonly object[]) => featureColumns(products, ['facts:ctr', 'facts:price']);
 */
export function featureColumns<const N extends readonly string[]>(
  entities: readonly object[],
  features: N,
): { [K in keyof N]: Float64Array } {
  const read = currentContext().featureReader(entities);
  const rows = entities.length;
  // One backing store for all the columns: each typed array of its own would be an allocation
  // outside V8's heap (anything over 64 bytes is), which the collector tracks one by one (DR-010).
  const all = new Float64Array(rows * features.length);
  return features.map((name, j) => {
    const values = read(name);
    const column = all.subarray(j * rows, (j + 1) * rows);
    for (let i = 0; i < rows; i++) column[i] = numericValue(values[i]);
    return column;
  }) as { [K in keyof N]: Float64Array };
}
