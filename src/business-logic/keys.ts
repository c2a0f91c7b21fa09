import type { EntityOf, EntityType } from '../entities/define-entity.js';
import type { ScoredCandidate } from './define-business-logic.js';

/** A value candidates are grouped or matched by, compared as strings: `1` and `'1'` are one key. */
export type StepKey = string | number | boolean;

/**
 * What a step groups or matches candidates by: `'id'` (whatever the id field is called), an attribute
 * (`'brand'`), or a function of the entity. An array value gives several keys. `null`, `undefined`,
 * `''`, objects and non-finite numbers are no key.
 */
export type KeyBy<E extends EntityType = EntityType> =
  | 'id'
  | (string & {})
  | ((entity: EntityOf<E>) => StepKey | readonly StepKey[] | null | undefined);

function keyOf(value: unknown): string | undefined {
  if (typeof value === 'string') return value.length > 0 ? value : undefined;
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : undefined;
  if (typeof value === 'boolean') return String(value);
  return undefined;
}

/** The distinct keys of a value: one for a scalar, one per usable element for an array. */
function keysOfValue(value: unknown): string[] {
  if (!Array.isArray(value)) {
    const key = keyOf(value);
    return key === undefined ? [] : [key];
  }
  const keys = new Set<string>();
  for (const element of value) {
    const key = keyOf(element);
    if (key !== undefined) keys.add(key);
  }
  return [...keys];
}

/** Turns a {@link KeyBy} into a function from a candidate to its distinct keys (possibly none). */
export function keyReader<E extends EntityType>(by: KeyBy<E>): (candidate: ScoredCandidate<E>) => string[] {
  if (typeof by === 'function') return (candidate) => keysOfValue(by(candidate.entity));
  if (by === 'id') return (candidate) => keysOfValue(candidate.id);
  return (candidate) => keysOfValue(candidate.entity[by]);
}

/** How an explanation names what a step keys on: the attribute, `id`, or `key` for a function. */
export function keyLabel<E extends EntityType>(by: KeyBy<E>): string {
  return typeof by === 'function' ? 'key' : by;
}

/** A number as an explanation shows it: up to 6 significant digits, no exponent for ordinary sizes. */
export function figure(value: number): string {
  return String(Number(value.toPrecision(6)));
}
