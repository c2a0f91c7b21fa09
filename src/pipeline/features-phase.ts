import type { Identifier } from '../entities/identifier.js';
import type { FeatureView } from '../features/define-feature-view.js';
import type { FeatureValue } from '../features/feature-kind.js';
import type { FeatureStore, OnUnreadRows, RowRequest } from '../features/feature-store.js';
import type { RealtimeFeatures } from '../request/define-realtime-features.js';
import type { ReadCacheUse } from '../request/read-cache-use.js';
import type { RequestContext } from '../request/request-context.js';
import type { FeaturePlan } from './feature-plan.js';

/**
 * Row keys of `view` for the given ids by entity type (each id, or every pair for a pair view).
 * With `requested`, only keys not in it, which are then added to it; without, ids must be unique.
 */
function rowKeys(
  view: FeatureView,
  idsByType: ReadonlyMap<string, Iterable<string>>,
  requested?: Set<string>,
): string[][] {
  const [first, second] = view.entityTypes;
  const keys: string[][] = [];
  const firstIds = idsByType.get(first?.name ?? '') ?? [];
  if (second === undefined) {
    // One entity per row, the common case: its id is its key, no joining needed.
    for (const id of firstIds) {
      if (requested !== undefined) {
        if (requested.has(id)) continue;
        requested.add(id);
      }
      keys.push([id]);
    }
    return keys;
  }
  const secondIds = [...(idsByType.get(second.name) ?? [])];
  for (const a of firstIds) {
    for (const b of secondIds) {
      if (first?.name === second.name && a === b) continue;
      if (requested !== undefined) {
        const key = `${a}\u001f${b}`;
        if (requested.has(key)) continue;
        requested.add(key);
      }
      keys.push([a, b]);
    }
  }
  return keys;
}

/**
 * Reads the stored feature rows a request needs in one MGET. Started with the ids known when the
 * request arrives (so it shares a round trip with the first hydration MGET); `complete` then
 * reads the rows of entities that hydration found deeper (referenced entities), if any.
 */
export class StoredFeatureFetch {
  readonly #plan: FeaturePlan;
  readonly #store: FeatureStore;
  readonly #context: RequestContext;
  readonly #firstIds: ReadonlyMap<string, readonly string[]>;
  readonly #first: Promise<void>;
  readonly #onUnread: OnUnreadRows | undefined;
  /** When the last rows went into the feature table (a `performance.now()` reading). */
  #rowsInAt = 0;

  /**
   * `idsByType`: the request's own entities, each id once per type. With `onUnread` (a degrading
   * pipeline), rows on cluster masters that cannot answer read as missing (their defaults), and
   * `onUnread` hears of them.
   */
  constructor(
    context: RequestContext,
    store: FeatureStore,
    plan: FeaturePlan,
    idsByType: ReadonlyMap<string, readonly string[]>,
    onUnread?: OnUnreadRows,
  ) {
    this.#context = context;
    this.#store = store;
    this.#plan = plan;
    this.#firstIds = idsByType;
    this.#onUnread = onUnread;
    for (const view of plan.storedViews)
      context.features.declare(
        view.name,
        view.features,
        view.entityTypes.map((t) => t.name),
        true,
      );
    this.#first = this.#read(idsByType, undefined);
    // If hydration fails first, this read's failure must not surface as an unhandled rejection.
    this.#first.catch(() => undefined);
  }

