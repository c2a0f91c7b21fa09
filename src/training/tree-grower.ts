import { bestSplit, type SplitChoice, type SplitRules } from './best-split.js';
import type { FeatureBins } from './bins.js';
import {
  buildHistogram,
  clearHistogram,
  type Histogram,
  newHistogram,
  subtractHistogram,
} from './histogram.js';
import type { TrainedTree } from './trained-tree.js';

/** How {@link TreeGrower} grows a tree. */
export interface GrowRules extends SplitRules {
  readonly learningRate: number;
  /** 0: no limit. */
  readonly maxDepth: number;
  readonly maxLeaves: number;
}

/** A leaf that may still be split: its rows are `order[start .. end)`. */
interface OpenLeaf {
  node: number;
  start: number;
  end: number;
  depth: number;
  grad: number;
  hess: number;
  /** Its histogram, while it may still be split. */
  hist: Histogram | undefined;
  split: SplitChoice | undefined;
}

/** A tree's nodes while it grows, as plain arrays (a tree has tens of nodes). */
class NodeList {
  left: number[] = [];
  right: number[] = [];
  parent: number[] = [];
  feature: number[] = [];
  threshold: number[] = [];
  defaultLeft: number[] = [];
  baseWeight: number[] = [];
  gain: number[] = [];
  hessian: number[] = [];
  count: number[] = [];

  add(parent: number, weight: number, hess: number, count: number): number {
    this.left.push(-1);
    this.right.push(-1);
    this.parent.push(parent);
    this.feature.push(0);
    this.threshold.push(0);
    this.defaultLeft.push(0);
    this.baseWeight.push(weight);
    this.gain.push(0);
    this.hessian.push(hess);
    this.count.push(count);
    return this.left.length - 1;
  }

  toTree(): TrainedTree {
    return {
      left: Int32Array.from(this.left),
      right: Int32Array.from(this.right),
      parent: Int32Array.from(this.parent),
      feature: Int32Array.from(this.feature),
      threshold: Float32Array.from(this.threshold),
      defaultLeft: Uint8Array.from(this.defaultLeft),
      baseWeight: Float32Array.from(this.baseWeight),
      gain: Float32Array.from(this.gain),
      hessian: Float32Array.from(this.hessian),
      count: Uint32Array.from(this.count),
    };
  }
}

/**
 * Grows one regression tree on the binned training rows per call, best leaf first (the split
 * with the largest gain among all leaves, within `maxDepth` and `maxLeaves`; with the default
 * `maxLeaves` = 2^maxDepth that is XGBoost's depth-wise tree). Each node's rows are a contiguous
 * range of one index array, partitioned in place when it splits; a split reads only its smaller
 * child's rows and gets the larger child's histogram by subtraction. Buffers live across trees.
 */
export class TreeGrower {
  private readonly order: Uint32Array;
  private readonly scratch: Uint32Array;
  private readonly histBins: number;
  private readonly spare: Histogram[] = [];
  private readonly goesLeft = new Uint8Array(256);

  constructor(
    private readonly binned: FeatureBins,
    private readonly rules: GrowRules,
  ) {
    this.order = new Uint32Array(binned.rows);
    this.scratch = new Uint32Array(binned.rows);
    this.histBins = binned.offsets[binned.features] as number;
  }

  private takeHist(): Histogram {
    const hist = this.spare.pop();
    if (hist === undefined) return newHistogram(this.histBins);
    clearHistogram(hist);
    return hist;
  }

  private canSplit(leaf: OpenLeaf): boolean {
    const { maxDepth, minDataInLeaf } = this.rules;
    return (maxDepth === 0 || leaf.depth < maxDepth) && leaf.end - leaf.start >= 2 * minDataInLeaf;
  }

