import { AppDefinitionError } from '../errors/index.js';
/** What a model does to its raw output: nothing, or a sigmoid (a probability, for logistic models). */
export type Objective = 'raw' | 'sigmoid';

/** 1 / (1 + e^-x), written so that neither tail overflows. */
export function sigmoid(x: number): number {
  if (x >= 0) return 1 / (1 + Math.exp(-x));
  const e = Math.exp(x);
  return e / (1 + e);
}

/** The in-place transform of an objective; throws naming `owner` for an unknown one. */
export function objectiveOf(objective: Objective, owner: string): (scores: Float64Array) => Float64Array {
  if (objective === 'raw') return (scores) => scores;
  if (objective === 'sigmoid') {
    return (scores) => {
      for (let i = 0; i < scores.length; i++) scores[i] = sigmoid(scores[i] as number);
      return scores;
    };
  }
  throw new AppDefinitionError(
    `${owner}: objective must be 'raw' or 'sigmoid', got ${JSON.stringify(objective)}`,
  );
}
