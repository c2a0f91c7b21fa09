import type { Identifier } from '../entities/identifier.js';
import type { FeatureValue } from '../features/feature-kind.js';
import { currentContext } from '../pipeline/request-context.js';

/** The number a model sees for a feature value: booleans are 1/0; anything not a finite number is missing (NaN). */
export function numericValue(value: FeatureValue | null | undefined): number {
  if (typeof value === 'number') return Number.isFinite(value) ? value : Number.NaN;
  if (typeof value === 'boolean') return value ? 1 : 0;
  return Number.NaN;
}

/**
 * The features of a batch of entities as one row-major matrix, the input of tree, ONNX and
 * remote models: row `i` holds `features` (`group:feature` names, stored or real-time) of
 * `entities[i]`, read from the current request with getFeature, so declared defaults apply.
 * Null, strings and vectors are NaN (missing); booleans are 1 and 0. Writes into `out` when it
 * is large enough, so a caller can reuse one buffer.
 */
export function featureMatrix(
  entities: readonly object[],
  features: readonly string[],
  out?: Float64Array,
): Float64Array {
  const context = currentContext();
  const rows = entities.length;
  const cols = features.length;
  const size = rows * cols;
  const matrix = out !== undefined && out.length >= size ? out : new Float64Array(size);
  // Column by column, each name resolved once and each entity identified once: a thousand
  // candidates × fifty features is fifty thousand reads, where per-read overhead dominates.
  const identifiers = entities.map((entity) => [context.identify(entity)]);
  for (let col = 0; col < cols; col++) {
    const read = context.features.column(features[col] as string);
    for (let row = 0; row < rows; row++)
      matrix[row * cols + col] = numericValue(read(identifiers[row] as [Identifier]));
  }
  return matrix;
}
