import type { EntityReference, EntityType } from '../entities/define-entity.js';
import { idOf, referencedType } from '../entities/identifier.js';
import {
  type EntityData,
  type EntityIndex,
  hasUnpairedSurrogate,
  type OnUnread,
} from '../entity-index/entity-index.js';
import type { RequestContext } from '../request/request-context.js';

/** What holds a request object: the array or the object it is an element or field of. */
type Holder = Record<string | number, unknown> | unknown[];

/** A request object standing for an entity, and where it sits (`holder[key]`). */
interface Occurrence {
  readonly object: Record<string, unknown>;
  readonly holder: Holder;
  readonly key: string | number;
}

/** An entity of one identity found at one level, with the request objects that stand for it. */
export interface Discovered extends Occurrence {
  readonly type: EntityType;
  readonly id: string;
  /**
   * Further request objects of the same identity (the same product twice), if any. Most
   * identities occur once: keeping the first occurrence inline spares two lists per entity.
   */
  more: Occurrence[] | undefined;
}

/** Where entities sit in a request: a field holding one entity or a list of them. */
export interface EntitySlot {
  readonly field: string;
  readonly type: EntityType;
}

/** The entities of one level, deduplicated by identity, in the order first found. */
export class Level {
  readonly entries: Discovered[] = [];
  // By type name, then id: no "type::id" string to build per entity.
  readonly #byType = new Map<string, Map<string, Discovered>>();

  /** Adds an occurrence of (type, id); a repeated identity becomes one more object of its entry. */
  add(
    type: EntityType,
    id: string,
    object: Record<string, unknown>,
    holder: Holder,
    key: string | number,
  ): void {
    let byId = this.#byType.get(type.name);
    if (byId === undefined) {
      byId = new Map();
      this.#byType.set(type.name, byId);
    }
    const existing = byId.get(id);
    if (existing === undefined) {
      const entry: Discovered = { object, holder, key, type, id, more: undefined };
      byId.set(id, entry);
      this.entries.push(entry);
    } else if (existing.more === undefined) existing.more = [{ object, holder, key }];
    else existing.more.push({ object, holder, key });
  }

  /** Whether this level holds an entity of type `typeName` with `id`. */
  has(typeName: string, id: string): boolean {
    return this.#byType.get(typeName)?.has(id) === true;
  }
}

/** Finds the entities in `request`'s slots, deduplicated by identity (first occurrence first). */
export function discoverEntities(request: Record<string, unknown>, slots: readonly EntitySlot[]): Level {
  const level = new Level();
  const add = (type: EntityType, holder: Holder, key: string | number) => {
    const value = (holder as Record<string | number, unknown>)[key];
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return;
    const entity = value as Record<string, unknown>;
    const id = idOf(type.idField, entity);
    if (id !== undefined) level.add(type, id, entity, holder, key);
  };
  for (const slot of slots) {
    const value = request[slot.field];
    if (Array.isArray(value)) for (let i = 0; i < value.length; i++) add(slot.type, value, i);
    else add(slot.type, request, slot.field);
  }
  return level;
}

/**
 * Fills one level of entities from their stored values and returns the next level (entities
 * they reference). A value the caller sent wins — any value but null, including 0, "" and
 * false; stored fields the type does not declare are copied too; declared defaults fill what
 * is still missing. Every entity is registered in the context, found in the index or not.
 */
export function fillLevel(
  context: RequestContext,
  level: Level,
  stored: ReadonlyArray<EntityData | undefined>,
): Level {
  const next = new Level();
  // References to entities of this level or an earlier one, resolved once the whole level is
  // registered: the referenced entity may come later in this same level (e.g. a request field).
  const shared: Array<[entity: Record<string, unknown>, field: string, type: string, id: string]> = [];
  const entries = level.entries;
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i] as Discovered;
    const values = stored[i];
    // Copies of the stored entity first, for identities the request names more than once: each
    // object stays the caller's own. The first then takes the parsed stored object itself.
    const more = entry.more;
    for (let j = more?.length ?? 0; j >= 0; j--) {
      const occurrence = j === 0 ? entry : (more?.[j - 1] as Occurrence);
      let entity = occurrence.object;
      if (values !== undefined) {
        if (j === 0) {
          entity = overlay(values, entity);
          (occurrence.holder as Record<string | number, unknown>)[occurrence.key] = entity;
        } else fillFrom(entity, values);
      }
      for (const [field, value] of entry.type.defaults) {
        if (entity[field] === undefined) entity[field] = structuredCloneIfObject(value);
      }
      context.register(entity, { type: entry.type.name, id: entry.id });
      for (const [idField, reference] of referencesOf(entry.type)) {
        const targetType = referencedType(reference);
        const id = idOf(idField, entity);
        if (id === undefined) continue;
        let target = entity[reference.as];
        if (typeof target !== 'object' || target === null || Array.isArray(target)) {
          target = { [targetType.idField]: id };
          entity[reference.as] = target;
        }
        // Hydrated at an earlier level or in this one (or a cycle): share its object.
        if (context.entitiesByType.get(targetType.name)?.has(id) || level.has(targetType.name, id)) {
          shared.push([entity, reference.as, targetType.name, id]);
          continue;
        }
        // Tested once per new id, not per reference: many candidates share a few brands.
        if (!next.has(targetType.name, id) && hasUnpairedSurrogate(id)) {
          notFoundUnread(context, targetType, id, target as Record<string, unknown>);
          continue;
        }
        next.add(targetType, id, target as Record<string, unknown>, entity, reference.as);
      }
    }
  }
  for (const [entity, field, type, id] of shared) {
    const known = context.entitiesByType.get(type)?.get(id);
    if (known) entity[field] = known;
  }
  return next;
}

