import type { EntityOf, EntityType } from '../entities/define-entity.js';
import { AppDefinitionError } from '../errors/index.js';
import { Feature } from '../features/feature-kind.js';
import type { RankdRequest } from '../request/component.js';
import {
  allComponents,
  type Component,
  type ComponentContext,
  disposeComponents,
  initializeComponents,
  type ProvidedFeatures,
} from '../request/component.js';
import { splitName } from '../request/feature-table.js';
import { currentContext, type RequestContext } from '../request/request-context.js';
import type { Model, Scores } from './define-model.js';
import { explainWith } from './explain/explain-model.js';
import type { Explanation, StageExplanation } from './explain/explanation.js';
import { explainingSnapshotOf, type ModelSnapshot, type SnapshotSource, snapshotOf } from './snapshot.js';

/** The one feature a chain records per model: its score; no score (null, NaN) reads as 0, as in the pipeline. */
const SCORE_FEATURES = { score: Feature.float({ default: 0, description: 'The model’s score' }) };

/** How {@link chainModels} is configured. */
export interface ChainOptions<E extends EntityType = EntityType> {
  /** Shown in MODEL events. */
  name: string;
  /** Run in this order; each may read the scores of those before it as `<model name>:score`. */
  models: ReadonlyArray<Model<E>>;
  /** Only types `score`'s entities. */
  entity?: E;
}

/** A model made of models run in order; its score is the last one's. */
export interface ModelChain<E extends EntityType = EntityType> extends Model<E>, SnapshotSource {
  readonly kind: 'model-chain';
  readonly models: ReadonlyArray<Model<E>>;
  readonly features: readonly string[];
  readonly provides: readonly ProvidedFeatures[];
  /** The members' versions, `name@version` joined with ` > `. */
  readonly version: string;
  /** Explains each model in turn (see `Explanation.stages`); the chain's explanation is the last model's. */
  explain(entities: ReadonlyArray<EntityOf<E>>, request: RankdRequest): Promise<readonly Explanation[]>;
  /** Initializes every member once, in order. */
  initialize(context?: ComponentContext): Promise<void>;
  dispose(): Promise<void>;
}

/** The groups a component and its parts record as they run: a nested chain's members count. */
function providedNames(component: Component): Set<string> {
  const names = new Set<string>();
  for (const part of allComponents([component]))
    for (const group of part.provides ?? []) names.add(group.name);
  return names;
}

/** Throws when a member reads the score of a model that has not run before it. */
function checkOrder(chain: string, models: readonly Model[]): void {
  const members = new Map<string, number>();
  models.forEach((model, i) => {
    if (model.name.includes(':'))
      throw new AppDefinitionError(
        `chain ${chain}: model name ${JSON.stringify(model.name)} must not contain ':'`,
      );
    if (members.has(model.name))
      throw new AppDefinitionError(`chain ${chain}: two models are named ${JSON.stringify(model.name)}`);
    members.set(model.name, i);
    for (const group of providedNames(model)) members.set(group, i);
  });
  models.forEach((model, i) => {
    for (const name of model.features ?? []) {
      let group: string;
      let feature: string;
      try {
        [group, feature] = splitName(name);
      } catch (error) {
        // At definition: the app's mistake, named with its chain and model, not a lookup in a request.
        throw new AppDefinitionError(`chain ${chain}: ${model.name}: ${(error as Error).message}`, error);
      }
      const at = members.get(group);
      if (at === undefined) continue;
      if (at >= i) {
        throw new AppDefinitionError(
          `chain ${chain}: ${model.name} reads ${name}, but ${group} runs ${at === i ? 'as' : 'after'} ${model.name}: ` +
            'a model may read the scores of the models before it only',
        );
      }
      if (feature !== 'score')
        throw new AppDefinitionError(
          `chain ${chain}: ${model.name} reads ${name}; a chain records only ${group}:score`,
        );
    }
  });
}

/** Records a member's scores as the feature `<group>:score` of each entity, for the models after it. */
function recordScores(
  context: RequestContext,
  type: string | undefined,
  group: string,
  entities: readonly object[],
  scores: Scores,
): void {
  if (type === undefined) return;
  context.features.declare(group, SCORE_FEATURES, [type]);
  entities.forEach((entity, row) => {
    const score = scores[row];
    context.features.putComputed(group, context.identify(entity).id, undefined, {
      score: typeof score === 'number' && Number.isFinite(score) ? score : null,
    });
  });
}

/** A chain's explanation of one entity: the last model's, with every model's as `stages`. */
function chainExplanation(stages: readonly StageExplanation[]): Explanation {
  const { model: _, ...last } = stages.at(-1) as StageExplanation;
  return { ...last, stages };
}

