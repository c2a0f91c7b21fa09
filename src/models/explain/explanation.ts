import type { Scores } from '../scores.js';
import type { RowContributions } from './tree-shap.js';

/**
 * Why one candidate got its score: the model's inputs and, where the model can say it, how much
 * each input moved the score. See docs/reference/models.md, "Explanations".
 */
export interface Explanation {
  /** The score `score` gives this candidate (after the output transform, e.g. a sigmoid); null for no score. */
  readonly score: number | null;
  /** Whether `bias` and `contributions` are given (linear and tree models; not ONNX nor remote ones). */
  readonly available: boolean;
  /** The margin before the output transform (the weighted sum, the trees' sum): `bias + Σ contributions`. */
  readonly margin: number | null;
  /** The part of the margin no input moved: a linear model's intercept, a tree model's expected margin. */
  readonly bias: number | null;
  /** By feature (`group:feature`), how far its value moved the margin from the bias. */
  readonly contributions: Readonly<Record<string, number>> | null;
  /** The model's inputs, by feature, as the model saw them (null: missing). */
  readonly inputs: Readonly<Record<string, number | null>>;
  /** Why contributions are not available. */
  readonly reason?: string;
  /** A chain's explanation of each model, in order; the fields above are the last model's. */
  readonly stages?: readonly StageExplanation[];
  /** Set when another model (a file model's `whenMissing`) scored in this one's place: its name and why. */
  readonly fallback?: { readonly model: string; readonly reason: string };
}

/** One model of a chain explained: an {@link Explanation} with the model's name. */
export interface StageExplanation extends Explanation {
  readonly model: string;
}

/** A score as an explanation gives it: a finite number, or null (no score), as the pipeline reads scores. */
function scoreValue(score: number | null | undefined): number | null {
  return typeof score === 'number' && Number.isFinite(score) ? score : null;
}

/** Row `row` of a row-major feature matrix, by feature name, missing (NaN) as null. */
function inputsOf(
  features: readonly string[],
  matrix: Float64Array,
  row: number,
): Record<string, number | null> {
  const cols = features.length;
  const inputs: Record<string, number | null> = {};
  features.forEach((name, col) => {
    const value = matrix[row * cols + col] as number;
    inputs[name] = Number.isNaN(value) ? null : value;
  });
  return inputs;
}

/**
 * Explanations with contributions: per row, the contributions by feature (a feature listed twice
 * gets the sum of its columns'), its margin and its score.
 */
export function explainedRows(
  features: readonly string[],
  matrix: Float64Array,
  rows: readonly RowContributions[],
  margins: ArrayLike<number>,
  scores: Scores,
): Explanation[] {
  return rows.map(({ bias, values }, row) => {
    const contributions: Record<string, number> = {};
    features.forEach((name, col) => {
      const value = values[col] as number;
      const earlier = contributions[name];
      contributions[name] = earlier === undefined ? value : earlier + value;
    });
    return {
      score: scoreValue(scores[row]),
      available: true,
      margin: margins[row] as number,
      bias,
      contributions,
      inputs: inputsOf(features, matrix, row),
    };
  });
}

/** Explanations without contributions (ONNX, remote and custom models): the inputs and the score, and why. */
export function unexplainedRows(
  features: readonly string[],
  matrix: Float64Array,
  scores: Scores,
  reason: string,
): Explanation[] {
  return Array.from({ length: scores.length }, (_, row) => ({
    score: scoreValue(scores[row]),
    available: false,
    margin: null,
    bias: null,
    contributions: null,
    inputs: inputsOf(features, matrix, row),
    reason,
  }));
}

/** One entity's contributions as a hand-written model reports them (see `defineModel`'s `contributions`). */
export interface ModelContributions {
  /** The part of the score no input moved. */
  readonly bias: number;
  /** By feature, how much it added to the score: `bias + Σ` is the score. */
  readonly contributions: Readonly<Record<string, number>>;
}

/**
 * Explanations from a model's own contributions: the margin is `bias + Σ contributions`, added in
 * the order given (the order the model adds them in, so that it is the score bit for bit).
 */
export function contributedRows(
  features: readonly string[],
  matrix: Float64Array,
  rows: readonly ModelContributions[],
  scores: Scores,
): Explanation[] {
  return rows.map(({ bias, contributions }, row) => {
    let margin = bias;
    for (const value of Object.values(contributions)) margin += value;
    return {
      score: scoreValue(scores[row]),
      available: true,
      margin,
      bias,
      contributions: { ...contributions },
      inputs: inputsOf(features, matrix, row),
    };
  });
}
