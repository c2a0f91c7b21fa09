/**
 * What `rankd train` and `rankd evaluate` share of the promotion gate: its flags, its lines, its
 * exit codes.
 * @module
 */
import type { TrainingReport } from '../app/train-ranker.js';
import type { ComparisonResult } from '../training/counterfactual-comparison.js';
import { numberFlag } from './options.js';

/** `rankd train` and `rankd evaluate` exit with this when the model is not better (1 is an error). */
export const NOT_BETTER_EXIT_CODE = 3;

/** The most positions printed on the curve's line; the report holds them all. */
const SHOWN_POSITIONS = 12;

const signed = (x: number) => `${x >= 0 ? '+' : '-'}${Math.abs(x).toFixed(4)}`;

/** The line that gives the examination curve, or why there is none. */
export function positionBiasLine(bias: TrainingReport['positionBias']): string {
  if (bias.curve === null)
    return `position bias: not estimated (${bias.reason}); the comparison is not position-corrected`;
  const shown = bias.curve.slice(0, SHOWN_POSITIONS).map((x) => x.toFixed(2));
  const more = bias.curve.length > SHOWN_POSITIONS ? ' …' : '';
  const deepest =
    bias.estimatedPositions < bias.curve.length
      ? `; positions past ${bias.estimatedPositions} take position ${bias.estimatedPositions}'s`
      : '';
  const errors = bias.logStandardErrors
    .slice(1, bias.estimatedPositions)
    .map((e) => Math.round(100 * (Math.exp(e ?? 0) - 1)));
  const spread = `±${Math.min(...errors)}–${Math.max(...errors)}%`;
  return (
    `position bias: ${shown.join(' ')}${more} (how often users look at positions 1–${bias.curve.length}, ` +
    `relative to the top, ${spread}; from ${bias.contexts} products seen at several positions for the same request context${deepest})`
  );
}

/** What the verdict says in words, with the interval. */
function verdictWords(gate: ComparisonResult): string {
  const [low, high] = gate.interval;
  const interval = `${Math.round(gate.confidence * 100)}% interval ${signed(low)} to ${signed(high)}`;
  const kind = gate.verdict === 'better' ? 'better' : `not better (${gate.verdict})`;
  return `difference ${signed(gate.difference)}, ${interval}: ${kind}`;
}

/** The gate's line: both models' position-corrected DCG share, the difference and the verdict. */
export function comparisonLine(
  what: string,
  name: string,
  gate: ComparisonResult & { servingModel: string; positionCorrected: boolean },
): string {
  const metric = gate.positionCorrected ? 'position-corrected DCG' : 'DCG of the clicks as logged';
  return (
    `${what} (${metric}, ${gate.pagesWithFeedback} with feedback): ${name} ${gate.candidate.toFixed(4)}, ` +
    `serving (${gate.servingModel}) ${gate.serving.toFixed(4)}; ${verdictWords(gate)}`
  );
}

/** The one line of a refusal: why the model is not better. */
export function notBetterReason(gate: ComparisonResult): string {
  return verdictWords(gate).replace(/: not better \((\w+)\)$/, ' ($1)');
}

/** The gate's options shared by `rankd train` and `rankd evaluate`: `--confidence`, `--max-weight`. */
export function gateOptions(options: { confidence?: string | undefined; maxWeight?: string | undefined }) {
  const confidence = numberFlag(
    'confidence',
    options.confidence,
    (x) => x > 0 && x < 1,
    'a share between 0 and 1',
  );
  const maxWeight = numberFlag(
    'max-weight',
    options.maxWeight,
    (x) => x >= 1 && Number.isFinite(x),
    'a number ≥ 1',
  );
  return {
    ...(confidence === undefined ? {} : { confidence }),
    ...(maxWeight === undefined ? {} : { maxWeight }),
  };
}