  /**
   * Waits for the first read, then, when hydration found entities through references
   * (`foundReferenced`, what {@link hydrate} resolved with), reads the rows they add. Resolves
   * with when the last rows went into the feature table, which may be well before this returns:
   * real-time features may have run meanwhile.
   */
  async complete(foundReferenced: boolean): Promise<number> {
    await this.#first;
    if (foundReferenced) await this.#readReferenced();
    for (const view of this.#plan.storedViews) this.#context.features.settle(view.name);
    return this.#rowsInAt;
  }

  /** Reads the rows of entities found through references, which the first read could not name. */
  async #readReferenced(): Promise<void> {
    const requested = new Map<FeatureView, Set<string>>();
    for (const view of this.#plan.storedViews) {
      const keys = new Set<string>();
      rowKeys(view, this.#firstIds, keys);
      requested.set(view, keys);
    }
    const idsByType = new Map<string, Iterable<string>>();
    const unreadable = this.#context.unreadable;
    for (const [type, byId] of this.#context.entitiesByType) {
      if (unreadable === undefined) idsByType.set(type, byId.keys());
      else idsByType.set(type, readableIds(type, byId.keys(), unreadable));
    }
    await this.#read(idsByType, requested);
  }

  async #read(
    idsByType: ReadonlyMap<string, Iterable<string>>,
    requested: ReadonlyMap<FeatureView, Set<string>> | undefined,
  ): Promise<void> {
    const requests: RowRequest[] = [];
    for (const view of this.#plan.storedViews) {
      const keys = rowKeys(view, idsByType, requested?.get(view));
      if (keys.length > 0) requests.push({ view, keys });
    }
    if (requests.length === 0) {
      this.#rowsInAt = performance.now();
      return;
    }
    const use = this.#context.readCacheUse;
    const fromCache: boolean[] | undefined = use === undefined ? undefined : [];
    const rows = await this.#store.read(requests, undefined, this.#onUnread, fromCache);
    if (use !== undefined && fromCache !== undefined) recordCacheUse(use, requests, fromCache);
    const features = this.#context.features;
    for (let i = 0; i < requests.length; i++) {
      const { view, keys } = requests[i] as RowRequest;
      const found = rows[i] ?? [];
      for (let j = 0; j < keys.length; j++) {
        const row = found[j];
        const ids = keys[j] as readonly string[];
        if (row !== undefined) features.putStored(view.name, ids[0] ?? '', ids[1], row);
      }
    }
    this.#rowsInAt = performance.now();
  }
}

/** Records the rows of `requests` read from the cache (`fromCache`: by position, as FeatureStore.read counts). */
function recordCacheUse(
  use: ReadCacheUse,
  requests: readonly RowRequest[],
  fromCache: readonly boolean[],
): void {
  let position = 0;
  for (const { view, keys } of requests) {
    const type = view.entityTypes[0]?.name ?? '';
    for (const ids of keys) if (fromCache[position++] === true) use.rowRead(view.name, type, ids);
  }
}

/** `ids` of `type` but those in `unreadable`: their keys would be other ids' (see `RequestContext.unreadable`). */
function readableIds(type: string, ids: Iterable<string>, unreadable: readonly Identifier[]): string[] {
  const skip = new Set(unreadable.filter((u) => u.type === type).map((u) => u.id));
  return [...ids].filter((id) => !skip.has(id));
}

type Computed = Record<string, FeatureValue | null | undefined>;

/**
 * Computes real-time feature groups (a run of the pipeline's: see
 * `FeaturePlan.realtimeBeforeStored`) for the request's hydrated entities: per request, per
 * entity of the group's type, or per pair of entities of its two types. Groups run in the order
 * given (a group may read an earlier group's features); the calls of one group run concurrently.
 */
export async function computeRealtimeFeatures(
  context: RequestContext,
  groups: readonly RealtimeFeatures[],
): Promise<void> {
  for (const group of groups) {
    const types = group.entityTypes.map((t) => t.name);
    context.features.declare(group.name, group.features, types);
    // Parallel lists and Map.forEach rather than iterators and tuples: this runs for every entity
    // (or pair) of every request, and each iterator step, tuple or list of ids is garbage.
    const firsts: string[] = [];
    const seconds: Array<string | undefined> = [];
    const results: Array<Computed | Promise<Computed>> = [];
    let anyAsync = false;
    const add = (first: string, second: string | undefined, result: Computed | Promise<Computed>) => {
      firsts.push(first);
      seconds.push(second);
      results.push(result);
      if (result instanceof Promise) anyAsync = true;
    };
    const [firstType, secondType] = types;
    if (firstType === undefined) {
      add('', undefined, group.compute(context.request));
    } else if (secondType === undefined) {
      context.entitiesByType.get(firstType)?.forEach((entity, id) => {
        add(id, undefined, group.compute(entity, context.request));
      });
    } else {
      const others = context.entitiesByType.get(secondType);
      context.entitiesByType.get(firstType)?.forEach((entity, id) => {
        others?.forEach((other, otherId) => {
          if (other !== entity) add(id, otherId, group.compute(entity, other, context.request));
        });
      });
    }
    // Await only when some call was asynchronous: 1000 synchronous computations need no promise each.
    const values = anyAsync ? await Promise.all(results) : (results as Computed[]);
    for (let i = 0; i < firsts.length; i++)
      context.features.putComputed(group.name, firsts[i] as string, seconds[i], values[i] ?? {});
  }
}
