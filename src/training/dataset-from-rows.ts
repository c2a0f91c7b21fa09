import { TrainingInputError } from '../errors/index.js';
import type { RankingDataset } from './dataset.js';
import { checkDataset } from './dataset.js';

/** One row as an export or a test writes it. */
export interface RankingRow {
  /** The query group (request id): rows with the same group are ranked against each other. */
  readonly group: string | number;
  /** The grade: 0 is not relevant, higher is better. */
  readonly label: number;
  /**
   * The feature values, by name or by column (in the order of `features`). Anything but a
   * finite number (null, undefined, a string, NaN, ±Infinity) is missing, as it is to rankd's
   * models; a boolean is 1 or 0, as models read it.
   */
  readonly values: ArrayLike<unknown> | Readonly<Record<string, unknown>>;
}

/** What a served model reads for `value` (`numericValue`'s rule): ±Infinity is missing, as NaN is. */
function numberOrNaN(value: unknown): number {
  if (typeof value === 'number') return Number.isFinite(value) ? value : Number.NaN;
  if (typeof value === 'boolean') return value ? 1 : 0;
  return Number.NaN;
}

/**
 * Builds a {@link RankingDataset} from plain rows. Groups keep the order of their first row (give
 * rows in time order for a time split); a group's rows need not be consecutive. Throws a
 * {@link TrainingInputError} on a row that does not fit.
 *
 * @example
 * ```ts
 * import { datasetFromRows } from 'rankd/training';
 *
 * const dataset = datasetFromRows(['price', 'rating'], [
 *   { group: 'r1', label: 1, values: { price: 9, rating: 4.5 } },
 *   { group: 'r2', label: 3, values: [5, 4.9] },
 * ]);
 * ```
 */
export function datasetFromRows(features: readonly string[], rows: Iterable<RankingRow>): RankingDataset {
  const width = features.length;
  const byGroup = new Map<string | number, RankingRow[]>();
  let index = 0;
  for (const row of rows) {
    if (Array.isArray(row.values) || ArrayBuffer.isView(row.values)) {
      const length = (row.values as ArrayLike<unknown>).length;
      if (length !== width) {
        throw new TrainingInputError(`row ${index}: ${length} values for ${width} features`);
      }
    }
    const list = byGroup.get(row.group);
    if (list === undefined) byGroup.set(row.group, [row]);
    else list.push(row);
    index++;
  }
  const count = index;
  const values = new Float64Array(count * width);
  const labels = new Float64Array(count);
  const groups = new Uint32Array(byGroup.size);
  let r = 0;
  let g = 0;
  for (const list of byGroup.values()) {
    groups[g++] = list.length;
    for (const row of list) {
      labels[r] = row.label;
      const source = row.values as ArrayLike<unknown> & Readonly<Record<string, unknown>>;
      const byColumn = Array.isArray(source) || ArrayBuffer.isView(source);
      for (let f = 0; f < width; f++) {
        const name = features[f] as string;
        values[r * width + f] = numberOrNaN(
          byColumn ? source[f] : Object.hasOwn(source, name) ? source[name] : undefined,
        );
      }
      r++;
    }
  }
  const dataset: RankingDataset = { features: [...features], rows: count, values, labels, groups };
  checkDataset(dataset);
  return dataset;
}
