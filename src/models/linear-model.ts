import { readFileSync } from 'node:fs';
import type { EntityType } from '../entities/define-entity.js';
import { ModelInvalidError } from '../errors/index.js';
import { splitName } from '../request/feature-table.js';
import { explainedRows } from './explain/explanation.js';
import { linearContributions, marginOf } from './explain/linear-contributions.js';
import { featureMatrix } from './feature-matrix.js';
import { type FileModel, type FileModelOptions, fileModel } from './file-model.js';
import { modelPath } from './model-file.js';
import { type Objective, objectiveOf } from './objective.js';

/** How {@link linearModel} is configured. */
export interface LinearModelOptions<E extends EntityType = EntityType> extends FileModelOptions<E> {
  /**
   * The features the weights may name. @defaultValue the weights' names, read from the file when the
   * model is declared (names must be known before the server starts, so a reload may re-weight them only).
   */
  features?: readonly string[];
  /** `raw`: the weighted sum; `sigmoid`: 1 / (1 + e^-sum), logistic regression. @defaultValue `'raw'` */
  objective?: Objective;
}

/** A parsed weights file: one weight per declared feature (0 for those it does not name). */
interface LinearWeights {
  readonly weights: Float64Array;
  readonly bias: number;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The `weights` object of a linear model file, checked; throws saying what is wrong. */
function weightsOf(text: string): { weights: Map<string, number>; bias: number } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ModelInvalidError(`not JSON (${(error as Error).message})`);
  }
  if (!isRecord(json) || !isRecord(json.weights))
    throw new ModelInvalidError('expected {"weights": {"group:feature": number, ...}, "bias": number}');
  const weights = new Map<string, number>();
  for (const [name, weight] of Object.entries(json.weights)) {
    if (typeof weight !== 'number' || !Number.isFinite(weight))
      throw new ModelInvalidError(`the weight of ${JSON.stringify(name)} is not a finite number`);
    try {
      splitName(name);
    } catch (error) {
      // The file's mistake, not a feature read in a request: a model error like the others here.
      throw new ModelInvalidError((error as Error).message, { cause: error });
    }
    weights.set(name, weight);
  }
  const bias = json.bias ?? 0;
  if (typeof bias !== 'number' || !Number.isFinite(bias))
    throw new ModelInvalidError('"bias" is not a finite number');
  return { weights, bias };
}

function parseLinear(text: string, features: readonly string[]): LinearWeights {
  const { weights, bias } = weightsOf(text);
  const unknown = [...weights.keys()].filter((name) => !features.includes(name));
  if (unknown.length > 0) {
    throw new ModelInvalidError(
      `weights for features the model does not list: ${unknown.join(', ')} (its features: ${features.join(', ') || 'none'})`,
    );
  }
  return { weights: Float64Array.from(features, (name) => weights.get(name) ?? 0), bias };
}

/** The weights' feature names, read when the model is declared, for a model declared without `features`. */
function featuresFromFile(name: string, path: string): string[] {
  try {
    return [...weightsOf(readFileSync(path, 'utf8')).weights.keys()];
  } catch (error) {
    throw new ModelInvalidError(
      `linear model ${name}: cannot read its features from ${path}: ${(error as Error).message}`,
      { file: path, cause: error },
    );
  }
}

/**
 * A linear (or, with `objective: 'sigmoid'`, logistic) model from a JSON file: score = bias + Σ w ×
 * feature. A missing value counts as 0, as in a sparse training row; booleans are 1 and 0. Reloaded
 * when the file changes. Explanations are exact: weight × value per feature, the bias the intercept.
 *
 * @example
 * import { linearModel } from 'rankd';
 * // models/ctr.json: {"weights": {"product_stats:ctr_7d": 4.2, "text_match:title": 1.5}, "bias": -0.3}
 * export const Ctr = linearModel({ name: 'ctr', file: 'models/ctr.json', objective: 'sigmoid' });
 */
export function linearModel<E extends EntityType = EntityType>(options: LinearModelOptions<E>): FileModel<E> {
  const features = options.features ?? featuresFromFile(options.name, modelPath(options.file));
  const transform = objectiveOf(options.objective ?? 'raw', `linear model ${options.name}`);
  return fileModel<LinearWeights, E>(options, features, {
    format: 'linear',
    load: (file) => parseLinear(file.bytes.toString('utf8'), features),
    score({ weights, bias }, entities) {
      const cols = weights.length;
      const matrix = featureMatrix(entities, features);
      const scores = new Float64Array(entities.length);
      for (let row = 0; row < entities.length; row++) {
        let sum = bias;
        for (let col = 0; col < cols; col++) {
          const value = matrix[row * cols + col] as number;
          if (!Number.isNaN(value)) sum += (weights[col] as number) * value;
        }
        scores[row] = sum;
      }
      return transform(scores);
    },
    explain({ weights, bias }, entities) {
      const cols = weights.length;
      const matrix = featureMatrix(entities, features);
      const rows = Array.from({ length: entities.length }, (_, row) =>
        linearContributions(weights, bias, matrix.subarray(row * cols, (row + 1) * cols)),
      );
      // Summed in column order from the bias, as `score` sums: the margin is the score's, exactly.
      const margins = Float64Array.from(rows, marginOf);
      return explainedRows(features, matrix, rows, margins, transform(Float64Array.from(margins)));
    },
  });
}