  /**
   * Grows a tree on `grad`/`hess` over the features in `active`, adds each row's leaf value to
   * `scores`, and returns the tree.
   */
  grow(
    grad: Float64Array,
    hess: Float64Array,
    active: Int32Array,
    activeCount: number,
    scores: Float32Array,
  ): TrainedTree {
    const { binned, rules, order } = this;
    const { bins, features, offsets } = binned;
    const rows = binned.rows;
    for (let i = 0; i < rows; i++) order[i] = i;
    let totalGrad = 0;
    let totalHess = 0;
    for (let r = 0; r < rows; r++) {
      totalGrad += grad[r] as number;
      totalHess += hess[r] as number;
    }
    const nodes = new NodeList();
    const weight = (g: number, h: number) => -g / (h + rules.lambdaL2);
    const root: OpenLeaf = {
      node: nodes.add(-1, weight(totalGrad, totalHess), totalHess, rows),
      start: 0,
      end: rows,
      depth: 0,
      grad: totalGrad,
      hess: totalHess,
      hist: undefined,
      split: undefined,
    };
    const leaves: OpenLeaf[] = [root];
    const findSplit = (leaf: OpenLeaf) => {
      if (leaf.hist === undefined) return;
      const hist = leaf.hist;
      leaf.split = bestSplit(
        hist,
        binned,
        active,
        activeCount,
        leaf.grad,
        leaf.hess,
        leaf.end - leaf.start,
        rules,
      );
    };
    if (this.canSplit(root)) {
      root.hist = this.takeHist();
      buildHistogram(root.hist, bins, features, offsets, active, activeCount, order, 0, rows, grad, hess);
      findSplit(root);
    }
    while (leaves.length < rules.maxLeaves) {
      let chosen = -1;
      let chosenGain = 0;
      for (let l = 0; l < leaves.length; l++) {
        const gain = leaves[l]?.split?.gain ?? 0;
        if (gain > chosenGain) {
          chosenGain = gain;
          chosen = l;
        }
      }
      if (chosen < 0) break;
      const leaf = leaves[chosen] as OpenLeaf;
      const split = leaf.split as SplitChoice;
      const [left, right] = this.splitLeaf(nodes, leaf, split, weight);
      leaves[chosen] = left;
      leaves.push(right);
      this.childHistograms(leaf, left, right, grad, hess, active, activeCount);
      findSplit(left);
      findSplit(right);
    }
    for (const leaf of leaves) {
      if (leaf.hist !== undefined) this.spare.push(leaf.hist);
      const value = Math.fround(rules.learningRate * weight(leaf.grad, leaf.hess));
      nodes.threshold[leaf.node] = value;
      for (let i = leaf.start; i < leaf.end; i++) {
        const row = order[i] as number;
        scores[row] = (scores[row] as number) + value;
      }
    }
    return nodes.toTree();
  }

  /** Records the split, partitions the leaf's rows (left ones first) and returns both children. */
  private splitLeaf(
    nodes: NodeList,
    leaf: OpenLeaf,
    split: SplitChoice,
    weight: (g: number, h: number) => number,
  ): [OpenLeaf, OpenLeaf] {
    const { order, scratch } = this;
    const { columns, rows, offsets } = this.binned;
    const f = split.feature;
    const column = f * rows;
    const missingBin = (offsets[f + 1] as number) - (offsets[f] as number) - 1;
    // Which bins go left, as 0/1: the loop below then has no branch to mispredict (DR-018).
    const goesLeft = this.goesLeft;
    for (let b = 0; b < missingBin; b++) goesLeft[b] = b <= split.bin ? 1 : 0;
    goesLeft[missingBin] = split.defaultLeft ? 1 : 0;
    let l = leaf.start;
    let r = 0;
    for (let i = leaf.start; i < leaf.end; i++) {
      const row = order[i] as number;
      const left = goesLeft[columns[column + row] as number] as number;
      order[l] = row;
      scratch[r] = row;
      l += left;
      r += left ^ 1;
    }
    order.set(scratch.subarray(0, r), l);
    const rightGrad = leaf.grad - split.leftGrad;
    const rightHess = leaf.hess - split.leftHess;
    const id = leaf.node;
    const leftId = nodes.add(id, weight(split.leftGrad, split.leftHess), split.leftHess, l - leaf.start);
    const rightId = nodes.add(id, weight(rightGrad, rightHess), rightHess, r);
    nodes.left[id] = leftId;
    nodes.right[id] = rightId;
    nodes.feature[id] = f;
    nodes.threshold[id] = split.threshold;
    nodes.defaultLeft[id] = split.defaultLeft ? 1 : 0;
    nodes.gain[id] = split.gain;
    const child = (node: number, start: number, end: number, grad: number, hess: number): OpenLeaf => ({
      node,
      start,
      end,
      depth: leaf.depth + 1,
      grad,
      hess,
      hist: undefined,
      split: undefined,
    });
    return [
      child(leftId, leaf.start, l, split.leftGrad, split.leftHess),
      child(rightId, l, leaf.end, rightGrad, rightHess),
    ];
  }

  /** Gives the children that may split a histogram: the smaller one's read, the larger one's subtracted. */
  private childHistograms(
    parent: OpenLeaf,
    left: OpenLeaf,
    right: OpenLeaf,
    grad: Float64Array,
    hess: Float64Array,
    active: Int32Array,
    activeCount: number,
  ): void {
    const parentHist = parent.hist as Histogram;
    parent.hist = undefined;
    const leftOpen = this.canSplit(left);
    const rightOpen = this.canSplit(right);
    if (!leftOpen && !rightOpen) {
      this.spare.push(parentHist);
      return;
    }
    const { bins, features, offsets } = this.binned;
    const [small, large] = left.end - left.start <= right.end - right.start ? [left, right] : [right, left];
    const smallHist = this.takeHist();
    buildHistogram(
      smallHist,
      bins,
      features,
      offsets,
      active,
      activeCount,
      this.order,
      small.start,
      small.end,
      grad,
      hess,
    );
    if (this.canSplit(large)) {
      subtractHistogram(parentHist, smallHist, offsets, active, activeCount);
      large.hist = parentHist;
    } else {
      this.spare.push(parentHist);
    }
    if (this.canSplit(small)) small.hist = smallHist;
    else this.spare.push(smallHist);
  }
}
