import type { EntityOf, EntityType } from '../entities/define-entity.js';
import { AppDefinitionError } from '../errors/index.js';
import type { FeatureSpec, FeatureValue } from '../features/feature-kind.js';
import type { RankdRequest } from './component.js';

/**
 * Names of real-time feature groups: any case, so that the predecessor's class names
 * (`RealtimeProductFeature`) carry over. They are never part of a Redis key (the values live in
 * the request's memory), so the lower-case rule of stored feature views does not apply; they are
 * the `group` of `group:feature` and a column name in exports, hence no colon or space.
 */
const REALTIME_GROUP_PATTERN = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;

/** What a real-time feature computation returns: values by feature name; absent or null means missing. */
export type FeatureValues<F extends Record<string, FeatureSpec>> = { [K in keyof F]?: FeatureValue | null };

type MaybePromise<T> = T | Promise<T>;

/** Options shared by the three kinds of real-time features. */
interface CommonOptions<F extends Record<string, FeatureSpec>> {
  /** The group's name: the prefix of its features' names (`name:feature`). */
  name: string;
  /** The features it computes, with their types and defaults. */
  features: F;
  /** Stored features (`view:feature`) it reads with getFeature; fetched before it runs. */
  requires?: readonly string[];
}

/** Per request: computed once from the request. */
interface RequestFeaturesOptions<F extends Record<string, FeatureSpec>> extends CommonOptions<F> {
  compute(request: RankdRequest): MaybePromise<FeatureValues<F>>;
}

/** Per entity: computed for every entity of `entity`'s type in the request. */
interface EntityFeaturesOptions<E extends EntityType, F extends Record<string, FeatureSpec>>
  extends CommonOptions<F> {
  entity: E;
  compute(entity: EntityOf<E>, request: RankdRequest): MaybePromise<FeatureValues<F>>;
}

/** Per pair: computed for every (entity, other) pair of the two types in the request, e.g. product × query. */
interface PairFeaturesOptions<
  E extends EntityType,
  W extends EntityType,
  F extends Record<string, FeatureSpec>,
> extends CommonOptions<F> {
  entity: E;
  with: W;
  compute(entity: EntityOf<E>, other: EntityOf<W>, request: RankdRequest): MaybePromise<FeatureValues<F>>;
}

/** A declared group of real-time features, computed in memory for each request. */
export interface RealtimeFeatures {
  readonly name: string;
  readonly features: Readonly<Record<string, FeatureSpec>>;
  readonly requires: readonly string[];
  /** The entity types it is computed for: none (per request), one, or a pair. */
  readonly entityTypes: readonly EntityType[];
  /** Computes the group's values: from the request, an entity, or a pair of entities (see `entityTypes`). */
  // biome-ignore lint/suspicious/noExplicitAny: the arity depends on entityTypes; the typed options checked the app's function
  readonly compute: (...args: any[]) => MaybePromise<Record<string, FeatureValue | null | undefined>>;
  readonly kind: 'realtime-features';
}

/**
 * Declares real-time features: computed at request time, per request, per entity or per pair of
 * entities, and read like stored ones with `getFeature(identifier, "name:feature")`.
 *
 * @example
 * ```ts
 * import { defineRealtimeFeatures, Feature, getFeature } from 'rankd';
 * import { Product } from './pipelines/product-ranking/schemas.js';
 *
 * // Per product (`with: QueryEntity` would make it per pair product × query).
 * export const ProductFacts = defineRealtimeFeatures({
 *   name: 'realtime_product',
 *   entity: Product,
 *   features: { popular: Feature.boolean({ default: false }) },
 *   requires: ['product_stats:popularity'],
 *   compute: (product) => ({ popular: Number(getFeature(product, 'product_stats:popularity')) > 0.8 }),
 * });
 * ```
 */
export function defineRealtimeFeatures<
  E extends EntityType,
  W extends EntityType,
  F extends Record<string, FeatureSpec>,
>(options: PairFeaturesOptions<E, W, F>): RealtimeFeatures;
export function defineRealtimeFeatures<E extends EntityType, F extends Record<string, FeatureSpec>>(
  options: EntityFeaturesOptions<E, F>,
): RealtimeFeatures;
export function defineRealtimeFeatures<F extends Record<string, FeatureSpec>>(
  options: RequestFeaturesOptions<F>,
): RealtimeFeatures;
export function defineRealtimeFeatures(
  options: CommonOptions<Record<string, FeatureSpec>> & {
    entity?: EntityType;
    with?: EntityType;
    compute: RealtimeFeatures['compute'];
  },
): RealtimeFeatures {
  if (!REALTIME_GROUP_PATTERN.test(options.name)) {
    throw new AppDefinitionError(
      `Real-time feature group name ${JSON.stringify(options.name)}: use a letter, then letters, digits ` +
        'or _ (at most 64), e.g. realtime_product or RealtimeProductFeature; the name is the part of ' +
        '"group:feature" before the colon, so it cannot hold a colon, and it is a column name in exported training rows',
    );
  }
  if (options.with !== undefined && options.entity === undefined) {
    throw new AppDefinitionError(`Real-time features ${options.name}: \`with\` needs \`entity\``);
  }
  const entityTypes = [options.entity, options.with].filter((t): t is EntityType => t !== undefined);
  return {
    name: options.name,
    features: options.features,
    requires: options.requires ?? [],
    entityTypes,
    compute: options.compute,
    kind: 'realtime-features',
  };
}
