import { ColumnKind, type InputColumns } from './input-columns.js';
import { categoricalFlags, encodeNumericSplit } from './split-encoding.js';
import type { TreeShape } from './tree-shape.js';
import type { EnsembleSource } from './tree-source.js';

/**
 * Trees as nodes with one child pointer each: the two children of a split are adjacent (slot 0
 * at `child`, slot 1 at `child + 1`). A leaf points at itself with bound NaN, so a step from a
 * leaf stays there: rows can walk a tree for a fixed number of steps, in lockstep, without
 * checking for leaves. Used when padding to a complete tree would cost too much memory (deep,
 * lopsided LightGBM trees) or for categorical splits.
 */
export interface PointerLayout {
  readonly kind: 'pointer';
  /** Per node: its first child's index; its own index for a leaf. */
  readonly child: Int32Array;
  readonly column: Int32Array;
  /** Numerical split: go to slot 1 when the value is `>= bound`; categorical: its record index. */
  readonly bound: Float64Array;
  /** Per node, 1 for a categorical split. */
  readonly categorical: Uint8Array;
  /** Per node, the leaf's output (0 for splits). */
  readonly value: Float64Array;
  readonly root: Int32Array;
  readonly depth: Int32Array;
  /**
   * Per tree, 1 to walk each row until it reaches a leaf (trees with categorical splits, or so
   * lopsided that most rows would idle at their leaf for many of the fixed steps); 0 for lockstep.
   */
  readonly walk: Uint8Array;
  /** Per categorical record, its {@link categoricalFlags}. */
  readonly categoryFlags: Uint8Array;
  /** Per categorical record, where its bitset starts in `categoryWords` (one more entry at the end). */
  readonly categoryStart: Int32Array;
  readonly categoryWords: Uint32Array;
}

/**
 * What the pointer kernels read of a {@link PointerLayout}: the same, but the three arrays read at
 * every step may be plain arrays of numbers (see `kernelLayout` in flat-layout.ts).
 */
export interface PointerKernelLayout extends Omit<PointerLayout, 'child' | 'column' | 'bound'> {
  readonly child: ArrayLike<number>;
  readonly column: ArrayLike<number>;
  readonly bound: ArrayLike<number>;
}

/**
 * Lays out `source` with child pointers; `leafScale` per tree applies DART weights. `walkAll`
 * walks every tree row by row instead of choosing per tree.
 */
export function buildPointerLayout(
  source: EnsembleSource,
  shapes: readonly TreeShape[],
  columns: InputColumns,
  leafScale: (tree: number, value: number) => number,
  walkAll = false,
): PointerLayout {
  const nodes = shapes.reduce((total, shape) => total + shape.splits + shape.leaves, 0);
  const child = new Int32Array(nodes);
  const column = new Int32Array(nodes);
  const bound = new Float64Array(nodes);
  const categorical = new Uint8Array(nodes);
  const value = new Float64Array(nodes);
  const root = new Int32Array(source.trees.length);
  const depth = Int32Array.from(shapes, (shape) => shape.depth);
  // Lockstep costs `depth` steps per row, walking the row's own path plus branch misses (DR-013).
  const walk = Uint8Array.from(shapes, (shape, t) =>
    walkAll || (source.trees[t]?.categories?.size ?? 0) > 0 || shape.depth > 1.75 * shape.meanLeafDepth
      ? 1
      : 0,
  );
  const flags: number[] = [];
  const starts: number[] = [0];
  const words: number[] = [];
  let nextNode = 0;
  source.trees.forEach((tree, t) => {
    root[t] = nextNode++;
    // Pairs of (source node, flat node).
    const stack: number[] = [0, root[t] as number];
    while (stack.length > 0) {
      const at = stack.pop() as number;
      const node = stack.pop() as number;
      const left = tree.left[node] as number;
      const right = tree.right[node] as number;
      if (left < 0) {
        value[at] = leafScale(t, tree.value[node] as number);
        child[at] = at;
        bound[at] = Number.NaN;
        continue;
      }
      const first = nextNode;
      nextNode += 2;
      child[at] = first;
      const feature = tree.feature[node] as number;
      const bitset = tree.categories?.get(node);
      if (bitset) {
        categorical[at] = 1;
        column[at] = columns.column(feature, ColumnKind.PLAIN);
        bound[at] = flags.length;
        flags.push(categoricalFlags(source.semantics, tree.defaultLeft[node] === 1));
        words.push(...bitset);
        starts.push(words.length);
        stack.push(left, first, right, first + 1);
      } else {
        const split = encodeNumericSplit(
          source.semantics,
          columns,
          feature,
          tree.threshold[node] as number,
          tree.missing[node] as number,
          tree.defaultLeft[node] === 1,
        );
        column[at] = split.column;
        bound[at] = split.bound;
        stack.push(left, first + split.leftSlot, right, first + 1 - split.leftSlot);
      }
    }
  });
  return {
    kind: 'pointer',
    child,
    column,
    bound,
    categorical,
    value,
    root,
    depth,
    walk,
    categoryFlags: Uint8Array.from(flags),
    categoryStart: Int32Array.from(starts),
    categoryWords: Uint32Array.from(words),
  };
}