/**
 * Hydrates the request's entities level by level: one read per level of references, so a
 * request with products that reference brands costs two round trips, whatever its size.
 * `firstLevelRead` lets the caller start the first MGET itself (alongside the feature reads).
 * With `onUnread` (a degrading pipeline), entities on cluster masters that cannot answer are
 * filled as if not found, and `onUnread` hears of them. Resolves with whether any entity was
 * found through a reference (beyond the first level).
 */
export async function hydrate(
  context: RequestContext,
  index: EntityIndex,
  firstLevel: Level,
  firstLevelRead: Promise<Array<EntityData | undefined>>,
  onUnread?: OnUnread,
): Promise<boolean> {
  let level = fillLevel(context, firstLevel, await firstLevelRead);
  const foundReferenced = level.entries.length > 0;
  while (level.entries.length > 0) {
    const stored = await readLevel(context, index, level.entries, onUnread);
    level = fillLevel(context, level, stored);
  }
  return foundReferenced;
}

/**
 * Reads the stored values of a level's entities; an explained request also records which came
 * from the read cache ({@link RequestContext.readCacheUse}).
 */
export async function readLevel(
  context: RequestContext,
  index: EntityIndex,
  entries: readonly Discovered[],
  onUnread?: OnUnread,
): Promise<Array<EntityData | undefined>> {
  const use = context.readCacheUse;
  if (use === undefined) return index.readMany(entries, onUnread);
  const fromCache: boolean[] = [];
  const stored = await index.readMany(entries, onUnread, fromCache);
  fromCache.forEach((hit, i) => {
    const entry = entries[i] as Discovered;
    if (hit) use.entityRead(entry.type.name, entry.id);
  });
  return stored;
}

/**
 * Registers a referenced entity whose id holds an unpaired surrogate as one not found (its id and
 * the declared defaults), without reading it. Such an id comes only from stored data (requests
 * and uploads refuse it): its key, in UTF-8, would be another id's, whose entity and feature rows
 * it must not take. The context keeps it out of the feature reads as well.
 */
function notFoundUnread(
  context: RequestContext,
  type: EntityType,
  id: string,
  entity: Record<string, unknown>,
): void {
  for (const [field, value] of type.defaults) {
    if (entity[field] === undefined) entity[field] = structuredCloneIfObject(value);
  }
  context.register(entity, { type: type.name, id });
  context.unreadable ??= [];
  context.unreadable.push({ type: type.name, id });
}

const referenceLists = new WeakMap<EntityType, Array<[string, EntityReference]>>();

/** A type's references as a list, made once per type rather than once per hydrated entity. */
function referencesOf(type: EntityType): Array<[string, EntityReference]> {
  let list = referenceLists.get(type);
  if (list === undefined) {
    list = Object.entries(type.references);
    referenceLists.set(type, list);
  }
  return list;
}

/** Fills what `entity` (a caller's object) lacks from the stored values: the caller's values win. */
function fillFrom(entity: Record<string, unknown>, values: EntityData): void {
  for (const field of Object.keys(values)) {
    // A stored field may have any name: `constructor` is filled in, `__proto__` never changes the prototype.
    const own = Object.hasOwn(entity, field) ? entity[field] : undefined;
    if (own === undefined || own === null)
      Object.defineProperty(entity, field, {
        value: values[field],
        writable: true,
        enumerable: true,
        configurable: true,
      });
  }
}

/**
 * {@link fillFrom}'s result built the other way round: the caller's fields are written over the
 * stored object (parsed for this request alone), which is returned. A caller usually sends an id
 * and a few fields, the index holds them all: copying the few is what keeps hydration cheap.
 */
function overlay(values: EntityData, entity: Record<string, unknown>): Record<string, unknown> {
  const filled = values as Record<string, unknown>;
  for (const field in entity) {
    const value = entity[field];
    // A null the caller sent gives way to a stored value, as in fillFrom, but stays if there is none.
    if ((value !== undefined && value !== null) || !Object.hasOwn(filled, field)) filled[field] = value;
  }
  return filled;
}

function structuredCloneIfObject(value: unknown): unknown {
  return typeof value === 'object' && value !== null ? structuredClone(value) : value;
}

/**
 * The objects of the request's `candidates` whose entity the first read did not find (each
 * occurrence of a repeated id), leaving out those it could not read at all (`unread`: positions in
 * `level`, a Redis Cluster master out), which degradation counts instead. Undefined when none.
 */
export function candidatesNotFound(
  request: Record<string, unknown>,
  level: Level,
  stored: ReadonlyArray<EntityData | undefined>,
  unread: readonly number[] | undefined,
): object[] | undefined {
  const candidates = request.candidates;
  if (!Array.isArray(candidates)) return undefined;
  let missing: object[] | undefined;
  const entries = level.entries;
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i] as Discovered;
    if (stored[i] !== undefined || entry.holder !== candidates || unread?.includes(i)) continue;
    missing ??= [];
    missing.push(entry.object);
    for (const other of entry.more ?? []) missing.push(other.object);
  }
  return missing;
}
