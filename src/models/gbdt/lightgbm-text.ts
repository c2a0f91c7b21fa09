import { ModelInvalidError } from '../../errors/index.js';
import { GbdtModelError } from './model-error.js';
import { TreeEnsemble, type TreeEnsembleOptions } from './tree-ensemble.js';
import { type EnsembleSource, MissingRule, type OutputTransform, type TreeSource } from './tree-source.js';

/** decision_type bits (LightGBM's tree.h). */
const CATEGORICAL_MASK = 1;
const DEFAULT_LEFT_MASK = 2;
/** MissingType (bits 2-3) → our rule: None, Zero, NaN. */
const MISSING_RULES = [MissingRule.NAN_AS_ZERO, MissingRule.ZERO_DEFAULT, MissingRule.NAN_DEFAULT];

const IDENTITY: OutputTransform = { kind: 'identity' };
/** Objectives with one output per row, as LightGBM names them in model files. */
const REGRESSION = ['regression', 'regression_l1', 'huber', 'fair', 'quantile', 'mape', 'custom', 'none'];
const LOG_LINK = ['poisson', 'gamma', 'tweedie'];
const RANKING = ['lambdarank', 'rank_xendcg'];

/** The objectives {@link parseLightgbmText} evaluates. */
export const LIGHTGBM_OBJECTIVES: readonly string[] = [
  ...REGRESSION,
  ...LOG_LINK,
  ...RANKING,
  'binary',
  'cross_entropy',
];

/** `objective=binary sigmoid:1` → the transform LightGBM's objective applies to the raw score. */
function transformOf(objective: string): OutputTransform {
  const [name = '', ...params] = objective.trim().split(/\s+/);
  if (name === 'binary') {
    const sigmoid = params.find((p) => p.startsWith('sigmoid:'));
    const scale = sigmoid ? Number(sigmoid.slice('sigmoid:'.length)) : 1;
    if (!(scale > 0)) throw new ModelInvalidError(`objective ${objective} has an invalid sigmoid parameter`);
    return { kind: 'sigmoid', scale };
  }
  if (name === 'cross_entropy') return { kind: 'sigmoid', scale: 1 };
  if (LOG_LINK.includes(name)) return { kind: 'exp' };
  if (RANKING.includes(name)) return IDENTITY;
  if (REGRESSION.includes(name)) return params.includes('sqrt') ? { kind: 'signed-square' } : IDENTITY;
  throw new ModelInvalidError(
    `objective ${objective} is not supported; supported: ${LIGHTGBM_OBJECTIVES.join(', ')}`,
  );
}

/** LightGBM writes doubles with %g, so infinities can appear as `inf`. */
function parseNumber(token: string): number {
  const lower = token.toLowerCase();
  if (lower === 'inf' || lower === '+inf' || lower === 'infinity') return Number.POSITIVE_INFINITY;
  if (lower === '-inf' || lower === '-infinity') return Number.NEGATIVE_INFINITY;
  if (lower === 'nan' || lower === '-nan') return Number.NaN;
  return token === '' ? Number.NaN : Number(token);
}

/** One `key=value` block (the header or a `Tree=` section), with its first line number. */
class Section {
  readonly fields = new Map<string, string>();

  constructor(
    readonly name: string,
    readonly line: number,
  ) {}

  has(key: string): boolean {
    return this.fields.has(key);
  }

  text(key: string): string {
    const value = this.fields.get(key);
    if (value === undefined) throw new ModelInvalidError(`${this.name} (line ${this.line}) has no ${key}=`);
    return value;
  }

  numbers(key: string, length: number): Float64Array {
    const tokens = this.text(key).trim().split(/\s+/).filter(Boolean);
    if (tokens.length !== length) {
      throw new ModelInvalidError(
        `${this.name} (line ${this.line}): ${key} has ${tokens.length} values, expected ${length}`,
      );
    }
    const values = Float64Array.from(tokens, parseNumber);
    const bad = values.findIndex((v, i) => Number.isNaN(v) && !/^-?nan$/i.test(tokens[i] as string));
    if (bad >= 0)
      throw new ModelInvalidError(
        `${this.name} (line ${this.line}): ${key} value ${tokens[bad]} is not a number`,
      );
    return values;
  }

  integers(key: string, length: number): Int32Array {
    const values = this.numbers(key, length);
    const bad = values.findIndex((v) => !Number.isInteger(v));
    if (bad >= 0)
      throw new ModelInvalidError(
        `${this.name} (line ${this.line}): ${key} value ${values[bad]} is not an integer`,
      );
    return Int32Array.from(values);
  }

  count(key: string): number {
    const value = Number(this.text(key));
    if (!Number.isInteger(value) || value < 0) {
      throw new ModelInvalidError(
        `${this.name} (line ${this.line}): ${key}=${this.text(key)} is not a count`,
      );
    }
    return value;
  }
}

/** Splits the file into its header and tree sections; everything after `end of trees` is ignored. */
function sections(text: string): { header: Section; trees: Section[] } {
  const lines = text.split(/\r?\n/);
  if (lines[0]?.trim() !== 'tree') throw new ModelInvalidError('the first line is not "tree"');
  const header = new Section('the header', 1);
  const trees: Section[] = [];
  let current = header;
  for (let i = 1; i < lines.length; i++) {
    const line = (lines[i] as string).trim();
    if (line === 'end of trees') break;
    if (line === '') continue;
    const eq = line.indexOf('=');
    const key = eq < 0 ? line : line.slice(0, eq);
    const value = eq < 0 ? '' : line.slice(eq + 1);
    if (key === 'Tree') {
      current = new Section(`Tree=${value}`, i + 1);
      trees.push(current);
    } else {
      current.fields.set(key, value);
    }
  }
  if (trees.length === 0) throw new ModelInvalidError('the file has no Tree= sections');
  return { header, trees };
}

