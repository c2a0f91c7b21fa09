import type { EntityType } from './define-entity.js';

/** An entity's identity: its type and id. Its string form is `type::id`. */
export interface Identifier {
  readonly type: string;
  readonly id: string;
}

/** The id in `entity[idField]`, as a string, or undefined when it has none. */
export function idOf(idField: string, entity: Record<string, unknown>): string | undefined {
  const value = entity[idField];
  if (typeof value === 'string') return value.length > 0 ? value : undefined;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}

/**
 * Resolves a reference's entity type (references may be given lazily, for types that refer to each other).
 */
export function referencedType(reference: { entity: EntityType | (() => EntityType) }): EntityType {
  return typeof reference.entity === 'function' ? reference.entity() : reference.entity;
}
