import type { BusinessLogicStep } from '../business-logic/define-business-logic.js';
import { type FieldProblem, ValidationError } from '../errors/index.js';
import type { ExperimentScope } from '../experiments/assign.js';
import { withInnerComponents } from '../experiments/experiment-model.js';
import type { Model } from '../models/define-model.js';

/** A ranking request's `overrides` (see `OverridesSchema`), as the schema let it through. */
export interface Overrides {
  readonly variants?: Readonly<Record<string, string>>;
  readonly skip_business_logic?: readonly string[];
  readonly model?: string;
}

/** The request's overrides, or undefined when it sent none. */
export function overridesOf(request: Record<string, unknown>): Overrides | undefined {
  return request.overrides as Overrides | undefined;
}

function unknownName(
  field: readonly (string | number)[],
  what: string,
  name: string,
  allowed: Iterable<string>,
): FieldProblem {
  const names = [...allowed];
  const list = names.length === 0 ? 'there are none' : `allowed: ${names.join(', ')}`;
  return {
    loc: ['body', 'overrides', ...field],
    msg: `${JSON.stringify(name)} is not ${what} (${list})`,
    type: 'value_error.unknown_name',
  };
}

/** One 422 naming every problem: a caller fixes all of its overrides in one go. */
function refuse(problems: readonly FieldProblem[]): ValidationError {
  return new ValidationError(
    problems,
    problems.length === 1 ? problems[0]?.msg : 'Unknown names in overrides',
  );
}

/**
 * The models a request may swap in with `overrides.model`, by name: the pipeline's model and the
 * models its experiment variants use.
 */
export function swappableModels<M extends Model>(model: M): ReadonlyMap<string, M> {
  const byName = new Map<string, M>();
  for (const component of withInnerComponents([model]))
    if (typeof (component as Partial<Model>).score === 'function' && !byName.has(component.name))
      byName.set(component.name, component as M);
  return byName;
}

/** Every step or model `overrides` names that the pipeline lacks, each with the names allowed. */
export function pipelineOverrideProblems(
  overrides: Overrides | undefined,
  steps: readonly BusinessLogicStep[],
  models: ReadonlyMap<string, Model>,
): FieldProblem[] {
  if (overrides === undefined) return [];
  const problems: FieldProblem[] = [];
  const stepNames = steps.map((step) => step.name);
  for (const [i, name] of (overrides.skip_business_logic ?? []).entries())
    if (!stepNames.includes(name))
      problems.push(
        unknownName(['skip_business_logic', i], 'a business-logic step of this pipeline', name, stepNames),
      );
  if (overrides.model !== undefined && !models.has(overrides.model))
    problems.push(unknownName(['model'], 'a model of this pipeline', overrides.model, models.keys()));
  return problems;
}

/** Throws one 422 naming every step and model `overrides` names that the pipeline lacks, with the names allowed. */
export function checkPipelineOverrides(
  overrides: Overrides | undefined,
  steps: readonly BusinessLogicStep[],
  models: ReadonlyMap<string, Model>,
): void {
  const problems = pipelineOverrideProblems(overrides, steps, models);
  if (problems.length > 0) throw refuse(problems);
}

/** Every experiment or variant `overrides.variants` names that the request's experiments lack. */
export function variantOverrideProblems(
  overrides: Overrides | undefined,
  scope: ExperimentScope | undefined,
): FieldProblem[] {
  const forced = overrides?.variants;
  if (forced === undefined) return [];
  const problems: FieldProblem[] = [];
  for (const [id, variant] of Object.entries(forced)) {
    const experiment = scope?.experiments.get(id);
    if (experiment === undefined) {
      problems.push(
        unknownName(['variants', id], 'an experiment of this pipeline', id, scope?.experiments.keys() ?? []),
      );
      continue;
    }
    const names = experiment.variants.map((v) => v.name);
    if (!names.includes(variant))
      problems.push(unknownName(['variants', id], `a variant of ${id}`, variant, names));
  }
  return problems;
}

/** Throws one 422 naming every unknown experiment and variant of `overrides.variants`, with the names allowed. */
export function checkVariantOverrides(
  overrides: Overrides | undefined,
  scope: ExperimentScope | undefined,
): void {
  const problems = variantOverrideProblems(overrides, scope);
  if (problems.length > 0) throw refuse(problems);
}