function parseTree(section: Section): TreeSource {
  const leaves = section.count('num_leaves');
  if (leaves === 0) throw new ModelInvalidError(`${section.name} has num_leaves=0`);
  if (section.has('is_linear') && section.text('is_linear').trim() !== '0') {
    throw new ModelInvalidError(
      `${section.name} is a linear tree (linear_tree=true), which is not supported`,
    );
  }
  const leafValue = section.numbers('leaf_value', leaves);
  const splits = leaves - 1;
  const nodes = splits + leaves;
  // Unified numbering: splits keep their index, leaf j becomes node splits + j.
  const left = new Int32Array(nodes).fill(-1);
  const right = new Int32Array(nodes).fill(-1);
  const feature = new Int32Array(nodes);
  const threshold = new Float64Array(nodes);
  const value = new Float64Array(nodes);
  const missing = new Uint8Array(nodes);
  const defaultLeft = new Uint8Array(nodes);
  const categories = new Map<number, Uint32Array>();
  value.set(leafValue, splits);
  if (splits > 0) {
    const toNode = (child: number) => (child >= 0 ? child : splits + ~child);
    left.set(section.integers('left_child', splits).map(toNode));
    right.set(section.integers('right_child', splits).map(toNode));
    feature.set(section.integers('split_feature', splits));
    const thresholds = section.numbers('threshold', splits);
    threshold.set(thresholds);
    const decisions = section.integers('decision_type', splits);
    const numCat = section.has('num_cat') ? section.count('num_cat') : 0;
    const boundaries = numCat > 0 ? section.integers('cat_boundaries', numCat + 1) : new Int32Array(1);
    const words =
      numCat > 0 ? section.numbers('cat_threshold', boundaries[numCat] as number) : new Float64Array();
    decisions.forEach((decision, node) => {
      const rule = MISSING_RULES[(decision >> 2) & 3];
      if (rule === undefined)
        throw new ModelInvalidError(`${section.name}: node ${node} has decision_type ${decision}`);
      missing[node] = rule;
      defaultLeft[node] = decision & DEFAULT_LEFT_MASK ? 1 : 0;
      if (decision & CATEGORICAL_MASK) {
        const index = thresholds[node] as number;
        const start = boundaries[index];
        const end = boundaries[index + 1];
        if (!Number.isInteger(index) || start === undefined || end === undefined || end < start) {
          throw new ModelInvalidError(
            `${section.name}: categorical node ${node} points at missing bitset ${index}`,
          );
        }
        categories.set(node, Uint32Array.from(words.subarray(start, end)));
      }
    });
  }
  const cover = splits > 0 ? coverOf(section, splits, leaves) : undefined;
  return {
    left,
    right,
    feature,
    threshold,
    value,
    missing,
    defaultLeft,
    categories,
    ...(cover ? { cover } : {}),
  };
}

/**
 * Each node's training-row count in the unified numbering (splits, then leaves), from
 * `internal_count` and `leaf_count`: what LightGBM's own TreeSHAP weighs splits by. Undefined
 * when they are absent or damaged: only explanations need them, so such a file still scores.
 */
function coverOf(section: Section, splits: number, leaves: number): Float64Array | undefined {
  try {
    const cover = new Float64Array(splits + leaves);
    cover.set(section.numbers('internal_count', splits));
    cover.set(section.numbers('leaf_count', leaves), splits);
    return cover;
  } catch {
    return undefined;
  }
}

/** Reads a LightGBM text model (`Booster.save_model("model.txt")`) into a source. */
export function lightgbmSource(text: string): EnsembleSource {
  const { header, trees } = sections(text);
  const numClass = header.has('num_class') ? header.count('num_class') : 1;
  const perIteration = header.has('num_tree_per_iteration') ? header.count('num_tree_per_iteration') : 1;
  if (numClass > 1 || perIteration > 1) {
    throw new ModelInvalidError(`multi-class models (num_class=${numClass}) are not supported`);
  }
  const objective = header.has('objective') ? header.text('objective').trim() : 'none';
  const numFeatures = header.count('max_feature_idx') + 1;
  const names = header.has('feature_names') ? header.text('feature_names').trim().split(/\s+/) : [];
  return {
    semantics: 'lightgbm',
    trees: trees.map(parseTree),
    baseMargin: 0,
    averageOutput: header.has('average_output'),
    transform: transformOf(objective),
    objective,
    numFeatures,
    ...(names.length > 0 ? { featureNames: names } : {}),
  };
}

/**
 * Parses the text of a LightGBM model into a ready evaluator. `file` names the model in errors,
 * which are {@link GbdtModelError}s saying what is wrong and where.
 */
export function parseLightgbmText(
  text: string,
  file = '<inline>',
  options?: TreeEnsembleOptions,
): TreeEnsemble {
  try {
    return TreeEnsemble.fromSource(lightgbmSource(text), options);
  } catch (error) {
    throw new GbdtModelError(file, `not a usable LightGBM text model: ${(error as Error).message}`, {
      cause: error,
    });
  }
}
