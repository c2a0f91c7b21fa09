/**
 * The hot loops of the heap layout, once for float32 (XGBoost) and once for float64 (LightGBM).
 * They are the same code on purpose: one function fed both array types would be polymorphic at
 * every access. Float32 inputs for XGBoost and the eight-row unrolling: DR-014.
 *
 * Tree-major: each tree's slots stay in cache while every row walks it. Eight rows walk in
 * lockstep: a walk is a chain of dependent loads, and eight independent chains keep the CPU busy
 * while each waits; the per-iteration checks V8 makes on each array are shared by the eight.
 * `+(x >= bound)` compiles to a flag set without a branch, and `| 0` keeps the index arithmetic
 * in int32 without overflow checks. With absolute slot `a` in a tree at `base`, the children of
 * `a` are `2a - base` (slot 0) and `2a - base + 1` (slot 1). Trees are summed in order, as the
 * libraries do, which matters for XGBoost's float32 sums.
 *
 * `column` and `bound` are plain arrays when the caller went through `kernelLayout` (DR-012). Feed
 * them one kind of array only, or the loads turn polymorphic.
 */
import type { HeapKernelLayout } from './heap-layout.js';

/** Adds every tree's leaf to `acc[row]`; `input` holds `width` derived columns per row. */
export function heapMargins32(
  layout: HeapKernelLayout,
  input: Float32Array,
  width: number,
  rows: number,
  acc: Float32Array,
): void {
  const { column, bound, leafValue } = layout;
  const trees = layout.depth.length;
  for (let t = 0; t < trees; t++) {
    const depth = layout.depth[t] as number;
    const base = layout.base[t] as number;
    const root = base + 1;
    const leafBase = (layout.leafStart[t] as number) - base - 2 ** depth;
    let row = 0;
    for (; row + 8 <= rows; row += 8) {
      const b0 = row * width;
      const b1 = b0 + width;
      const b2 = b1 + width;
      const b3 = b2 + width;
      const b4 = b3 + width;
      const b5 = b4 + width;
      const b6 = b5 + width;
      const b7 = b6 + width;
      let a0 = root;
      let a1 = root;
      let a2 = root;
      let a3 = root;
      let a4 = root;
      let a5 = root;
      let a6 = root;
      let a7 = root;
      for (let d = 0; d < depth; d++) {
        a0 =
          (a0 +
            a0 -
            base +
            +((input[(b0 + (column[a0] as number)) | 0] as number) >= (bound[a0] as number))) |
          0;
        a1 =
          (a1 +
            a1 -
            base +
            +((input[(b1 + (column[a1] as number)) | 0] as number) >= (bound[a1] as number))) |
          0;
        a2 =
          (a2 +
            a2 -
            base +
            +((input[(b2 + (column[a2] as number)) | 0] as number) >= (bound[a2] as number))) |
          0;
        a3 =
          (a3 +
            a3 -
            base +
            +((input[(b3 + (column[a3] as number)) | 0] as number) >= (bound[a3] as number))) |
          0;
        a4 =
          (a4 +
            a4 -
            base +
            +((input[(b4 + (column[a4] as number)) | 0] as number) >= (bound[a4] as number))) |
          0;
        a5 =
          (a5 +
            a5 -
            base +
            +((input[(b5 + (column[a5] as number)) | 0] as number) >= (bound[a5] as number))) |
          0;
        a6 =
          (a6 +
            a6 -
            base +
            +((input[(b6 + (column[a6] as number)) | 0] as number) >= (bound[a6] as number))) |
          0;
        a7 =
          (a7 +
            a7 -
            base +
            +((input[(b7 + (column[a7] as number)) | 0] as number) >= (bound[a7] as number))) |
          0;
      }
      acc[row] = (acc[row] as number) + (leafValue[a0 + leafBase] as number);
      acc[row + 1] = (acc[row + 1] as number) + (leafValue[a1 + leafBase] as number);
      acc[row + 2] = (acc[row + 2] as number) + (leafValue[a2 + leafBase] as number);
      acc[row + 3] = (acc[row + 3] as number) + (leafValue[a3 + leafBase] as number);
      acc[row + 4] = (acc[row + 4] as number) + (leafValue[a4 + leafBase] as number);
      acc[row + 5] = (acc[row + 5] as number) + (leafValue[a5 + leafBase] as number);
      acc[row + 6] = (acc[row + 6] as number) + (leafValue[a6 + leafBase] as number);
      acc[row + 7] = (acc[row + 7] as number) + (leafValue[a7 + leafBase] as number);
    }
    for (; row < rows; row++) {
      const b = row * width;
      let a = root;
      for (let d = 0; d < depth; d++) {
        a =
          (a + a - base + +((input[(b + (column[a] as number)) | 0] as number) >= (bound[a] as number))) | 0;
      }
      acc[row] = (acc[row] as number) + (leafValue[a + leafBase] as number);
    }
  }
}

