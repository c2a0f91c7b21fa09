import { nextUp, nextUpFloat32 } from './float-bits.js';
import { ColumnKind, type InputColumns } from './input-columns.js';
import { MissingRule, type SplitSemantics } from './tree-source.js';

/**
 * A numerical split as the evaluator runs it: read `column`, go to slot 1 when the value is
 * `>= bound`, else to slot 0 (NaN included). `leftSlot` says which slot holds the left child.
 */
interface EncodedSplit {
  readonly column: number;
  readonly bound: number;
  readonly leftSlot: 0 | 1;
}

/**
 * Rewrites one split of the source library into the single comparison the evaluator makes,
 * choosing plain or negated input so that missing values land in slot 0 on the default side.
 */
export function encodeNumericSplit(
  semantics: SplitSemantics,
  columns: InputColumns,
  feature: number,
  threshold: number,
  missing: number,
  defaultLeft: boolean,
): EncodedSplit {
  if (semantics === 'xgboost') {
    // XGBoost: left when x < t, both float32. Missing left: slot 1 (right) when x >= t.
    // Missing right: left when -x > -t, i.e. -x >= the next float32 above -t.
    const t = Math.fround(threshold);
    return defaultLeft
      ? { column: columns.column(feature, ColumnKind.PLAIN), bound: t, leftSlot: 0 }
      : { column: columns.column(feature, ColumnKind.NEGATED), bound: nextUpFloat32(-t), leftSlot: 1 };
  }
  // LightGBM: left when x <= t. MissingType None compares NaN as 0, so its "default" is
  // wherever 0 goes; Zero reads a column with zeros turned into NaN.
  const zero = missing === MissingRule.ZERO_DEFAULT;
  const missingLeft = missing === MissingRule.NAN_AS_ZERO ? 0 <= threshold : defaultLeft;
  if (missingLeft) {
    const kind = zero ? ColumnKind.ZERO_AS_NAN : ColumnKind.PLAIN;
    return { column: columns.column(feature, kind), bound: nextUp(threshold), leftSlot: 0 };
  }
  const kind = zero ? ColumnKind.ZERO_AS_NAN_NEGATED : ColumnKind.NEGATED;
  return { column: columns.column(feature, kind), bound: -threshold, leftSlot: 1 };
}

/** Flags of a categorical split record: which slot (0 = left, 1 = right) each case goes to. */
const CategoryFlag = {
  /** NaN goes to slot 1. */
  NAN_SLOT_1: 1,
  /** Values outside the valid range go to slot 1. */
  INVALID_SLOT_1: 2,
  /** Categories in the set go to slot 1 (the others to slot 0). */
  IN_SET_SLOT_1: 4,
  /** XGBoost's validity rule (0 ≤ x < 2^24); otherwise LightGBM's (trunc(x) ≥ 0). */
  XGBOOST_RANGE: 8,
} as const;

/** The flags of a categorical split; children are always in source order (slot 0 = left). */
export function categoricalFlags(semantics: SplitSemantics, defaultLeft: boolean): number {
  // XGBoost: the set goes right, invalid and unseen categories left, NaN the default way.
  // LightGBM: the set goes left; NaN, negatives and unseen categories right.
  return semantics === 'xgboost'
    ? CategoryFlag.IN_SET_SLOT_1 | CategoryFlag.XGBOOST_RANGE | (defaultLeft ? 0 : CategoryFlag.NAN_SLOT_1)
    : CategoryFlag.NAN_SLOT_1 | CategoryFlag.INVALID_SLOT_1;
}

/** 2^24: XGBoost's first invalid category (float32 cannot count past it). */
const XGBOOST_MAX_CATEGORY = 16777216;
/** Beyond int32, LightGBM's `static_cast<int>` has no defined value; it is treated as negative. */
const INT32_LIMIT = 2147483648;

/**
 * The slot a categorical split sends `x` to. `words` is the split's bitset, `start`/`length`
 * its place in the shared array.
 */
export function categorySlot(
  x: number,
  flags: number,
  words: Uint32Array,
  start: number,
  length: number,
): number {
  if (Number.isNaN(x)) return flags & CategoryFlag.NAN_SLOT_1 ? 1 : 0;
  const valid =
    flags & CategoryFlag.XGBOOST_RANGE ? x >= 0 && x < XGBOOST_MAX_CATEGORY : x > -1 && x < INT32_LIMIT;
  if (!valid) return flags & CategoryFlag.INVALID_SLOT_1 ? 1 : 0;
  const category = Math.trunc(x);
  const word = category >>> 5;
  const inSet = word < length && ((words[start + word] as number) >>> (category & 31)) & 1;
  return (inSet ? flags & CategoryFlag.IN_SET_SLOT_1 : ~flags & CategoryFlag.IN_SET_SLOT_1) ? 1 : 0;
}
