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

/** A variant of an experiment as the request was assigned it (see docs/reference/experiments.md). */
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
 */
export type EntityRef = object | Identifier | string;

/**
 * Everything one request holds: its hydrated entities, feature table and events. Created per
 * request and reachable from any pipeline code through {@link currentContext} (AsyncLocalStorage);
 * nothing of it outlives the request or is visible to another.
 *
 * @example
 * import { currentContext } from 'rankd';
 * const traceScored = (count: number) => currentContext().events.add('SCORED', { count });
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
  /** The time each stage took (ms), when the request asked for an explanation; else undefined. */
  stageTimes: Record<string, number> | undefined;
  /** What the request read from the read cache, when it asked for an explanation and the cache is on. */
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
  /** Candidates sent that the index does not hold, ranked with the fields sent and the defaults. */
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
 * import { currentContext } from 'rankd';
 * // In pipeline code: the request being served.
 * const isSearch = () => currentContext().pipeline === 'MyRankingPipeline';
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
 * Reads a feature of the current request. The entity may be the entity object, an identifier
 * `{ type, id }` or `"type::id"`; a pair feature takes `[product, user]`, or one entity when the
 * request has a single partner for it. Returns the stored or computed value, else the feature's
 * declared default, else null.
 *
 * @example
 * ```ts
 * import { defineModel, getFeature } from 'rankd';
 *
 * export const Ctr = defineModel({
 *   name: 'Ctr',
 *   features: ['product_stats:ctr_7d'],
 *   score: (products) => products.map((p) => Number(getFeature(p, 'product_stats:ctr_7d'))),
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
 * import { get_feature } from 'rankd';
 * const rating = (product: object) => Number(get_feature(product, 'product_stats:rating')) || 0;
 */
export const get_feature: typeof getFeature = getFeature;

/**
 * Batch form of {@link getFeature}: `result[i][j]` is feature `names[j]` of `refs[i]`.
 *
 * @example
 * import { getFeatures } from 'rankd';
 * const rows = (products: object[]) => getFeatures(products, ['product_stats:ctr_7d', 'text_match:title']);
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
 * import { identifierOf } from 'rankd';
 * const idOf = (product: object) => identifierOf(product).id; // { type: 'product', id: 'p1' } → 'p1'
 */
export function identifierOf(entity: object): Identifier {
  return currentContext().identify(entity);
}
