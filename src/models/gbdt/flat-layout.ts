import { heapMargins32, heapMargins64 } from './heap-kernels.js';
import type { HeapKernelLayout, HeapLayout } from './heap-layout.js';
import { pointerMargins } from './pointer-kernels.js';
import type { PointerKernelLayout, PointerLayout } from './pointer-layout.js';

/**
 * An ensemble's trees in the layout chosen for it, with what a kernel needs to know besides:
 * the type of its input rows (float32 for XGBoost's heap layout, doubles otherwise) and of its
 * sums (float32 for XGBoost, doubles for LightGBM). It is all typed arrays and plain values, so
 * it can be copied into shared memory and handed to worker threads (see {@link shareLayout}).
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
 * `layout` with the arrays read at every step copied into plain arrays (`Array.from`: small
 * integers and doubles, exactly the same values), for the thread that scores with it. Once any
 * ArrayBuffer of the process has been detached, V8 checks for a detached buffer on every
 * typed-array read in optimized code; plain arrays have no such check. Importing rankd's server
 * has that effect, and so does loading onnxruntime-node's binding. Measured on the issue's
 * workload (kernel only, p50): 7.1 → 5.7 ms per batch with the check on, 5.6 → 5.3 ms without it.
 * Inputs and sums stay typed arrays (shared with workers); the copies cost 8 bytes an element.
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
 * Trees are added in order, so a row's sum is the same whichever thread computes it and however
 * a batch's rows are split between threads.
 */
export function addTrees(
  layout: KernelLayout,
  input: LayoutInput,
  width: number,
  rows: number,
  acc: LayoutSums,
): void {
  // The casts hold by construction: `inputArray` and `sumsArray` pick the types from `layout`.
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

/** A new input array for `length` values of `layout`, in `buffer` when given (e.g. a SharedArrayBuffer). */
export function inputArray(layout: KernelLayout, length: number, buffer?: SharedArrayBuffer): LayoutInput {
  if (layout.kind === 'heap32')
    return buffer ? new Float32Array(buffer, 0, length) : new Float32Array(length);
  return buffer ? new Float64Array(buffer, 0, length) : new Float64Array(length);
}

/** Bytes per value of {@link inputArray}. */
export function inputBytes(layout: KernelLayout): number {
  return layout.kind === 'heap32' ? 4 : 8;
}

/** A new sums array for `length` rows of `layout`, in `buffer` when given. */
export function sumsArray(layout: KernelLayout, length: number, buffer?: SharedArrayBuffer): LayoutSums {
  if (layout.sum32) return buffer ? new Float32Array(buffer, 0, length) : new Float32Array(length);
  return buffer ? new Float64Array(buffer, 0, length) : new Float64Array(length);
}

/** Bytes per value of {@link sumsArray}. */
export function sumsBytes(layout: KernelLayout): number {
  return layout.sum32 ? 4 : 8;
}

type AnyTypedArray = Int32Array | Uint8Array | Uint32Array | Float32Array | Float64Array;

/** A copy of `array` in a new SharedArrayBuffer, of the same type. */
function shared<T extends AnyTypedArray>(array: T): T {
  const Type = array.constructor as new (buffer: SharedArrayBuffer) => T;
  const copy = new Type(new SharedArrayBuffer(array.byteLength));
  copy.set(array);
  return copy;
}

/**
 * `layout` with every array copied into its own SharedArrayBuffer: what is sent to worker threads
 * once per loaded model, so that each batch after that sends only its rows.
 */
export function shareLayout(layout: FlatLayout): FlatLayout {
  switch (layout.kind) {
    case 'heap32':
      return { ...layout, heap: shareHeap(layout.heap) };
    case 'heap64':
      return { ...layout, heap: shareHeap(layout.heap) };
    case 'pointer': {
      const p = layout.pointer;
      return {
        ...layout,
        pointer: {
          kind: 'pointer',
          child: shared(p.child),
          column: shared(p.column),
          bound: shared(p.bound),
          categorical: shared(p.categorical),
          value: shared(p.value),
          root: shared(p.root),
          depth: shared(p.depth),
          walk: shared(p.walk),
          categoryFlags: shared(p.categoryFlags),
          categoryStart: shared(p.categoryStart),
          categoryWords: shared(p.categoryWords),
        },
      };
    }
  }
}

function shareHeap<B extends Float32Array | Float64Array>(heap: HeapLayout<B>): HeapLayout<B> {
  return {
    kind: 'heap',
    column: shared(heap.column),
    bound: shared(heap.bound),
    base: shared(heap.base),
    leafStart: shared(heap.leafStart),
    depth: shared(heap.depth),
    leafValue: shared(heap.leafValue),
  };
}

/** Tree steps one row costs: the sum of the trees' depths (lockstep walks take all of them). */
export function stepsPerRow(layout: KernelLayout): number {
  const depth = layout.kind === 'pointer' ? layout.pointer.depth : layout.heap.depth;
  let steps = 0;
  for (let t = 0; t < depth.length; t++) steps += depth[t] as number;
  return steps;
}