function versionOf(
  parts: ReadonlyArray<{ readonly version?: string | undefined }>,
  models: readonly Model[],
) {
  return parts.map((part, i) => `${models[i]?.name}@${part.version ?? '-'}`).join(' > ');
}

/**
 * Chains models: each runs on the same entities in turn, and its score becomes the real-time
 * feature `<model name>:score`, which the models after it (and business-logic steps) may read. The
 * chain's score is the last model's. Every member's file version is taken when the chain starts
 * scoring, so a hot reload during a request does not mix versions.
 *
 * @example
 * ```ts
 * import { chainModels, gbdtModel, linearModel } from 'rankd';
 *
 * const Ctr = linearModel({ name: 'ctr', file: 'models/ctr.json', features: ['product_stats:ctr_7d'] });
 * // The ranker reads the first model's score as the feature `ctr:score`.
 * const Ranker = gbdtModel({ name: 'ranker', file: 'models/ranker.json', features: ['ctr:score'] });
 * export const Model = chainModels({ name: 'ranking', models: [Ctr, Ranker] });
 * ```
 */
export function chainModels<E extends EntityType = EntityType>(options: ChainOptions<E>): ModelChain<E> {
  const models = [...options.models];
  if (models.length === 0) throw new AppDefinitionError(`chain ${options.name}: give at least one model`);
  checkOrder(options.name, models);
  const features = [...new Set(models.flatMap((m) => m.features ?? []))];
  const provides = models.map((m) => ({ name: m.name, features: SCORE_FEATURES }));

  const run = async (
    snapshots: readonly ModelSnapshot[],
    entities: readonly object[],
    request: RankdRequest,
  ): Promise<Scores> => {
    const context = currentContext();
    const type = entities[0] === undefined ? undefined : context.identify(entities[0]).type;
    let scores: Scores = [];
    for (const [i, snapshot] of snapshots.entries()) {
      scores = await snapshot.score(entities, request);
      // Recorded for the last model too: business logic may read it under the model's name.
      recordScores(context, type, models[i]?.name as string, entities, scores);
    }
    return scores;
  };
  // Each one's scores recorded as `run` records them: the models after it read the inputs of scoring.
  const explainRun = async (
    snapshots: readonly ModelSnapshot[],
    entities: readonly object[],
    request: RankdRequest,
  ): Promise<Explanation[]> => {
    const context = currentContext();
    const type = entities[0] === undefined ? undefined : context.identify(entities[0]).type;
    const stages = entities.map((): StageExplanation[] => []);
    for (const [i, snapshot] of snapshots.entries()) {
      const model = models[i] as Model;
      const rows = await explainWith(snapshot, model.features ?? [], entities, request);
      recordScores(
        context,
        type,
        model.name,
        entities,
        rows.map((row) => row.score),
      );
      for (const [k, row] of rows.entries()) stages[k]?.push({ model: model.name, ...row });
    }
    return stages.map(chainExplanation);
  };
  const membersSnapshot = (snapshots: readonly ModelSnapshot[]): ModelSnapshot => ({
    version: versionOf(snapshots, models),
    score: (entities, request) => run(snapshots, entities, request),
    done: () => {
      for (const member of snapshots) member.done();
    },
  });
  // Every member is taken now, before the first one runs: one version each for the whole request.
  const snapshot = (): ModelSnapshot => membersSnapshot(models.map(snapshotOf));
  // The same, with members' snapshots that can explain: for explanations only, so scoring's
  // snapshots carry nothing for them.
  const explainingSnapshot = (): ModelSnapshot => {
    const snapshots = models.map(explainingSnapshotOf);
    return {
      ...membersSnapshot(snapshots),
      explain: (entities, request) => explainRun(snapshots, entities, request),
    };
  };

  return {
    kind: 'model-chain',
    name: options.name,
    models,
    features,
    provides,
    parts: models,
    get version() {
      return versionOf(models, models);
    },
    snapshot,
    explainingSnapshot,
    initialize: (context?: ComponentContext) => initializeComponents(models, context),
    async dispose() {
      const failures = await disposeComponents(models);
      if (failures[0]) throw failures[0];
    },
    async score(entities: ReadonlyArray<EntityOf<E>>, request: RankdRequest) {
      const taken = snapshot();
      try {
        return await taken.score(entities, request);
      } finally {
        taken.done();
      }
    },
    async explain(entities: ReadonlyArray<EntityOf<E>>, request: RankdRequest) {
      const taken = explainingSnapshot();
      try {
        return await explainWith(taken, features, entities, request);
      } finally {
        taken.done();
      }
    },
  };
}
