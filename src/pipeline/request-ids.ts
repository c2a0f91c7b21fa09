import type { EntityType } from '../entities/define-entity.js';
import { referencedType } from '../entities/identifier.js';
import { hasUnpairedSurrogate, UNPAIRED_SURROGATE_PROBLEM } from '../entity-index/entity-index.js';
import type { FieldProblem } from '../errors/index.js';
import type { EntitySlot } from './hydrate.js';

/** Most problems one answer lists, as for the index routes. */
const MAX_PROBLEMS = 50;

/** A request object standing for an entity of `type`, and where it is in the body. */
interface Visit {
  readonly type: EntityType;
  readonly entity: Record<string, unknown>;
  readonly loc: ReadonlyArray<string | number>;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Every id of a pipeline request that holds an unpaired UTF-16 surrogate, with its place in the
 * body: the id of each entity in `slots` (candidates, query, user, ...) and, as hydration follows
 * them, the reference ids of those entities and of the referenced objects the caller nests in
 * them. Redis keys are UTF-8, where each unpaired surrogate becomes U+FFFD, so such an id would
 * read another id's entity and feature rows; upload refuses it as an id, and so must this.
 *
 * Callers run it only when the body may hold a surrogate at all (`request.rankdNoSurrogates`):
 * a clean request pays nothing per candidate.
 */
export function unpairedSurrogateIds(
  request: Record<string, unknown>,
  slots: readonly EntitySlot[],
): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const check = (value: unknown, loc: ReadonlyArray<string | number>) => {
    if (typeof value === 'string' && hasUnpairedSurrogate(value) && problems.length < MAX_PROBLEMS)
      problems.push({ loc, msg: UNPAIRED_SURROGATE_PROBLEM.problem, type: UNPAIRED_SURROGATE_PROBLEM.type });
  };
  // A queue rather than recursion (a body may nest referenced objects as deep as JSON allows),
  // and first in first out so that the problems come in the order of the body, level by level.
  const pending: Visit[] = [];
  for (const slot of slots) {
    const value = request[slot.field];
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        const item: unknown = value[i];
        if (isPlainObject(item))
          pending.push({ type: slot.type, entity: item, loc: ['body', slot.field, i] });
      }
    } else if (isPlainObject(value))
      pending.push({ type: slot.type, entity: value, loc: ['body', slot.field] });
  }
  for (let i = 0; i < pending.length && problems.length < MAX_PROBLEMS; i++) {
    const { type, entity, loc } = pending[i] as Visit;
    check(entity[type.idField], [...loc, type.idField]);
    for (const [idField, reference] of Object.entries(type.references)) {
      if (idField !== type.idField) check(entity[idField], [...loc, idField]);
      const nested = entity[reference.as];
      if (isPlainObject(nested))
        pending.push({ type: referencedType(reference), entity: nested, loc: [...loc, reference.as] });
    }
  }
  return problems;
}
