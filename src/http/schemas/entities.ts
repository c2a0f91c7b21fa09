import Type from 'typebox';
import type { RankdApp } from '../../app/define-app.js';
import type { EntityType } from '../../entities/define-entity.js';
import {
  hasUnpairedSurrogate,
  MAX_ENTITY_ID_LENGTH,
  UNPAIRED_SURROGATE_PROBLEM,
} from '../../entity-index/entity-index.js';
import { ValidationError } from '../../errors/index.js';

/** `entity_type`: one of the app's entity types (the OpenAPI document lists them). */
export function entityTypeSchema(app: RankdApp) {
  return Type.Enum([...app.entityTypes.keys()], {
    description: 'Entity type: a built-in or one the app declares',
  });
}

/** A list of ids, at most `maxBatch`; numbers are accepted and read as their decimal string. */
export function entityIdsSchema(maxBatch: number) {
  return Type.Array(
    Type.Union([Type.String({ minLength: 1, maxLength: MAX_ENTITY_ID_LENGTH }), Type.Number()]),
    {
      maxItems: maxBatch,
      description: `Entity ids, at most ${maxBatch}`,
    },
  );
}

/** An entity: any JSON object; the app's declared fields are type-checked on upload. */
export const EntityObjectSchema = Type.Object({}, { additionalProperties: true, title: 'Entity' });

/** The entity type named by a validated `entity_type` (the schema already rejected unknown names). */
export function entityTypeOf(app: RankdApp, name: string): EntityType {
  const type = app.entityTypes.get(name);
  // invariant: the route's schema lists exactly the app's entity types, so an unknown one is a 422 first.
  if (type === undefined) throw new TypeError(`entity type ${name} passed validation but is unknown`);
  return type;
}

/** Ids as strings, in order; an id with an unpaired surrogate is a 422 (it would address another id's key). */
export function idsAsStrings(ids: ReadonlyArray<string | number>): string[] {
  const strings = ids.map(String);
  // Most lists hold no surrogate at all, paired or not: one test over all of them says so.
  if (!/[\uD800-\uDFFF]/.test(strings.join(''))) return strings;
  const problems = strings.flatMap((id, i) =>
    hasUnpairedSurrogate(id)
      ? [
          {
            loc: ['body', 'entity_ids', i],
            msg: UNPAIRED_SURROGATE_PROBLEM.problem,
            type: UNPAIRED_SURROGATE_PROBLEM.type,
          },
        ]
      : [],
  );
  if (problems.length > 0) throw new ValidationError(problems.slice(0, 50), 'Invalid entity ids');
  return strings;
}
