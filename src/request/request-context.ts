import { AsyncLocalStorage } from 'node:async_hooks';
import type { Identifier } from '../entities/identifier.js';
import { AppMisuseError } from '../errors/index.js';
import { EventRecorder } from '../events/recorder.js';
import type { FeatureValue } from '../features/feature-kind.js';
import type { RankdRequest } from './component.js';
import { Degradation } from './degradation.js';
import { FeatureLookupError, FeatureTable } from './feature-table.js';
import type { ReadCacheUse } from './read-cache-use.js';
import type { PipelineStage, StageObserver } from './stage-timing.js';

/**
 * A variant of an experiment as the request was assigned it (see docs/reference/experiments.md).
 *
 * @example
 * ```ts
 * import { type AssignedVariant, defineExperiment, defineModel, getExperimentVariant } from 'rankd';
 *
 * const Weight = defineExperiment({
 *   id: 'weight',
 *   variants: [{ name: 'control', share: 1, params: { weight: 1 } }],
 * });
 * export const Weighted = defineModel({
 *   name: 'Weighted',
 *   score(entities) {
 *     const variant: AssignedVariant<{ weight: number }> = getExperimentVariant(Weight);
 *     return entities.map(() => variant.params.weight);
 *   },
 * });
 * ```
 */
export interface AssignedVariant<P = Record<string, unknown>> {
  readonly name: string;
  readonly params: P;
}

/** What a request context is made with besides its request; everything has a default. */
export interface RequestContextOptions {
  /** Records the request's events. @defaultValue events for the response only, when `include_events` is true */
  readonly events?: EventRecorder;
  /** Whether response bodies may name Redis nodes (`EXPOSE_REDIS_ADDRESS`). @defaultValue `false` */
  readonly exposeRedisAddress?: boolean;
}

/**
 * Something that names an entity of the request: the entity object itself, an identifier, or `"type::id"`.
 *
 * @example
 * ```ts
 * import { defineModel, type EntityRef, getFeature } from 'rankd';
 *
 * // An entity object of the request, an identifier, or 'type::id'.
 * const user: EntityRef = 'user::u1';
 * export const ForU1 = defineModel({
 *   name: 'ForU1',
 *   features: ['user_profile:price_sensitivity'],
 *   score: (entities) => entities.map(() => Number(getFeature(user, 'user_profile:price_sensitivity'))),
 * });
 * ```
 */
export type EntityRef = object | Identifier | string;

/**
 * Everything one request holds: its hydrated entities, feature table and events. Created per
 * request and reachable from any pipeline code through {@link currentContext} (AsyncLocalStorage);
 * nothing of it outlives the request or is visible to another.
 *
 * @example
 * ```ts
 * import { currentContext, defineModel, type RequestContext } from 'rankd';
 *
 * export const Traced = defineModel({
 *   name: 'Traced',
 *   score(entities) {
 *     const context: RequestContext = currentContext();
 *     context.events.add('SCORED', { count: entities.length, pipeline: context.pipeline });
 *     return entities.map(() => 1);
 *   },
 * });
 * ```
 */
export class RequestContext {
  readonly request: RankdRequest;
  readonly pipeline: string;
  readonly features = new FeatureTable();
  /** Hydrated entity objects by type, then id. */
  readonly entitiesByType = new Map<string, Map<string, Record<string, unknown>>>();
  /**
   * Entities of {@link entitiesByType} whose id no Redis key can stand for (a stored reference
   * holding an unpaired surrogate): hydrated as not found, and no feature row is read for them.
   * Undefined in nearly every request, so that the others carry no list.
   */
  unreadable: Identifier[] | undefined;
  /** The request's events: `context.events.add(type, data)`, or `logEvent` from pipeline code. */
  readonly events: EventRecorder;
  /** The experiment variants assigned to this request, by experiment id (set before the pipeline runs). */
  readonly variants = new Map<string, AssignedVariant>();
  /** Told when each stage of the request ends (metrics, spans); set by the server, if it observes. */
  stageObserver: StageObserver | undefined;
  /**
   * The time each stage took (ms), by stage, when the request asked for an explanation; undefined
   * otherwise, so that other requests carry nothing for it.
   */
  stageTimes: Record<string, number> | undefined;
  /**
   * What the request read from the read cache, when it asked for an explanation and the cache is
   * on; undefined otherwise.
   */
  readCacheUse: ReadCacheUse | undefined;
  /**
   * What the request could not read because some Redis Cluster masters could not answer, when its
   * pipeline degrades rather than fails; undefined when it read everything (the usual case).
   */
  degradation: Degradation | undefined;
  /** Whether response bodies may name Redis nodes (`EXPOSE_REDIS_ADDRESS`), e.g. the `degraded` object's. */
  readonly exposeRedisAddress: boolean;
  /**
   * Work the pipeline leaves for after the response is sent (a shadow model's run), in this
   * context, before the request's events go to the sink; undefined in nearly every request.
   */
  afterResponse: (() => Promise<void>) | undefined;
  /**
   * The request's candidates (the objects it sent) that the index does not hold: ranked with the
   * fields sent and the declared defaults. Undefined when every candidate was found.
   */
  notInIndex: object[] | undefined;
  readonly #identities = new WeakMap<object, Identifier>();
  /**
   * The entity last identified, and its identifier: a model reads a dozen features of one
   * candidate in a row, and comparing one reference is cheaper than a WeakMap look-up each time.
   */
  #lastEntity: object | undefined;
  #lastIdentifier: Identifier | undefined;

