import type { AssignedVariant, RequestContext } from '../request/request-context.js';
import { bucketOf, type Experiment, type Variant } from './define-experiment.js';

type MaybePromise<T> = T | Promise<T>;

/** What an external provider is told about the unit being assigned. */
export interface AssignmentAttributes {
  /** `user` or `request`: what the unit id is. The experiment asked for `user` but the request had none: `request`. */
  readonly unit_type: 'user' | 'request';
  readonly request_id: string;
  /** The pipeline serving the request. */
  readonly pipeline: string;
  /** The request's hydrated user entity, when it has one (for targeting by its fields). */
  readonly user?: Record<string, unknown>;
}

/**
 * Replaces rankd's hash assignment, e.g. with a feature-flag service. It returns the name of one
 * of the experiment's variants; anything else (an unknown name, null, an error) falls back to
 * the first variant, logged with `has_error: true`.
 *
 * @example
 * ```ts
 * import { defineApp, type ExperimentProvider } from 'rankd';
 *
 * // Assignments from a service of your own, kept in a local cache: called on every request.
 * const assignments = new Map<string, string>([['ranker_v2:u1', 'treatment']]);
 * const provider: ExperimentProvider = {
 *   name: 'my-service',
 *   assign: (experimentId, unitId) => assignments.get(`${experimentId}:${unitId}`) ?? null,
 * };
 * export default defineApp({ name: 'myshop', experimentProvider: provider });
 * ```
 */
export interface ExperimentProvider {
  /** Shown in the EXPERIMENTATION event's metadata. */
  readonly name: string;
  /** The name of the variant `unitId` gets; null, undefined, an error or an unknown name give the first variant. */
  assign(
    experimentId: string,
    unitId: string,
    attributes: AssignmentAttributes,
  ): MaybePromise<string | null | undefined>;
}

/** The experiments one pipeline's requests are assigned to, and who assigns them. */
export interface ExperimentScope {
  readonly experiments: ReadonlyMap<string, Experiment>;
  /** @defaultValue the built-in hash assignment */
  readonly provider?: ExperimentProvider;
}

interface Outcome {
  variant: Variant;
  metadata: Record<string, unknown>;
  error?: string;
}

function firstUser(context: RequestContext): [string, Record<string, unknown>] | undefined {
  for (const entry of context.entitiesByType.get('user') ?? []) return entry;
  return undefined;
}

async function fromProvider(
  provider: ExperimentProvider,
  experiment: Experiment,
  unitId: string,
  attributes: AssignmentAttributes,
): Promise<Outcome> {
  const fallback = experiment.variants[0] as Variant;
  const metadata = { provider: provider.name };
  try {
    const name = await provider.assign(experiment.id, unitId, attributes);
    const variant = experiment.variants.find((v) => v.name === name);
    if (variant) return { variant, metadata };
    return {
      variant: fallback,
      metadata,
      error: `the provider answered ${JSON.stringify(name)}, not a variant`,
    };
  } catch (error) {
    return { variant: fallback, metadata, error: error instanceof Error ? error.message : String(error) };
  }
}

/**
 * Assigns the request to every experiment in scope (after hydration, so the user entity is
 * known) and logs one EXPERIMENTATION event per experiment. Done up front, not on first read, so
 * that `getExperimentVariant` is synchronous and an asynchronous provider still works. An
 * experiment that is not `active` now is left out: nothing assigned, nothing logged. `forced`
 * (a request's `overrides.variants`, names already checked) assigns those experiments its variant,
 * logged with provider `override`.
 */
export async function assignExperiments(
  context: RequestContext,
  scope: ExperimentScope | undefined,
  forced?: Readonly<Record<string, string>>,
): Promise<void> {
  if (scope === undefined || scope.experiments.size === 0) return;
  const experiments: Experiment[] = [];
  for (const experiment of scope.experiments.values())
    if (experiment.active?.() !== false) experiments.push(experiment);
  if (experiments.length === 0) return;
  const requestId = String(context.request.request_id ?? '');
  const user = firstUser(context);
  const timestamp = new Date().toISOString();
  const outcomes = await Promise.all(
    experiments.map(async (experiment) => {
      const byUser = experiment.unit === 'user' && user !== undefined;
      const unitId = byUser ? user[0] : requestId;
      const unitType = byUser ? 'user' : 'request';
      let outcome: Outcome;
      // Own keys only: an experiment id such as `constructor` must not find Object's.
      const chosen =
        forced !== undefined && Object.hasOwn(forced, experiment.id) ? forced[experiment.id] : undefined;
      const override = chosen === undefined ? undefined : experiment.variants.find((v) => v.name === chosen);
      if (override !== undefined) {
        outcome = { variant: override, metadata: { provider: 'override' } };
      } else if (scope.provider) {
        const attributes: AssignmentAttributes = {
          unit_type: unitType,
          request_id: requestId,
          pipeline: context.pipeline,
          ...(user ? { user: user[1] } : {}),
        };
        outcome = await fromProvider(scope.provider, experiment, unitId, attributes);
      } else {
        const bucket = bucketOf(experiment.id, experiment.salt, unitId);
        outcome = { variant: experiment.variantAt(bucket), metadata: { provider: 'built-in', bucket } };
      }
      return { experiment, unitId, unitType, outcome };
    }),
  );
  for (const { experiment, unitId, unitType, outcome } of outcomes) {
    const assigned: AssignedVariant = { name: outcome.variant.name, params: outcome.variant.params };
    context.variants.set(experiment.id, assigned);
    context.events.add('EXPERIMENTATION', {
      experiment_id: experiment.id,
      entity_id: unitId,
      result: outcome.variant.name,
      timestamp,
      metadata: {
        unit: experiment.unit,
        unit_type: unitType,
        ...outcome.metadata,
        ...(outcome.error === undefined ? {} : { error: outcome.error }),
      },
      has_error: outcome.error !== undefined,
    });
  }
}
