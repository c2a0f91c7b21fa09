import { AppDefinitionError } from '../errors/index.js';
import type { FeatureView } from '../features/define-feature-view.js';
import { featureSpecOf } from '../features/feature-kind.js';
import { allComponents, type Component, type ProvidedFeatures } from '../request/component.js';
import type { RealtimeFeatures } from '../request/define-realtime-features.js';
import { splitName } from '../request/feature-table.js';

/** What a pipeline needs before its code runs: stored views to read, real-time groups to compute. */
export interface FeaturePlan {
  readonly storedViews: readonly FeatureView[];
  /**
   * The pipeline's first real-time groups, in declared order, as long as they read no stored
   * feature (their `requires` name none, nor a group after them): they need only the hydrated
   * entities, so they run while the stored-feature read is still on its way (DR-016).
   */
  readonly realtimeBeforeStored: readonly RealtimeFeatures[];
  /** The rest of the real-time groups, in declared order: they run once the stored rows are in. */
  readonly realtimeAfterStored: readonly RealtimeFeatures[];
}

/**
 * Resolves every feature name the components and real-time groups declare against the app's
 * feature views and the pipeline's real-time groups. An unknown group or feature stops the start
 * with a message naming the component, so a typo never becomes a silent null.
 *
 * Groups that components provide themselves (a model chain's `<model>:score`) resolve too, but
 * only for components: real-time features run before any component, so they cannot read them.
 * When the values are there is the providing component's business (a chain checks that a model
 * reads only the scores of models before it).
 */
export function planFeatures(
  pipeline: string,
  components: readonly Component[],
  realtime: readonly RealtimeFeatures[],
  views: readonly FeatureView[],
): FeaturePlan {
  const viewsByName = new Map(views.map((v) => [v.name, v]));
  const realtimeByName = new Map<string, RealtimeFeatures>();
  for (const group of realtime) {
    if (viewsByName.has(group.name) || realtimeByName.has(group.name)) {
      throw new AppDefinitionError(`${pipeline}: the name ${group.name} is used by two feature groups`);
    }
    realtimeByName.set(group.name, group);
  }
  const providedByName = new Map<string, ProvidedFeatures>();
  for (const component of allComponents(components)) {
    for (const group of component.provides ?? []) {
      if (viewsByName.has(group.name) || realtimeByName.has(group.name) || providedByName.has(group.name)) {
        throw new AppDefinitionError(
          `${pipeline}: ${component.name} computes features named ${group.name}:..., but another feature group has that name`,
        );
      }
      providedByName.set(group.name, group);
    }
  }
  const stored = new Set<FeatureView>();
  const wanted: Array<[owner: string, name: string, mayReadProvided: boolean]> = [];
  for (const component of components)
    for (const name of component.features ?? []) wanted.push([component.name, name, true]);
  for (const group of realtime)
    for (const name of group.requires) wanted.push([`real-time features ${group.name}`, name, false]);
  for (const [owner, name, mayReadProvided] of wanted) {
    let groupName: string;
    let feature: string;
    try {
      [groupName, feature] = splitName(name);
    } catch (error) {
      throw new AppDefinitionError(`${pipeline}: ${owner}: ${(error as Error).message}`, error);
    }
    const view = viewsByName.get(groupName);
    const group = realtimeByName.get(groupName);
    const provided = mayReadProvided ? providedByName.get(groupName) : undefined;
    const specs = view?.features ?? group?.features ?? provided?.features;
    if (specs === undefined) {
      if (providedByName.has(groupName)) {
        throw new AppDefinitionError(
          `${pipeline}: ${owner} needs ${name}, but ${groupName} is computed by a model while the pipeline runs, after real-time features`,
        );
      }
      throw new AppDefinitionError(
        `${pipeline}: ${owner} needs ${name}, but no feature view or real-time feature group is named ${groupName} ` +
          `(views: ${[...viewsByName.keys()].join(', ') || 'none'}; real-time: ${[...realtimeByName.keys()].join(', ') || 'none'})`,
      );
    }
    if (featureSpecOf(specs, feature) === undefined) {
      throw new AppDefinitionError(
        `${pipeline}: ${owner} needs ${name}, but ${groupName} has no feature ${feature} (it has ${Object.keys(specs).join(', ')})`,
      );
    }
    if (view) stored.add(view);
  }
  const split = independentPrefix(realtime);
  return {
    storedViews: [...stored],
    realtimeBeforeStored: realtime.slice(0, split),
    realtimeAfterStored: realtime.slice(split),
  };
}

/**
 * The length of the longest run of groups, from the first, that need nothing but entities: each
 * requires only groups before it in that run. Stopping at the first group that needs more keeps
 * the declared order, which a group may rely on to read an earlier one.
 */
function independentPrefix(realtime: readonly RealtimeFeatures[]): number {
  const before = new Set<string>();
  for (const group of realtime) {
    if (!group.requires.every((name) => before.has(splitName(name)[0]))) break;
    before.add(group.name);
  }
  return before.size;
}
