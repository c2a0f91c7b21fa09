import type { EntityReference, EntityType } from '../entities/define-entity.js';
import { idOf, referencedType } from '../entities/identifier.js';
import type { EntityData, EntityIndex } from '../index/entity-index.js';
import type { RequestContext } from './request-context.js';

/** Entities of one identity found at one level, with every request object that stands for it. */
export interface Discovered {
  readonly type: EntityType;
  readonly id: string;
  readonly objects: Array<Record<string, unknown>>;
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
  const add = (type: EntityType, value: unknown) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return;
    const entity = value as Record<string, unknown>;
    const id = idOf(type.idField, entity);
    if (id === undefined) return;
    const key = `${type.name}::${id}`;
    const existing = found.get(key);
    if (existing) existing.objects.push(entity);
    else found.set(key, { type, id, objects: [entity] });
  };
  for (const slot of slots) {
    const value = request[slot.field];
    if (Array.isArray(value)) for (const item of value) add(slot.type, item);
    else add(slot.type, value);
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
    for (const entity of entry.objects) {
      if (values !== undefined) {
        for (const field in values) {
          if (entity[field] === undefined || entity[field] === null) entity[field] = values[field];
        }
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
        const existing = next.get(key);
        if (existing) existing.objects.push(target as Record<string, unknown>);
        else next.set(key, { type: targetType, id, objects: [target as Record<string, unknown>] });
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

function structuredCloneIfObject(value: unknown): unknown {
  return typeof value === 'object' && value !== null ? structuredClone(value) : value;
}
