/**
 * The hot loop of the pointer layout. Trees marked for lockstep are walked like the heap layout
 * (see heap-kernels.ts): eight rows at a time, a fixed `depth` steps, no branch — leaves point at
 * themselves, so rows that arrive early stay put. Trees with categorical splits, or too lopsided
 * for fixed steps to pay, are walked row by row until a leaf. Trees are summed in order. DR-013, DR-014.
 */
import type { PointerKernelLayout } from './pointer-layout.js';
import { categorySlot } from './split-encoding.js';

/** Adds every tree's leaf to `acc[row]`; `input` holds `width` derived columns per row. */
export function pointerMargins(
  layout: PointerKernelLayout,
  input: Float64Array,
  width: number,
  rows: number,
  acc: Float64Array | Float32Array,
): void {
  const trees = layout.root.length;
  for (let t = 0; t < trees; t++) {
    if (layout.walk[t] === 1) walkTree(layout, t, input, width, rows, acc);
    else lockstepTree(layout, t, input, width, rows, acc);
  }
}

function lockstepTree(
  layout: PointerKernelLayout,
  t: number,
  input: Float64Array,
  width: number,
  rows: number,
  acc: Float64Array | Float32Array,
): void {
  const { child, column, bound, value } = layout;
  const root = layout.root[t] as number;
  const depth = layout.depth[t] as number;
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
    let n0 = root;
    let n1 = root;
    let n2 = root;
    let n3 = root;
    let n4 = root;
    let n5 = root;
    let n6 = root;
    let n7 = root;
    for (let d = 0; d < depth; d++) {
      n0 =
        ((child[n0] as number) +
          +((input[(b0 + (column[n0] as number)) | 0] as number) >= (bound[n0] as number))) |
        0;
      n1 =
        ((child[n1] as number) +
          +((input[(b1 + (column[n1] as number)) | 0] as number) >= (bound[n1] as number))) |
        0;
      n2 =
        ((child[n2] as number) +
          +((input[(b2 + (column[n2] as number)) | 0] as number) >= (bound[n2] as number))) |
        0;
      n3 =
        ((child[n3] as number) +
          +((input[(b3 + (column[n3] as number)) | 0] as number) >= (bound[n3] as number))) |
        0;
      n4 =
        ((child[n4] as number) +
          +((input[(b4 + (column[n4] as number)) | 0] as number) >= (bound[n4] as number))) |
        0;
      n5 =
        ((child[n5] as number) +
          +((input[(b5 + (column[n5] as number)) | 0] as number) >= (bound[n5] as number))) |
        0;
      n6 =
        ((child[n6] as number) +
          +((input[(b6 + (column[n6] as number)) | 0] as number) >= (bound[n6] as number))) |
        0;
      n7 =
        ((child[n7] as number) +
          +((input[(b7 + (column[n7] as number)) | 0] as number) >= (bound[n7] as number))) |
        0;
    }
    acc[row] = (acc[row] as number) + (value[n0] as number);
    acc[row + 1] = (acc[row + 1] as number) + (value[n1] as number);
    acc[row + 2] = (acc[row + 2] as number) + (value[n2] as number);
    acc[row + 3] = (acc[row + 3] as number) + (value[n3] as number);
    acc[row + 4] = (acc[row + 4] as number) + (value[n4] as number);
    acc[row + 5] = (acc[row + 5] as number) + (value[n5] as number);
    acc[row + 6] = (acc[row + 6] as number) + (value[n6] as number);
    acc[row + 7] = (acc[row + 7] as number) + (value[n7] as number);
  }
  for (; row < rows; row++) {
    const b = row * width;
    let n = root;
    for (let d = 0; d < depth; d++) {
      n =
        ((child[n] as number) +
          +((input[(b + (column[n] as number)) | 0] as number) >= (bound[n] as number))) |
        0;
    }
    acc[row] = (acc[row] as number) + (value[n] as number);
  }
}

function walkTree(
  layout: PointerKernelLayout,
  t: number,
  input: Float64Array,
  width: number,
  rows: number,
  acc: Float64Array | Float32Array,
): void {
  const { child, column, bound, categorical, value, categoryFlags, categoryStart, categoryWords } = layout;
  const root = layout.root[t] as number;
  for (let row = 0; row < rows; row++) {
    const base = row * width;
    let n = root;
    let next = child[n] as number;
    while (next !== n) {
      const x = input[base + (column[n] as number)] as number;
      if (categorical[n] === 0) {
        n = next + +(x >= (bound[n] as number));
      } else {
        const record = bound[n] as number;
        const start = categoryStart[record] as number;
        const length = (categoryStart[record + 1] as number) - start;
        n = next + categorySlot(x, categoryFlags[record] as number, categoryWords, start, length);
      }
      next = child[n] as number;
    }
    acc[row] = (acc[row] as number) + (value[n] as number);
  }
}
