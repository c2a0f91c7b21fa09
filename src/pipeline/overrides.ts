import type { BusinessLogicStep } from '../business-logic/define-business-logic.js';
import { ValidationError } from '../errors/index.js';
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
) {
  const names = [...allowed];
  const list = names.length === 0 ? 'there are none' : `allowed: ${names.join(', ')}`;
  return ValidationError.at(
    ['body', 'overrides', ...field],
    `${JSON.stringify(name)} is not ${what} (${list})`,
    'value_error.unknown_name',
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

/** Throws a 422 naming the allowed values when `overrides` names a step or model the pipeline lacks. */
export function checkPipelineOverrides(
  overrides: Overrides | undefined,
  steps: readonly BusinessLogicStep[],
  models: ReadonlyMap<string, Model>,
): void {
  if (overrides === undefined) return;
  const stepNames = steps.map((step) => step.name);
  for (const [i, name] of (overrides.skip_business_logic ?? []).entries())
    if (!stepNames.includes(name))
      throw unknownName(
        ['skip_business_logic', i],
        'a business-logic step of this pipeline',
        name,
        stepNames,
      );
  if (overrides.model !== undefined && !models.has(overrides.model))
    throw unknownName(['model'], 'a model of this pipeline', overrides.model, models.keys());
}

/** Throws a 422 naming the allowed values when `overrides.variants` names an unknown experiment or variant. */
export function checkVariantOverrides(
  overrides: Overrides | undefined,
  scope: ExperimentScope | undefined,
): void {
  const forced = overrides?.variants;
  if (forced === undefined) return;
  for (const [id, variant] of Object.entries(forced)) {
    const experiment = scope?.experiments.get(id);
    if (experiment === undefined)
      throw unknownName(
        ['variants', id],
        'an experiment of this pipeline',
        id,
        scope?.experiments.keys() ?? [],
      );
    const names = experiment.variants.map((v) => v.name);
    if (!names.includes(variant)) throw unknownName(['variants', id], `a variant of ${id}`, variant, names);
  }
}