  constructor(pipeline: string, request: RankdRequest, options: RequestContextOptions = {}) {
    this.pipeline = pipeline;
    this.request = request;
    this.exposeRedisAddress = options.exposeRedisAddress ?? false;
    this.events =
      options.events ??
      new EventRecorder(
        { requestId: String(request.request_id ?? ''), apiSource: pipeline },
        { respond: request.include_events === true },
      );
    // The request itself names per-request features: getFeature(request, 'group:feature').
    this.#identities.set(request, { type: 'request', id: String(request.request_id ?? '') });
  }

  /**
   * Ends `stage`, begun at `start` (a `performance.now()` reading), at `end` (now unless given),
   * and returns the end, where the next stage begins: one clock reading per stage, cheap enough
   * to be always on.
   */
  stageEnded(stage: PipelineStage, start: number, end = performance.now()): number {
    this.stageObserver?.stage(this.pipeline, stage, start, end);
    if (this.stageTimes !== undefined) this.stageTimes[stage] = end - start;
    return end;
  }

  /** The request's {@link degradation}, made on first use. */
  degraded(): Degradation {
    this.degradation ??= new Degradation();
    return this.degradation;
  }

  /** Records that `entity` (an object of this request) is `identifier`. */
  register(entity: object, identifier: Identifier): void {
    this.#identities.set(entity, identifier);
    if (entity === this.#lastEntity) this.#lastEntity = undefined;
    let byId = this.entitiesByType.get(identifier.type);
    if (byId === undefined) {
      byId = new Map();
      this.entitiesByType.set(identifier.type, byId);
    }
    byId.set(identifier.id, entity as Record<string, unknown>);
  }

  /** The identifier an entity reference stands for. */
  identify(ref: EntityRef): Identifier {
    if (typeof ref === 'string') {
      const split = ref.indexOf('::');
      if (split > 0) return { type: ref.slice(0, split), id: ref.slice(split + 2) };
      throw new FeatureLookupError(`${JSON.stringify(ref)} is not an identifier: use "type::id"`);
    }
    if (ref === this.#lastEntity) return this.#lastIdentifier as Identifier;
    const known = this.#identities.get(ref);
    if (known) {
      this.#lastEntity = ref;
      this.#lastIdentifier = known;
      return known;
    }
    const candidate = ref as Partial<Identifier>;
    if (typeof candidate.type === 'string' && typeof candidate.id === 'string')
      return { type: candidate.type, id: candidate.id };
    throw new FeatureLookupError(
      'getFeature was given an object that is not an entity of this request nor an identifier',
    );
  }

  /**
   * A reader of many features of `entities` (see `FeatureTable.reader`): `read(name)` gives the
   * feature of each entity, in order, as {@link getFeature} would give it. The batch forms
   * ({@link getFeatures}, `featureMatrix`, `featureColumns`) all read through it.
   */
  featureReader(entities: readonly EntityRef[]): (name: string) => Array<FeatureValue | null> {
    return this.features.reader(entities.map((entity) => this.identify(entity)));
  }

  /** See {@link getFeature}. */
  getFeature(ref: EntityRef | readonly [EntityRef, EntityRef], name: string): FeatureValue | null {
    if (!Array.isArray(ref)) return this.features.getOne(this.identify(ref as EntityRef), name);
    return this.features.get(
      ref.map((r) => this.identify(r)),
      name,
    );
  }
}

/**
 * Shared through the global object: an app module may load a second copy of rankd (the built
 * package through `import 'rankd'`, while the CLI runs from source), and its getFeature must
 * still see the request the server runs. A context from another copy is used structurally.
 */
const STORAGE_KEY = Symbol.for('rankd.requestContext');
const shared = globalThis as Record<symbol, AsyncLocalStorage<RequestContext> | undefined>;
const storage: AsyncLocalStorage<RequestContext> =
  shared[STORAGE_KEY] ?? new AsyncLocalStorage<RequestContext>();
shared[STORAGE_KEY] = storage;

/** Runs `fn` with `context` as the current request context. */
export function runInContext<T>(context: RequestContext, fn: () => Promise<T>): Promise<T> {
  return storage.run(context, fn);
}

/**
 * The context of the request being served; throws outside a request.
 *
 * @example
 * ```ts
 * import { currentContext, defineModel } from 'rankd';
 *
 * export const ByPipeline = defineModel({
 *   name: 'ByPipeline',
 *   score(entities) {
 *     const context = currentContext(); // the request being served
 *     return entities.map(() => (context.pipeline === 'MyRankingPipeline' ? 1 : 0));
 *   },
 * });
 * ```
 */
export function currentContext(): RequestContext {
  const context = storage.getStore();
  if (context === undefined)
    throw new AppMisuseError(
      'No rankd request is being served here: getFeature works only inside pipeline code run by a ' +
        'request (a model, business logic, real-time features), and so do logEvent and getExperimentVariant',
    );
  return context;
}

/**
 * Reads a feature of the current request: `getFeature(product, "product_stats:ctr_7d")`. The
 * entity may be the entity object, an identifier `{ type, id }` or `"type::id"`; a pair feature
 * takes `[product, user]`, or one entity when the request has a single partner for it.
 * Returns the stored or computed value, else the feature's declared default, else null.
 *
 * @example
 * ```ts
 * import { defineModel, getFeature } from 'rankd';
 * import { Product } from './pipelines/product-ranking/schemas.js';
 *
 * // The stored or computed value, else the declared default, else null.
 * export const Ctr = defineModel({
 *   name: 'Ctr',
 *   entity: Product,
 *   features: ['product_stats:ctr_7d', 'text_match:title'],
 *   score: (products) =>
 *     products.map(
 *       (product) =>
 *         Number(getFeature(product, 'product_stats:ctr_7d')) + Number(getFeature(product, 'text_match:title')),
 *     ),
 * });
 * ```
 */
export function getFeature(
  ref: EntityRef | readonly [EntityRef, EntityRef],
  name: string,
): FeatureValue | null {
  return currentContext().getFeature(ref, name);
}

/**
 * The spec's name for {@link getFeature}: `get_feature(identifier, "feature_name")` inside any
 * pipeline component. The same function, for code written from the spec or ported from Python.
 *
 * @example
 * ```ts
 * import { defineModel, get_feature } from 'rankd';
 *
 * // As the spec writes it: one feature of one entity.
 * export const ByRating = defineModel({
 *   name: 'ByRating',
 *   features: ['product_stats:rating'],
 *   score: (products) => products.map((p) => Number(get_feature(p, 'product_stats:rating')) || 0),
 * });
 * ```
 */
export const get_feature: typeof getFeature = getFeature;

/**
 * Batch form of {@link getFeature}: `result[i][j]` is feature `names[j]` of `refs[i]`.
 *
 * @example
 * ```ts
 * import { defineModel, getFeatures } from 'rankd';
 *
 * // rows[i][j]: entity i's value of feature j, each group's row found once per entity.
 * export const Sum = defineModel({
 *   name: 'Sum',
 *   features: ['product_stats:ctr_7d', 'text_match:title'],
 *   score(products) {
 *     const rows = getFeatures(products, ['product_stats:ctr_7d', 'text_match:title']);
 *     return rows.map((row) => row.reduce<number>((sum, value) => sum + (Number(value) || 0), 0));
 *   },
 * });
 * ```
 */
export function getFeatures(
  refs: ReadonlyArray<EntityRef | readonly [EntityRef, EntityRef]>,
  names: readonly string[],
) {
  const context = currentContext();
  if (refs.some((ref) => Array.isArray(ref)))
    return refs.map((ref) => names.map((name) => context.getFeature(ref, name)));
  // One entity each: read name by name, each group's row of an entity found once for all its names.
  const read = context.featureReader(refs as readonly EntityRef[]);
  const columns = names.map((name) => read(name));
  return refs.map((_, i) => columns.map((column) => column[i] as FeatureValue | null));
}

/**
 * The identifier of an entity object of the current request.
 *
 * @example
 * ```ts
 * import { defineBusinessLogic, identifierOf } from 'rankd';
 *
 * export const Ids = defineBusinessLogic({
 *   name: 'Ids',
 *   apply(candidates) {
 *     const first = candidates[0];
 *     if (first) console.log(identifierOf(first.entity)); // { type: 'product', id: 'p1' }
 *     return candidates;
 *   },
 * });
 * ```
 */
export function identifierOf(entity: object): Identifier {
  return currentContext().identify(entity);
}
