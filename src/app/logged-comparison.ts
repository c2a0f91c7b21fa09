import type { TrainingRow } from '../events/export/training-join.js';
import {
  type ComparisonOptions,
  type ComparisonResult,
  compareCounterfactually,
} from '../training/counterfactual-comparison.js';
import {
  estimatePositionBias,
  inversePropensityWeights,
  type PositionBiasEstimate,
} from '../training/position-bias.js';

/**
 * The most a click counts for when its position's examination is low: 1/θ clipped to this, so a
 * few clicks deep in the page cannot outweigh everything else (docs/reference/training.md).
 */
export const DEFAULT_MAX_WEIGHT = 10;

/**
 * A logged row's context for the position-bias estimate: the product and what its request asked
 * (`context`: its query, user and fields); for rows logged without it, the product and every
 * input logged for it.
 */
function contextOf(row: TrainingRow): string {
  const product = `${row.entity_type}\u0000${row.entity_id}\u0000`;
  if (typeof row.context === 'string') return `${product}${row.context}`;
  const features = row.features ?? {};
  const names = Object.keys(features).sort();
  return `${product}${names.join('\u0000')}\u0000${JSON.stringify(names.map((n) => features[n]))}`;
}

/**
 * The examination curve of the logged requests' positions: the same product for the same request
 * context (query, user) shown at different positions (`estimatePositionBias`). A row counts as
 * clicked when its label is above 0.
 */
export function positionBiasOf(requests: readonly TrainingRow[][]): PositionBiasEstimate {
  return estimatePositionBias(
    requests.flatMap((rows) =>
      rows.map((row) => ({ context: contextOf(row), position: row.position, clicked: row.label > 0 })),
    ),
  );
}

/** Each row's inverse-propensity weight at its logged position (all 1 without a curve). */
export function weightsOf(
  requests: readonly TrainingRow[][],
  bias: PositionBiasEstimate,
  maxWeight = DEFAULT_MAX_WEIGHT,
): Float64Array {
  const positions = requests.flatMap((rows) => rows.map((row) => row.position));
  return bias.curve === undefined
    ? new Float64Array(positions.length).fill(1)
    : inversePropensityWeights(positions, bias.curve, maxWeight);
}

/** What the gate is given: logged requests and two models' scores of their rows, in order. */
export interface LoggedComparisonInput {
  readonly requests: readonly TrainingRow[][];
  readonly candidate: ArrayLike<number>;
  readonly serving: ArrayLike<number>;
  readonly bias: PositionBiasEstimate;
  readonly maxWeight?: number;
}

/**
 * The promotion gate's comparison (`compareCounterfactually`) on logged requests: each row's gain
 * 2^label − 1, weighted by the inverse of the examination of the position it was shown at.
 */
export function compareOnLogs(
  input: LoggedComparisonInput,
  options: ComparisonOptions = {},
): ComparisonResult {
  const { requests } = input;
  return compareCounterfactually(
    {
      groups: requests.map((rows) => rows.length),
      gains: requests.flatMap((rows) => rows.map((row) => 2 ** row.label - 1)),
      weights: weightsOf(requests, input.bias, input.maxWeight),
      candidate: input.candidate,
      serving: input.serving,
    },
    options,
  );
}
