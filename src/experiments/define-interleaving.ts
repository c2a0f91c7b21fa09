import type { EntityType } from '../entities/define-entity.js';
import { AppDefinitionError } from '../errors/index.js';
import type { Model } from '../models/define-model.js';
import { isFileModel } from '../models/file-model.js';
import { defineExperiment, type Experiment, type ExperimentUnit, type Variant } from './define-experiment.js';
import type { InterleavingTeam } from './team-draft.js';

/** The variant of an interleaving experiment whose pages are interleaved. */
export const INTERLEAVED = 'interleaved';
/** The variant of an interleaving experiment served as without it. */
export const NOT_INTERLEAVED = 'off';

/**
 * How an interleaving experiment is declared: its two rankers are two models, or two variants of
 * an experiment of the pipeline (docs/reference/experiments.md, "Interleaving").
 */
export interface InterleavingOptions<E extends EntityType> {
  /** Stable id: names the experiment in events and in `rankd experiment report`. */
  id: string;
  /** Share of units (from 0 to 1) whose pages are interleaved; the others are served as without the experiment. */
  share: number;
  /** What the share is drawn by, as for any experiment. @defaultValue `request` */
  unit?: ExperimentUnit;
  /** Changes every unit's draw, for a fresh randomisation under the same id. @defaultValue `''` */
  salt?: string;
  description?: string;
  /** The ranker serving today. @defaultValue the pipeline's model */
  control?: Model<E>;
  /** The ranker being tried. Give it, or `variants`. */
  challenger?: Model<E>;
  /**
   * Instead of two models: two variants of an experiment of the pipeline. Each ranker is the
   * pipeline's model and business logic run as if the request had been assigned that variant.
   */
  variants?: { experiment: Experiment; control: string; challenger: string };
}

/**
 * One ranker of an interleaving experiment: a model (undefined: the pipeline's), or the pipeline
 * run under a variant of an experiment.
 */
export type InterleavingRanker<E extends EntityType = EntityType> =
  | { readonly kind: 'model'; readonly model: Model<E> | undefined }
  | { readonly kind: 'variant'; readonly experiment: Experiment; readonly variant: Variant };

/**
 * A declared interleaving experiment: an experiment whose variants are `off` and `interleaved`
 * (its share), so it is assigned, logged and overridden (`overrides.variants`) as any other, and
 * the rankers that an interleaved page merges.
 */
export interface InterleavingExperiment<E extends EntityType = EntityType> extends Experiment {
  readonly rankers: Readonly<Record<InterleavingTeam, InterleavingRanker<E>>>;
}

/**
 * Declares an interleaving experiment: on its share of traffic, a ranking pipeline that names it
 * (`defineRankingPipeline({ interleaving })`) serves one page merged from two rankers by team
 * draft, records which ranker placed each item shown (INTERLEAVING events), and `rankd experiment
 * report <id>` credits the clicks on each item to the ranker that placed it. A challenger that is
 * a file model with `whenMissing` interleaves only while its file is there: until then (and once
 * it is removed) requests are not assigned to the experiment at all, so they are served and cost
 * as without it; `rankd train --promote --via interleave` installs the file, `rankd promotion
 * decide` removes it. Checked when the app module loads. See docs/reference/experiments.md.
 *
 * @example
 * ```ts
 * import { defineExperiment, defineInterleaving } from 'rankd';
 * import { Ranker } from './pipelines/product-ranking/models.js';
 *
 * // Two models: the pipeline's own against the trained one, on 20% of requests.
 * export const ModelDuel = defineInterleaving({ id: 'model_duel', share: 0.2, challenger: Ranker });
 *
 * // Two variants of an experiment the pipeline's code reads (a boost weight, say).
 * export const BoostTest = defineExperiment({
 *   id: 'boost',
 *   variants: [
 *     { name: 'none', share: 1, params: { boost: 0 } },
 *     { name: 'strong', share: 0, params: { boost: 2 } },
 *   ],
 * });
 * export const BoostDuel = defineInterleaving({
 *   id: 'boost_duel',
 *   share: 0.5,
 *   variants: { experiment: BoostTest, control: 'none', challenger: 'strong' },
 * });
 * ```
 */
export function defineInterleaving<E extends EntityType>(
  options: InterleavingOptions<E>,
): InterleavingExperiment<E> {
  const where = `Interleaving ${JSON.stringify(options.id)}`;
  if (!(Number.isFinite(options.share) && options.share >= 0 && options.share <= 1))
    throw new AppDefinitionError(`${where}: share is ${options.share}; it is from 0 to 1`);
  const byModels = options.challenger !== undefined || options.control !== undefined;
  if (byModels === (options.variants !== undefined))
    throw new AppDefinitionError(`${where}: give a challenger model, or variants, not both`);
  let rankers: Record<InterleavingTeam, InterleavingRanker<E>>;
  if (options.variants === undefined) {
    if (options.challenger === undefined) throw new AppDefinitionError(`${where}: give the challenger model`);
    rankers = {
      control: { kind: 'model', model: options.control },
      challenger: { kind: 'model', model: options.challenger },
    };
  } else {
    const { experiment, control, challenger } = options.variants;
    const variant = (name: string) => {
      const found = experiment.variants.find((v) => v.name === name);
      if (found === undefined)
        throw new AppDefinitionError(`${where}: ${name} is not a variant of experiment ${experiment.id}`);
      return found;
    };
    if (control === challenger)
      throw new AppDefinitionError(`${where}: control and challenger are both ${control}`);
    rankers = {
      control: { kind: 'variant', experiment, variant: variant(control) },
      challenger: { kind: 'variant', experiment, variant: variant(challenger) },
    };
  }
  const experiment = defineExperiment({
    id: options.id,
    unit: options.unit ?? 'request',
    variants: [
      { name: NOT_INTERLEAVED, share: 1 - options.share },
      { name: INTERLEAVED, share: options.share },
    ],
    ...(options.salt === undefined ? {} : { salt: options.salt }),
    ...(options.description === undefined ? {} : { description: options.description }),
  });
  const challenger = rankers.challenger.kind === 'model' ? rankers.challenger.model : undefined;
  // A challenger file that is not there yet (no promotion running) leaves requests as they were.
  const waiting = isFileModel(challenger) && challenger.whenMissing !== undefined ? challenger : undefined;
  return {
    ...experiment,
    rankers,
    ...(waiting === undefined ? {} : { active: () => !waiting.usingFallback }),
  };
}
