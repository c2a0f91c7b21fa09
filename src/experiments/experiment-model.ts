import type { EntityType } from '../entities/define-entity.js';
import { AppDefinitionError } from '../errors/index.js';
import type { Model } from '../models/define-model.js';
import type { Component } from '../request/component.js';
import type { Experiment } from './define-experiment.js';
import { getExperimentVariant } from './get-variant.js';

/** Where a component names the experiments it reads, so `defineApp` puts them in scope by itself. */
export const USES_EXPERIMENTS = Symbol.for('rankd.usesExperiments');
/** Where a component lists the components it delegates to, so `defineApp` initialises each once. */
export const INNER_COMPONENTS = Symbol.for('rankd.innerComponents');
const SELECT = Symbol.for('rankd.selectModel');

/** How a model chosen by an experiment is declared. */
export interface ExperimentModelOptions<E extends EntityType> {
  experiment: Experiment;
  /** One model per variant name. */
  models: Readonly<Record<string, Model<E>>>;
  /** @defaultValue `experiment:<id>` */
  name?: string;
}

/**
 * A model that delegates to the model of the request's variant. Every variant must have a model;
 * all of them are initialised at start and their features fetched (the union), so switching costs
 * nothing at request time. MODEL events name the model that actually scored.
 *
 * @example
 * ```ts
 * import { defineExperiment, experimentModel, gbdtModel } from 'rankd';
 * import { RankingModel } from './pipelines/product-ranking/models.js';
 * import { Product } from './pipelines/product-ranking/schemas.js';
 *
 * export const RankerTest = defineExperiment({
 *   id: 'ranker_v2',
 *   variants: [{ name: 'control', share: 0.5 }, { name: 'treatment', share: 0.5 }],
 * });
 * // Each request is scored by its variant's model; list RankerTest in the app's or pipeline's experiments.
 * export const Model = experimentModel({
 *   experiment: RankerTest,
 *   models: {
 *     control: RankingModel,
 *     treatment: gbdtModel({ name: 'ranker', file: 'models/ranker.json', entity: Product, features: ['product_stats:ctr_7d'] }),
 *   },
 * });
 * ```
 */
export function experimentModel<E extends EntityType>(options: ExperimentModelOptions<E>): Model<E> {
  const { experiment, models } = options;
  const where = `experimentModel(${experiment.id})`;
  for (const variant of experiment.variants)
    if (models[variant.name] === undefined)
      throw new AppDefinitionError(`${where}: no model for variant ${variant.name}`);
  for (const name of Object.keys(models))
    if (!experiment.variants.some((v) => v.name === name))
      throw new AppDefinitionError(`${where}: ${name} is not a variant of the experiment`);
  const all = Object.values(models);
  const select = (): Model<E> => models[getExperimentVariant(experiment).name] as Model<E>;
  return {
    name: options.name ?? `experiment:${experiment.id}`,
    features: [...new Set(all.flatMap((m) => m.features ?? []))],
    score: (entities, request) => select().score(entities, request),
    [SELECT]: select,
    [USES_EXPERIMENTS]: [experiment],
    // Initialised by the app with every other component, so a model used twice starts once.
    [INNER_COMPONENTS]: all,
  } as Model<E>;
}

/** The model that scores the current request: the variant's model for an {@link experimentModel}, else `model`. */
export function selectedModel<M extends Model>(model: M): M {
  const select = (model as { [SELECT]?: () => M })[SELECT];
  return select ? select() : model;
}

/** The experiments a component declares it reads (see {@link USES_EXPERIMENTS}). */
export function experimentsOf(component: Component): readonly Experiment[] {
  return (component as { [USES_EXPERIMENTS]?: readonly Experiment[] })[USES_EXPERIMENTS] ?? [];
}

/** `components` and every component they delegate to (see {@link INNER_COMPONENTS}), depth first. */
export function withInnerComponents(components: Iterable<Component>): Component[] {
  const out: Component[] = [];
  const visit = (component: Component) => {
    out.push(component);
    for (const inner of (component as { [INNER_COMPONENTS]?: readonly Component[] })[INNER_COMPONENTS] ?? [])
      visit(inner);
  };
  for (const component of components) visit(component);
  return out;
}
