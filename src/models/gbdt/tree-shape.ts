import { ModelInvalidError } from '../../errors/index.js';
import type { TreeSource } from './tree-source.js';

/** What flattening needs to know about a tree before laying it out. */
export interface TreeShape {
  /** Longest root-to-leaf path in splits: 0 for a tree that is a single leaf. */
  readonly depth: number;
  /** Splits and leaves reachable from the root (deleted nodes left in the arrays are not). */
  readonly splits: number;
  readonly leaves: number;
  /** Mean depth of the leaves (unweighted): how lopsided the tree is, next to `depth`. */
  readonly meanLeafDepth: number;
}

/**
 * Checks that `tree` is a tree — children in range, every node reached once, arrays as long as
 * the node count — and measures it. Throws a ModelInvalidError naming the tree and node
 * otherwise, since a damaged file would otherwise loop forever or score garbage.
 */
export function measureTree(tree: TreeSource, index: number): TreeShape {
  const count = tree.left.length;
  const where = (node: number) => `tree ${index}, node ${node}`;
  if (count === 0) throw new ModelInvalidError(`tree ${index} has no nodes`);
  for (const [name, array] of Object.entries({
    right: tree.right,
    feature: tree.feature,
    threshold: tree.threshold,
    value: tree.value,
    missing: tree.missing,
    defaultLeft: tree.defaultLeft,
  })) {
    if (array.length !== count)
      throw new ModelInvalidError(`tree ${index}: ${name} has ${array.length} entries, not ${count}`);
  }
  const seen = new Uint8Array(count);
  const stack: number[] = [0, 0];
  let depth = 0;
  let splits = 0;
  let leaves = 0;
  let leafDepths = 0;
  while (stack.length > 0) {
    const level = stack.pop() as number;
    const node = stack.pop() as number;
    if (seen[node])
      throw new ModelInvalidError(`${where(node)} is reached twice: the tree has a cycle or shared node`);
    seen[node] = 1;
    const left = tree.left[node] as number;
    const right = tree.right[node] as number;
    if (left < 0 !== right < 0) throw new ModelInvalidError(`${where(node)} has one child, not two or none`);
    if (left < 0) {
      if (!Number.isFinite(tree.value[node]))
        throw new ModelInvalidError(`${where(node)} is a leaf without a finite value`);
      leaves++;
      leafDepths += level;
      depth = Math.max(depth, level);
      continue;
    }
    for (const child of [left, right]) {
      if (!Number.isInteger(child) || child >= count || child === 0) {
        throw new ModelInvalidError(`${where(node)} has child ${child}, outside the tree's ${count} nodes`);
      }
    }
    const feature = tree.feature[node] as number;
    if (!Number.isInteger(feature) || feature < 0)
      throw new ModelInvalidError(`${where(node)} splits on feature ${feature}`);
    if (!tree.categories?.has(node) && Number.isNaN(tree.threshold[node])) {
      throw new ModelInvalidError(`${where(node)} is a numerical split without a threshold`);
    }
    splits++;
    stack.push(right, level + 1, left, level + 1);
  }
  return { depth, splits, leaves, meanLeafDepth: leafDepths / leaves };
}
