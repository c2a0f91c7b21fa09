import { heapMargins32, heapMargins64 } from './heap-kernels.js';
import type { HeapKernelLayout, HeapLayout } from './heap-layout.js';
import { pointerMargins } from './pointer-kernels.js';
import type { PointerKernelLayout, PointerLayout } from './pointer-layout.js';

/**
 * An ensemble's trees in the layout chosen for it, with what a kernel needs to know besides:
 * the type of its input rows (float32 for XGBoost's heap layout, doubles otherwise) and of its
 * sums (float32 for XGBoost, doubles for LightGBM).
 */
export type FlatLayout =
  | { readonly kind: 'heap32'; readonly heap: HeapLayout<Float32Array>; readonly sum32: true }
  | { readonly kind: 'heap64'; readonly heap: HeapLayout<Float64Array>; readonly sum32: false }
  | { readonly kind: 'pointer'; readonly pointer: PointerLayout; readonly sum32: boolean };

/**
 * What the kernels read: a {@link FlatLayout} whose arrays read at every step (a split's column
 * and bound, a node's child) may be plain arrays of numbers, as {@link kernelLayout} makes them.
 */
export type KernelLayout =
  | { readonly kind: 'heap32'; readonly heap: HeapKernelLayout; readonly sum32: true }
  | { readonly kind: 'heap64'; readonly heap: HeapKernelLayout; readonly sum32: false }
  | { readonly kind: 'pointer'; readonly pointer: PointerKernelLayout; readonly sum32: boolean };

/**
 * `layout` with the arrays read at every step copied into plain arrays (`Array.from`: the same
 * numbers), which V8 reads without the detached-buffer check it adds to typed-array reads once any
 * buffer of the process was detached (as importing rankd's server does). DR-012.
 */
export function kernelLayout(layout: FlatLayout): KernelLayout {
  switch (layout.kind) {
    case 'heap32':
    case 'heap64': {
      const heap = {
        ...layout.heap,
        column: Array.from(layout.heap.column),
        bound: Array.from(layout.heap.bound),
      };
      return layout.kind === 'heap32' ? { ...layout, heap } : { ...layout, heap };
    }
    case 'pointer': {
      const p = layout.pointer;
      const pointer = {
        ...p,
        child: Array.from(p.child),
        column: Array.from(p.column),
        bound: Array.from(p.bound),
      };
      return { ...layout, pointer };
    }
  }
}

/** Derived input rows of a {@link FlatLayout}: float32 for `heap32`, doubles for the others. */
export type LayoutInput = Float32Array | Float64Array;
/** Per-row sums: float32 when `sum32` (XGBoost sums in float32), doubles otherwise. */
export type LayoutSums = Float32Array | Float64Array;

/**
 * Adds every tree's leaf to `acc[row]` for `rows` rows of `width` derived columns in `input`.
 * Trees are added in order, as the libraries do: XGBoost's float32 sums depend on it.
 */
export function addTrees(
  layout: KernelLayout,
  input: LayoutInput,
  width: number,
  rows: number,
  acc: LayoutSums,
): void {
  // The casts hold by construction: `inputArray` and the caller's sums follow `layout`.
  switch (layout.kind) {
    case 'heap32':
      heapMargins32(layout.heap, input as Float32Array, width, rows, acc as Float32Array);
      return;
    case 'heap64':
      heapMargins64(layout.heap, input as Float64Array, width, rows, acc as Float64Array);
      return;
    case 'pointer':
      pointerMargins(layout.pointer, input as Float64Array, width, rows, acc);
      return;
  }
}

/** A new input array for `length` values of `layout`: float32 for `heap32`, doubles otherwise. */
export function inputArray(layout: FlatLayout | KernelLayout, length: number): LayoutInput {
  return layout.kind === 'heap32' ? new Float32Array(length) : new Float64Array(length);
}
