import Type from 'typebox';

/** One field-level problem in a validation error. */
const FieldProblemSchema = Type.Object(
  {
    loc: Type.Array(Type.Union([Type.String(), Type.Integer()]), {
      description: 'Where the problem is: `["body", "entities", 3, "price"]`',
    }),
    msg: Type.String({ description: 'What is wrong' }),
    type: Type.String({ description: 'Stable kind of problem: `missing`, `type`, `enum`, ...' }),
  },
  { title: 'FieldProblem' },
);

/** An id in a partial-write report: an entity id, or `[first, second]` for a row of a pair view. */
const WrittenIdSchema = Type.Union([Type.String(), Type.Array(Type.String(), { minItems: 2, maxItems: 2 })]);

/**
 * The body of every error response, in the predecessor's shape: `detail` is a sentence, or for
 * validation errors (422) the list of problems; `error_code` is a stable code of the catalogue.
 */
const ErrorBodySchema = Type.Object(
  {
    detail: Type.Union([Type.String(), Type.Array(FieldProblemSchema)]),
    error_code: Type.String({ description: 'Stable error code, e.g. `RANKD_VALIDATION`' }),
    written_ids: Type.Optional(
      Type.Array(WrittenIdSchema, {
        description: 'Only with `RANKD_PARTIAL_WRITE`: the ids whose write (or delete) Redis confirmed',
      }),
    ),
    failed_ids: Type.Optional(
      Type.Array(WrittenIdSchema, {
        description:
          'Only with `RANKD_PARTIAL_WRITE`: the ids whose write (or delete) was not confirmed; send them again',
      }),
    ),
  },
  { title: 'ErrorBody' },
);

const descriptions: Record<number, string> = {
  400: 'Malformed request (for example, invalid JSON)',
  401: 'Missing or unknown API key',
  403: 'The API key lacks the admin right, or (`RANKD_LOOPBACK_ONLY`) a route that changes data called from another machine while no API key is set',
  404: 'No such resource; the message says what exists',
  413: 'Body larger than BODY_LIMIT',
  415: 'Body is not application/json',
  422: 'The body does not match the schema; `detail` lists each problem',
  429: "The API key holds its share of the server's work in flight (`RANKD_KEY_SHARE_EXCEEDED`); retry after `Retry-After` seconds",
  503: 'Redis is not reachable (the message says what to do), or on a Redis Cluster a write reached only some nodes (`RANKD_PARTIAL_WRITE`: `written_ids` and `failed_ids` say which), or the server is too busy (`RANKD_OVERLOADED`: retry after `Retry-After` seconds)',
};

/** Error responses for a route's OpenAPI entry, by status. */
export function errorResponses(...statuses: number[]): Record<number, typeof ErrorBodySchema> {
  const responses: Record<number, typeof ErrorBodySchema> = {};
  for (const status of statuses) {
    responses[status] = Type.Object(ErrorBodySchema.properties, {
      title: 'ErrorBody',
      description: descriptions[status] ?? 'Error',
    }) as typeof ErrorBodySchema;
  }
  return responses;
}

/** The error statuses every JSON POST route can answer with. */
export const JSON_POST_ERRORS = [400, 401, 413, 415, 422, 429, 503] as const;