/** {@link heapMargins32} for float64 bounds, inputs and sums. */
export function heapMargins64(
  layout: HeapKernelLayout,
  input: Float64Array,
  width: number,
  rows: number,
  acc: Float64Array,
): void {
  const { column, bound, leafValue } = layout;
  const trees = layout.depth.length;
  for (let t = 0; t < trees; t++) {
    const depth = layout.depth[t] as number;
    const base = layout.base[t] as number;
    const root = base + 1;
    const leafBase = (layout.leafStart[t] as number) - base - 2 ** depth;
    let row = 0;
    for (; row + 8 <= rows; row += 8) {
      const b0 = row * width;
      const b1 = b0 + width;
      const b2 = b1 + width;
      const b3 = b2 + width;
      const b4 = b3 + width;
      const b5 = b4 + width;
      const b6 = b5 + width;
      const b7 = b6 + width;
      let a0 = root;
      let a1 = root;
      let a2 = root;
      let a3 = root;
      let a4 = root;
      let a5 = root;
      let a6 = root;
      let a7 = root;
      for (let d = 0; d < depth; d++) {
        a0 =
          (a0 +
            a0 -
            base +
            +((input[(b0 + (column[a0] as number)) | 0] as number) >= (bound[a0] as number))) |
          0;
        a1 =
          (a1 +
            a1 -
            base +
            +((input[(b1 + (column[a1] as number)) | 0] as number) >= (bound[a1] as number))) |
          0;
        a2 =
          (a2 +
            a2 -
            base +
            +((input[(b2 + (column[a2] as number)) | 0] as number) >= (bound[a2] as number))) |
          0;
        a3 =
          (a3 +
            a3 -
            base +
            +((input[(b3 + (column[a3] as number)) | 0] as number) >= (bound[a3] as number))) |
          0;
        a4 =
          (a4 +
            a4 -
            base +
            +((input[(b4 + (column[a4] as number)) | 0] as number) >= (bound[a4] as number))) |
          0;
        a5 =
          (a5 +
            a5 -
            base +
            +((input[(b5 + (column[a5] as number)) | 0] as number) >= (bound[a5] as number))) |
          0;
        a6 =
          (a6 +
            a6 -
            base +
            +((input[(b6 + (column[a6] as number)) | 0] as number) >= (bound[a6] as number))) |
          0;
        a7 =
          (a7 +
            a7 -
            base +
            +((input[(b7 + (column[a7] as number)) | 0] as number) >= (bound[a7] as number))) |
          0;
      }
      acc[row] = (acc[row] as number) + (leafValue[a0 + leafBase] as number);
      acc[row + 1] = (acc[row + 1] as number) + (leafValue[a1 + leafBase] as number);
      acc[row + 2] = (acc[row + 2] as number) + (leafValue[a2 + leafBase] as number);
      acc[row + 3] = (acc[row + 3] as number) + (leafValue[a3 + leafBase] as number);
      acc[row + 4] = (acc[row + 4] as number) + (leafValue[a4 + leafBase] as number);
      acc[row + 5] = (acc[row + 5] as number) + (leafValue[a5 + leafBase] as number);
      acc[row + 6] = (acc[row + 6] as number) + (leafValue[a6 + leafBase] as number);
      acc[row + 7] = (acc[row + 7] as number) + (leafValue[a7 + leafBase] as number);
    }
    for (; row < rows; row++) {
      const b = row * width;
      let a = root;
      for (let d = 0; d < depth; d++) {
        a =
          (a + a - base + +((input[(b + (column[a] as number)) | 0] as number) >= (bound[a] as number))) | 0;
      }
      acc[row] = (acc[row] as number) + (leafValue[a + leafBase] as number);
    }
  }
}
