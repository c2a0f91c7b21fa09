import { LIGHTGBM_ZERO } from './float-bits.js';
import type { SplitSemantics } from './tree-source.js';

/**
 * How a derived column is computed from its source feature. Each split is flattened to
 * "slot 1 when `column >= bound`, else slot 0"; NaN always lands in slot 0. A split whose missing
 * values go the other way reads the negated column instead, and LightGBM's zero-as-missing
 * splits read a column where zeros are already NaN — so the hot loop has no missing-value branch.
 */
export const ColumnKind = { PLAIN: 0, NEGATED: 1, ZERO_AS_NAN: 2, ZERO_AS_NAN_NEGATED: 3 } as const;

/** One of {@link ColumnKind}. */
type ColumnKindValue = (typeof ColumnKind)[keyof typeof ColumnKind];

const KINDS = 4;

/**
 * The derived columns a model's splits read, registered while flattening, and the per-batch step
 * that fills them from the caller's rows (cast to float32 for XGBoost, tiny values flushed to 0
 * for LightGBM, both as the libraries do on input).
 */
export class InputColumns {
  private readonly index = new Map<number, number>();
  private readonly sources: number[][] = Array.from({ length: KINDS }, () => []);
  private readonly targets: number[][] = Array.from({ length: KINDS }, () => []);
  private packedSources: Int32Array[] = [];
  private packedTargets: Int32Array[] = [];
  private packed = false;
  /** The largest source feature index any split reads, -1 when none does. */
  maxFeature = -1;

  constructor(readonly semantics: SplitSemantics) {}

  /** Number of derived columns: the width of a row of the filled matrix. */
  get width(): number {
    return this.index.size;
  }

  /** The derived column for `feature` computed as `kind`, registering it on first use. */
  column(feature: number, kind: ColumnKindValue): number {
    const key = feature * KINDS + kind;
    let column = this.index.get(key);
    if (column === undefined) {
      column = this.index.size;
      this.index.set(key, column);
      (this.sources[kind] as number[]).push(feature);
      (this.targets[kind] as number[]).push(column);
      this.maxFeature = Math.max(this.maxFeature, feature);
      this.packed = false;
    }
    return column;
  }

  /** Fills `target` (rows × width, row-major) from `matrix` (rows × cols, row-major). */
  fill(matrix: Float64Array, rows: number, cols: number, target: Float32Array | Float64Array): void {
    if (!this.packed) this.pack();
    const width = this.width;
    const xgboost = this.semantics === 'xgboost';
    for (let kind = 0; kind < KINDS; kind++) {
      const sources = this.packedSources[kind] as Int32Array;
      const targets = this.packedTargets[kind] as Int32Array;
      const count = sources.length;
      if (count === 0) continue;
      const negate = kind === ColumnKind.NEGATED || kind === ColumnKind.ZERO_AS_NAN_NEGATED ? -1 : 1;
      const zeroAsNan = kind >= ColumnKind.ZERO_AS_NAN;
      for (let row = 0; row < rows; row++) {
        const inBase = row * cols;
        const outBase = row * width;
        for (let i = 0; i < count; i++) {
          let x = matrix[inBase + (sources[i] as number)] as number;
          if (xgboost) x = Math.fround(x);
          else if (x <= LIGHTGBM_ZERO && x >= -LIGHTGBM_ZERO) x = zeroAsNan ? Number.NaN : 0;
          target[outBase + (targets[i] as number)] = negate * x;
        }
      }
    }
  }

  private pack(): void {
    this.packedSources = this.sources.map((list) => Int32Array.from(list));
    this.packedTargets = this.targets.map((list) => Int32Array.from(list));
    this.packed = true;
  }
}
