import { ExperimentLookupError } from '../errors/index.js';
import { type AssignedVariant, currentContext } from '../request/request-context.js';
import type { Experiment, VariantParams } from './define-experiment.js';

/** Where it was declared before the catalogue held it: imports of it from here keep working. */
export { ExperimentLookupError };

/**
 * The variant the current request was assigned in an experiment, `{ name, params }`. Works in any
 * pipeline code (model, business logic, real-time features after hydration). Give the experiment
 * object to get its params typed; its id works too.
 *
 * @example
 * ```ts
 * import { defineExperiment, getExperimentVariant } from 'rankd';
 *
 * export const BoostTest = defineExperiment({
 *   id: 'boost',
 *   variants: [
 *     { name: 'control', share: 0.5, params: { boost: 0 } },
 *     { name: 'treatment', share: 0.5, params: { boost: 2 } },
 *   ],
 * });
 * // In pipeline code: `params` typed as the experiment's.
 * const boostOf = () => getExperimentVariant(BoostTest).params.boost;
 * ```
 */
export function getExperimentVariant<P extends VariantParams = VariantParams>(
  experiment: Experiment<P> | string,
): AssignedVariant<P> {
  const id = typeof experiment === 'string' ? experiment : experiment.id;
  const context = currentContext();
  const variant = context.variants.get(id);
  if (variant === undefined) {
    throw new ExperimentLookupError(
      `Experiment ${JSON.stringify(id)} is not assigned in pipeline ${context.pipeline}: list it in ` +
        "defineApp({ experiments }) or the pipeline's `experiments`",
    );
  }
  return variant as AssignedVariant<P>;
}
