import { ModelInvalidError } from '../../errors/index.js';
import {
  addTrees,
  type FlatLayout,
  inputArray,
  type KernelLayout,
  kernelLayout,
  type LayoutInput,
  type LayoutSums,
} from './flat-layout.js';
import { buildHeapLayout, heapLayoutSize } from './heap-layout.js';
import { InputColumns } from './input-columns.js';
import { applyTransform } from './output-transform.js';
import { buildPointerLayout } from './pointer-layout.js';
import { measureTree } from './tree-shape.js';
import type { EnsembleSource, OutputTransform, SplitSemantics } from './tree-source.js';

/**
 * Which flat layout to evaluate with. `auto` takes the heap layout (fastest) unless the model
 * has categorical splits or padding its trees to complete ones would multiply their size.
 * `pointer-walk` is the pointer layout with every tree walked row by row (tests compare it).
 */
export type LayoutChoice = 'auto' | 'heap' | 'pointer' | 'pointer-walk';

/** Options of {@link TreeEnsemble.fromSource}. */
export interface TreeEnsembleOptions {
  /** Forces a layout; for tests and benchmarks. */
  readonly layout?: LayoutChoice;
}

/** Deeper than this, a complete tree has more than 8k splits: use pointers. */
const MAX_HEAP_DEPTH = 13;
/** Padding may grow the node count this much before pointers are used instead. */
const MAX_HEAP_GROWTH = 8;

/**
 * A gradient-boosted tree model held in flat typed arrays (no object per node), scoring a batch of
 * rows per call. Rows are row-major `Float64Array`s, NaN meaning missing. Predictions follow the
 * source library's rules exactly (see {@link SplitSemantics}): XGBoost models give XGBoost's
 * float32 margins bit for bit, LightGBM models LightGBM's doubles.
 *
 * The evaluation is tree-major — each tree's nodes stay in cache while every row walks it — and
 * each split is a single `>=` against a derived input column (see `InputColumns`), so the walk has
 * no branch on missing values. Layouts and kernels: src/models/gbdt/README.md (DR-013, DR-014).
 */
export class TreeEnsemble {
  readonly semantics: SplitSemantics;
  /** The objective named in the model file. */
  readonly objective: string;
  readonly transform: OutputTransform;
  /** Input columns the model was trained with. */
  readonly numFeatures: number;
  /** Column names from the file, when it had them. */
  readonly featureNames: readonly string[] | undefined;
  readonly numTrees: number;
  /** The layout chosen at build time. */
  readonly layout: 'heap' | 'pointer';
  /** The smallest row width `predict` accepts: one past the highest feature a split reads. */
  readonly minColumns: number;
  /** The trees in their flat layout, as the kernels read them (see `kernelLayout`). */
  readonly kernel: KernelLayout;
  private readonly baseMargin: number;
  private readonly averageOutput: boolean;
  private readonly columns: InputColumns;
  // Scratch reused across calls: the derived columns of a batch, and XGBoost's float32 sums.
  private input: LayoutInput;
  private sum32 = new Float32Array(0);

