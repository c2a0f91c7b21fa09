import type { InputColumns } from './input-columns.js';
import { encodeNumericSplit } from './split-encoding.js';
import type { TreeShape } from './tree-shape.js';
import type { EnsembleSource } from './tree-source.js';

/**
 * Every tree padded to a complete binary tree of its depth and stored in heap order, 1-based
 * from the tree's `base`: slot h's children are 2h (slot 0) and 2h+1 (slot 1), so a step needs no
 * child pointer, and every row takes exactly `depth` steps, which lets several rows walk one tree
 * in lockstep with no data-dependent branch. A leaf above the bottom is padded with splits whose
 * bound is NaN (never reached: always slot 0) down to copies of its value. Numerical splits only.
 *
 * XGBoost models keep bounds (and inputs) in float32, which is exact for them and smaller in
 * cache; LightGBM models need doubles.
 */
export interface HeapLayout<Bounds extends Float32Array | Float64Array> {
  readonly kind: 'heap';
  /** Per split slot, the derived input column it reads. */
  readonly column: Int32Array;
  /** Per split slot: go to slot 1 when the value is `>= bound`. */
  readonly bound: Bounds;
  /** Per tree, the index before its root: its root is at `base + 1`. */
  readonly base: Int32Array;
  /** Per tree, its first leaf in `leafValue`. */
  readonly leafStart: Int32Array;
  readonly depth: Int32Array;
  readonly leafValue: Float64Array;
}

/**
 * What the heap kernels read of a {@link HeapLayout}: the same, but the two arrays read at every
 * step may be plain arrays of numbers (see `kernelLayout` in flat-layout.ts).
 */
export interface HeapKernelLayout extends Omit<HeapLayout<Float32Array | Float64Array>, 'column' | 'bound'> {
  readonly column: ArrayLike<number>;
  readonly bound: ArrayLike<number>;
}

/** Split slots plus leaves of the padded layout, to decide whether padding costs too much memory. */
export function heapLayoutSize(shapes: readonly TreeShape[]): number {
  return shapes.reduce((total, shape) => total + 2 ** (shape.depth + 1), 0);
}

/** Lays out `source` (numerical splits only) in heap order; `leafScale` per tree applies DART weights. */
export function buildHeapLayout<Bounds extends Float32Array | Float64Array>(
  source: EnsembleSource,
  shapes: readonly TreeShape[],
  columns: InputColumns,
  leafScale: (tree: number, value: number) => number,
  makeBounds: (length: number) => Bounds,
): HeapLayout<Bounds> {
  const trees = source.trees.length;
  const base = new Int32Array(trees);
  const leafStart = new Int32Array(trees);
  const depth = new Int32Array(trees);
  let slotTotal = 0;
  let leafTotal = 0;
  shapes.forEach((shape, t) => {
    base[t] = slotTotal;
    leafStart[t] = leafTotal;
    depth[t] = shape.depth;
    slotTotal += 2 ** shape.depth;
    leafTotal += 2 ** shape.depth;
  });
  const column = new Int32Array(slotTotal);
  const bound = makeBounds(slotTotal).fill(Number.NaN) as Bounds;
  const leafValue = new Float64Array(leafTotal);
  source.trees.forEach((tree, t) => {
    const leaves = 2 ** (depth[t] as number);
    const slotBase = base[t] as number;
    const leafBase = (leafStart[t] as number) - leaves;
    // Pairs of (source node, heap slot); padding slots keep column 0 and bound NaN.
    const stack: number[] = [0, 1];
    while (stack.length > 0) {
      const slot = stack.pop() as number;
      const node = stack.pop() as number;
      const left = tree.left[node] as number;
      if (slot >= leaves) {
        leafValue[leafBase + slot] = leafScale(t, tree.value[node] as number);
      } else if (left < 0) {
        stack.push(node, 2 * slot, node, 2 * slot + 1);
      } else {
        const split = encodeNumericSplit(
          source.semantics,
          columns,
          tree.feature[node] as number,
          tree.threshold[node] as number,
          tree.missing[node] as number,
          tree.defaultLeft[node] === 1,
        );
        column[slotBase + slot] = split.column;
        bound[slotBase + slot] = split.bound;
        const leftSlot = 2 * slot + split.leftSlot;
        const rightSlot = 2 * slot + 1 - split.leftSlot;
        stack.push(tree.right[node] as number, rightSlot, left, leftSlot);
      }
    }
  });
  return { kind: 'heap', column, bound, base, leafStart, depth, leafValue };
}
