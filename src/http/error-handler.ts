import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  ErrorCode,
  type FieldProblem,
  problemsFromSchemaErrors,
  RankdError,
  type SchemaError,
} from '../errors/index.js';

/** The JSON body of every error response (a few errors add fields, e.g. `written_ids`). */
export interface ErrorBody {
  detail: string | readonly FieldProblem[];
  error_code: string;
  [field: string]: unknown;
}

interface Mapped {
  status: number;
  body: ErrorBody;
}

/** Fastify's own request errors, by code: what status and catalogue code each becomes. */
const FASTIFY_ERRORS: Record<string, { status: number; code: string; detail?: string }> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: {
    status: 415,
    code: ErrorCode.UNSUPPORTED_MEDIA_TYPE,
    detail: 'Unsupported media type: send the body as JSON with `Content-Type: application/json`',
  },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { status: 400, code: ErrorCode.BAD_REQUEST },
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, code: ErrorCode.BODY_TOO_LARGE },
  FST_ERR_CTP_EMPTY_JSON_BODY: {
    status: 400,
    code: ErrorCode.MALFORMED_JSON,
    detail: 'The JSON body is empty',
  },
  FST_ERR_CTP_INVALID_JSON_BODY: {
    status: 400,
    code: ErrorCode.MALFORMED_JSON,
    detail: 'The body is not valid JSON (or has a forbidden `__proto__` or `constructor.prototype` key)',
  },
};

/** How errors are answered; each has a default so that a bare call answers as a default server. */
export interface ErrorResponseOptions {
  /** Answer messages that name Redis's address as they are (`EXPOSE_REDIS_ADDRESS`). @defaultValue `false` */
  readonly exposeRedisAddress?: boolean;
}

/**
 * The one place where errors become HTTP responses: catalogue errors keep their status and code
 * (and lose the Redis address unless `exposeRedisAddress`), Fastify's request errors are mapped
 * onto the catalogue, and anything else is a 500 that is logged in full but answered without
 * internals.
 */
export function toErrorResponse(error: unknown, options: ErrorResponseOptions = {}): Mapped {
  if (error instanceof RankdError) {
    const message = options.exposeRedisAddress ? error.message : (error.publicMessage ?? error.message);
    return {
      status: error.statusCode,
      body: { detail: error.problems ?? message, error_code: error.code, ...error.extra },
    };
  }
  // `throw null` and `throw undefined` reach here too: they are internal errors like any other.
  const fastifyError = (error ?? {}) as Partial<FastifyError> & {
    validation?: SchemaError[];
    validationContext?: string;
  };
  if (Array.isArray(fastifyError.validation)) {
    const problems = problemsFromSchemaErrors(fastifyError.validation, [
      fastifyError.validationContext ?? 'body',
    ]);
    return { status: 422, body: { detail: problems, error_code: ErrorCode.VALIDATION } };
  }
  const known = fastifyError.code ? FASTIFY_ERRORS[fastifyError.code] : undefined;
  if (known)
    return {
      status: known.status,
      body: { detail: known.detail ?? messageOf(fastifyError), error_code: known.code },
    };
  if (error instanceof SyntaxError || fastifyError.code === 'FST_ERR_CTP_INVALID_JSON_BODY') {
    return {
      status: 400,
      body: {
        detail: `Body is not valid JSON: ${messageOf(fastifyError)}`,
        error_code: ErrorCode.MALFORMED_JSON,
      },
    };
  }
  const status = fastifyError.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    // Other client errors Fastify raises before our code runs (bad headers, prototype poisoning, ...).
    return { status, body: { detail: messageOf(fastifyError), error_code: ErrorCode.BAD_REQUEST } };
  }
  return {
    status: 500,
    body: {
      detail: 'Internal error: this is a bug; the server log has the details',
      error_code: ErrorCode.INTERNAL,
    },
  };
}

function messageOf(error: Partial<FastifyError>): string {
  return error.message ?? 'Bad request';
}

/** Installs the error and not-found handlers on `server`. */
export function installErrorHandling(server: FastifyInstance, options: ErrorResponseOptions = {}): void {
  server.setErrorHandler((error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const { status, body } = toErrorResponse(error, options);
    // A Redis outage answers every request with 503: one line each, not a stack trace each. The
    // line has the whole message, the address included, whatever the response may say.
    if (status === 503)
      request.log.warn(
        { status, error_code: body.error_code },
        error instanceof RankdError ? error.message : String(body.detail),
      );
    else if (status >= 500) request.log.error({ err: error }, 'request failed');
    else request.log.info({ status, error_code: body.error_code }, 'request rejected');
    return reply.code(status).type('application/json; charset=utf-8').send(body);
  });
  server.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) => {
    const body: ErrorBody = {
      detail: `No route ${request.method} ${request.url.split('?')[0]}; the API is documented at /redoc`,
      error_code: ErrorCode.NOT_FOUND,
    };
    return reply.code(404).send(body);
  });
}