  private constructor(source: EnsembleSource, options: TreeEnsembleOptions) {
    this.semantics = source.semantics;
    this.objective = source.objective;
    this.transform = source.transform;
    this.numFeatures = source.numFeatures;
    this.featureNames = source.featureNames;
    this.numTrees = source.trees.length;
    this.averageOutput = source.averageOutput === true;
    const xgboost = source.semantics === 'xgboost';
    this.baseMargin = xgboost ? Math.fround(source.baseMargin) : source.baseMargin;
    const shapes = source.trees.map((tree, index) => measureTree(tree, index));
    const weights = source.treeWeights;
    if (weights && weights.length !== source.trees.length) {
      throw new ModelInvalidError(`${weights.length} tree weights for ${source.trees.length} trees`);
    }
    // XGBoost leaves are float32 and DART multiplies them by a float32 weight in float32.
    const leafScale = (tree: number, value: number): number => {
      const weight = weights ? (weights[tree] as number) : 1;
      return xgboost ? Math.fround(Math.fround(value) * Math.fround(weight)) : value * weight;
    };
    this.columns = new InputColumns(source.semantics);
    const categorical = source.trees.some((tree) => (tree.categories?.size ?? 0) > 0);
    const nodes = shapes.reduce((total, shape) => total + shape.splits + shape.leaves, 0);
    const heapFits =
      shapes.every((shape) => shape.depth <= MAX_HEAP_DEPTH) &&
      heapLayoutSize(shapes) <= MAX_HEAP_GROWTH * nodes + 4096;
    const choice = options.layout ?? 'auto';
    if (choice === 'heap' && categorical)
      throw new ModelInvalidError('the heap layout cannot hold categorical splits');
    if (choice === 'heap' && !shapes.every((shape) => shape.depth <= MAX_HEAP_DEPTH)) {
      throw new ModelInvalidError(`the heap layout cannot hold trees deeper than ${MAX_HEAP_DEPTH}`);
    }
    this.layout = choice === 'heap' || (choice === 'auto' && !categorical && heapFits) ? 'heap' : 'pointer';
    let flat: FlatLayout;
    if (this.layout === 'pointer') {
      const pointer = buildPointerLayout(source, shapes, this.columns, leafScale, choice === 'pointer-walk');
      flat = { kind: 'pointer', pointer, sum32: xgboost };
    } else if (xgboost) {
      const heap = buildHeapLayout(source, shapes, this.columns, leafScale, (n) => new Float32Array(n));
      flat = { kind: 'heap32', heap, sum32: true };
    } else {
      const heap = buildHeapLayout(source, shapes, this.columns, leafScale, (n) => new Float64Array(n));
      flat = { kind: 'heap64', heap, sum32: false };
    }
    this.kernel = kernelLayout(flat);
    this.input = inputArray(flat, 0);
    this.minColumns = this.columns.maxFeature + 1;
    if (this.minColumns > source.numFeatures) {
      throw new ModelInvalidError(
        `a split reads feature ${this.columns.maxFeature}, but the model has ${source.numFeatures} features`,
      );
    }
  }

  /** Flattens a parsed model; throws a ModelInvalidError saying what is wrong if its trees are damaged. */
  static fromSource(source: EnsembleSource, options: TreeEnsembleOptions = {}): TreeEnsemble {
    return new TreeEnsemble(source, options);
  }

  /**
   * Raw scores (margins: base score plus the sum of leaves, before any sigmoid) of `rows` rows
   * of `cols` features each, row-major in `matrix`, NaN for missing. Writes into `out` when given.
   */
  predictMargin(matrix: Float64Array, rows: number, cols: number, out?: Float64Array): Float64Array {
    this.checkBatch(matrix, rows, cols);
    // invariant: a caller's buffer, never sized by input.
    if (out && out.length < rows) throw new RangeError(`out has room for ${out.length} rows, not ${rows}`);
    const result = out ?? new Float64Array(rows);
    const width = this.columns.width;
    if (this.input.length < rows * width) this.input = inputArray(this.kernel, rows * width);
    // XGBoost sums in float32; a Float32Array accumulator rounds each addition the same way.
    let acc: LayoutSums = result;
    if (this.kernel.sum32) {
      if (this.sum32.length < rows) this.sum32 = new Float32Array(rows);
      acc = this.sum32;
    }
    this.columns.fill(matrix, rows, cols, this.input);
    acc.fill(this.baseMargin, 0, rows);
    addTrees(this.kernel, this.input, width, rows, acc);
    if (acc !== result) for (let i = 0; i < rows; i++) result[i] = acc[i] as number;
    if (this.averageOutput && this.numTrees > 0) {
      for (let i = 0; i < rows; i++) result[i] = (result[i] as number) / this.numTrees;
    }
    return result;
  }

  /** Predictions: margins through the objective's transform (e.g. sigmoid for binary:logistic). */
  predict(matrix: Float64Array, rows: number, cols: number, out?: Float64Array): Float64Array {
    const margins = this.predictMargin(matrix, rows, cols, out);
    applyTransform(this.transform, margins, rows);
    if (this.semantics === 'xgboost' && this.transform.kind !== 'identity') {
      // XGBoost returns float32 predictions.
      for (let i = 0; i < rows; i++) margins[i] = Math.fround(margins[i] as number);
    }
    return margins;
  }

  private checkBatch(matrix: Float64Array, rows: number, cols: number): void {
    // invariant: gbdtModel checks at load that its features are the model's columns, and builds
    // the matrix from them; only a caller of this class passing its own matrix can get these wrong.
    if (!Number.isInteger(rows) || rows < 0) throw new RangeError(`rows must be a count, not ${rows}`);
    if (!Number.isInteger(cols) || cols < this.minColumns) {
      throw new RangeError(`the model reads ${this.minColumns} features per row; rows have ${cols}`);
    }
    if (matrix.length < rows * cols) {
      throw new RangeError(
        `${rows} rows of ${cols} need ${rows * cols} values; the matrix has ${matrix.length}`,
      );
    }
  }
}
