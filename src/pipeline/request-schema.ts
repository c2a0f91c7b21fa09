import Type, { type TObject, type TSchema } from 'typebox';
import { Value } from 'typebox/value';
import type { EntityType } from '../entities/define-entity.js';
import { exampleValue } from '../entities/examples.js';
import { MAX_ENTITY_ID_LENGTH } from '../entity-index/entity-index.js';
import { AppDefinitionError, problemsFromSchemaErrors } from '../errors/index.js';
import { CandidateExplanationSchema, RequestExplanationSchema } from './explain-schema.js';

/**
 * The schema of an entity inside a request: its id field is required, its declared fields are
 * optional (hydration fills them from the index, then their defaults apply), other fields pass.
 */
export function requestEntitySchema(type: EntityType): TSchema {
  // A query's id is its text, and an empty query (a browse page) is a valid request: it just matches nothing.
  const minLength = type.idField === 'query' ? 0 : 1;
  const fields: Record<string, TSchema> = {
    [type.idField]: Type.Union([Type.String({ minLength, maxLength: MAX_ENTITY_ID_LENGTH }), Type.Number()], {
      description: `Identifier of the ${type.name}: the only field a caller must send`,
    }),
  };
  for (const [name, field] of Object.entries(type.fields)) {
    if (name !== type.idField) fields[name] = Type.Optional(field);
  }
  return Type.Object(fields, {
    additionalProperties: true,
    title: (type.schema as { title?: string }).title ?? type.name,
    description: `A ${type.name}; fields not sent are hydrated from the index, then take their defaults.`,
  });
}

/** The pagination fields of a ranking request, with rankd's bounds and defaults (docs/reference/ranking.md). */
export const PaginationFields = {
  user_page_size: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 100,
      default: 10,
      description: 'Ranked items per returned page (1-100)',
    }),
  ),
  user_page: Type.Optional(
    Type.Integer({
      minimum: 0,
      default: 0,
      description: 'Zero-based page of ranked items, counted from the first candidate overall',
    }),
  ),
  candidate_page_size: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 1000,
      description: 'Size of a candidate page (1-1000); defaults to the number of candidates sent',
    }),
  ),
  candidate_page: Type.Optional(
    Type.Integer({
      minimum: 0,
      default: 0,
      description: 'Zero-based index of the candidate page this request carries',
    }),
  ),
};

/** The ranking response (spec 2.4), plus `events` when the request asked for them. */
export const RankingResponseSchema = Type.Object(
  {
    ranked_candidates: Type.Array(
      Type.Object(
        {
          candidate_id: Type.String({ description: "The candidate's id (its `product_id` for products)" }),
          ranked_score: Type.Number({ description: 'Score; items are in descending order of it' }),
          explanation: Type.Optional(CandidateExplanationSchema),
        },
        { title: 'RankedCandidate' },
      ),
    ),
    events: Type.Optional(Type.Array(Type.Object({}, { additionalProperties: true }))),
    explanation: Type.Optional(RequestExplanationSchema),
    degraded: Type.Optional(
      Type.Object(
        {
          entities: Type.Integer({ description: 'Entities whose stored values could not be read' }),
          features: Type.Integer({ description: 'Feature rows (per entity, or pair, and view) not read' }),
          nodes: Type.Array(
            Type.Object({
              node: Type.String({ description: 'The Redis Cluster master, `host:port`' }),
              slots: Type.String({ description: 'The hash slots it serves, e.g. `0-5460`' }),
              cause: Type.Enum(['offline', 'timeout', 'cluster_down', 'busy']),
              reason: Type.String({ description: 'What the Redis client said' }),
            }),
          ),
        },
        {
          description:
            'With `include_events`, when some Redis Cluster masters could not answer and the request was ' +
            'served without what they hold (those candidates ranked with the fields sent, those features ' +
            'at their defaults). The `x-rankd-degraded` header says the same to every caller.',
        },
      ),
    ),
  },
  { title: 'RankingResponse' },
);

/**
 * Puts the example request the API reference shows (and clients copy) on a pipeline's request
 * schema: the app's own `example`, which must be a valid request (else the app is refused at
 * start, rather than documenting a request that fails), or else `made` (the required fields made
 * up from the schema, with the parts given in `made`) when that is a valid request; else none.
 */
export function addRequestExample(
  pipelineName: string,
  schema: TObject,
  given: Record<string, unknown> | undefined,
  made: Record<string, unknown>,
  validate: (request: Record<string, unknown>) => void,
): void {
  const isValid = (request: Record<string, unknown>): string | undefined => {
    try {
      if (!Value.Check(schema, request)) {
        const first = problemsFromSchemaErrors(Value.Errors(schema, request), [], {
          schema,
          value: request,
        })[0];
        return first === undefined ? 'it does not match the schema' : first.msg;
      }
      validate(request);
      return undefined;
    } catch (error) {
      // A schema the checker cannot read (an app's `Type.Unsafe`) counts as a refusal, not a crash.
      return (error as Error).message;
    }
  };
  let example: Record<string, unknown> | undefined;
  if (given !== undefined) {
    const problem = isValid(given);
    if (problem !== undefined)
      throw new AppDefinitionError(`${pipelineName}: its example is not a valid request: ${problem}`);
    example = given;
  } else {
    const required = exampleValue(schema);
    const candidate =
      typeof required === 'object' && required !== null ? { ...required, ...made } : undefined;
    if (candidate !== undefined && isValid(candidate) === undefined) example = candidate;
  }
  if (example !== undefined) (schema as { examples?: unknown[] }).examples = [example];
}
