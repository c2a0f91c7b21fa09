import type { EntityReference, EntityType } from '../entities/define-entity.js';
import { idOf, referencedType } from '../entities/identifier.js';
import type { EntityData, EntityIndex } from '../index/entity-index.js';
import type { RequestContext } from './request-context.js';

/** Where a request object sits: the array and index, or the object and field, that hold it. */
interface Home {
  readonly holder: Record<string | number, unknown> | unknown[];
  readonly key: string | number;
}

/** Entities of one identity found at one level, with every request object that stands for it. */
export interface Discovered {
  readonly type: EntityType;
  readonly id: string;
  readonly objects: Array<Record<string, unknown>>;
  /** Where each of `objects` sits, so hydration can put the filled object there instead. */
  readonly homes: Home[];
}

/** Where entities sit in a request: a field holding one entity or a list of them. */
export interface EntitySlot {
  readonly field: string;
  readonly type: EntityType;
}

/** Finds the entities in `request`'s slots, deduplicated by identity (first occurrence first). */
export function discoverEntities(
  request: Record<string, unknown>,
  slots: readonly EntitySlot[],
): Discovered[] {
  const found = new Map<string, Discovered>();
  const add = (type: EntityType, holder: Home['holder'], key: string | number) => {
    const value = (holder as Record<string | number, unknown>)[key];
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return;
    const entity = value as Record<string, unknown>;
    const id = idOf(type.idField, entity);
    if (id === undefined) return;
    const identity = `${type.name}::${id}`;
    const existing = found.get(identity);
    if (existing) {
      existing.objects.push(entity);
      existing.homes.push({ holder, key });
    } else found.set(identity, { type, id, objects: [entity], homes: [{ holder, key }] });
  };
  for (const slot of slots) {
    const value = request[slot.field];
    if (Array.isArray(value)) for (let i = 0; i < value.length; i++) add(slot.type, value, i);
    else add(slot.type, request, slot.field);
  }
  return [...found.values()];
}

/**
 * Fills one level of entities from their stored values and returns the next level (entities
 * they reference). A value the caller sent wins — any value but null, including 0, "" and
 * false; stored fields the type does not declare are copied too; declared defaults fill what
 * is still missing. Every entity is registered in the context, found in the index or not.
 */
export function fillLevel(
  context: RequestContext,
  level: readonly Discovered[],
  stored: ReadonlyArray<EntityData | undefined>,
  seen: Set<string>,
): Discovered[] {
  const next = new Map<string, Discovered>();
  // References to entities already hydrated, resolved once the whole level is registered: the
  // referenced entity may come later in this same level (e.g. a request field of that type).
  const shared: Array<[entity: Record<string, unknown>, field: string, key: string]> = [];
  level.forEach((entry, i) => {
    const values = stored[i];
    const { objects, homes } = entry;
    // Copies of the stored entity first, for identities the request names more than once: each
    // object stays the caller's own. The first then takes the parsed stored object itself.
    for (let j = objects.length - 1; j >= 0; j--) {
      let entity = objects[j] as Record<string, unknown>;
      if (values !== undefined) {
        if (j === 0) {
          entity = overlay(values, entity);
          const home = homes[0] as Home;
          (home.holder as Record<string | number, unknown>)[home.key] = entity;
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
        const key = `${targetType.name}::${id}`;
        let target = entity[reference.as];
        if (typeof target !== 'object' || target === null || Array.isArray(target)) {
          target = { [targetType.idField]: id };
          entity[reference.as] = target;
        }
        if (seen.has(key)) {
          // Hydrated at an earlier level or in this one (or a cycle): share its object.
          shared.push([entity, reference.as, key]);
          continue;
        }
        const home: Home = { holder: entity, key: reference.as };
        const existing = next.get(key);
        if (existing) {
          existing.objects.push(target as Record<string, unknown>);
          existing.homes.push(home);
        } else {
          next.set(key, {
            type: targetType,
            id,
            objects: [target as Record<string, unknown>],
            homes: [home],
          });
        }
      }
    }
  });
  for (const [entity, field, key] of shared) {
    const known = context.entities.get(key);
    if (known) entity[field] = known;
  }
  for (const key of next.keys()) seen.add(key);
  return [...next.values()];
}

/**
 * Hydrates the request's entities level by level: one read per level of references, so a
 * request with products that reference brands costs two round trips, whatever its size.
 * `firstLevelRead` lets the caller start the first MGET itself (alongside the feature reads).
 */
export async function hydrate(
  context: RequestContext,
  index: EntityIndex,
  firstLevel: readonly Discovered[],
  firstLevelRead: Promise<Array<EntityData | undefined>>,
): Promise<void> {
  const seen = new Set(firstLevel.map((d) => `${d.type.name}::${d.id}`));
  let level = fillLevel(context, firstLevel, await firstLevelRead, seen);
  while (level.length > 0) {
    const stored = await index.readMany(level.map((d) => ({ type: d.type.name, id: d.id })));
    level = fillLevel(context, level, stored, seen);
  }
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
  for (const field in values) {
    if (entity[field] === undefined || entity[field] === null) entity[field] = values[field];
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
