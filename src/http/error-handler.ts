import { type IncomingMessage, type ServerResponse, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  ErrorCode,
  type FieldProblem,
  problemsFromSchemaErrors,
  RankdError,
  type SchemaError,
} from '../errors/index.js';
import { withoutAbsolutePaths } from './shown-path.js';

/** The JSON body of every error response (a few errors add fields, e.g. `written_ids`). */
export interface ErrorBody {
  detail: string | readonly FieldProblem[];
  error_code: string;
  [field: string]: unknown;
}

interface Mapped {
  status: number;
  body: ErrorBody;
  /** Headers the answer carries besides the content type (e.g. `retry-after`). */
  headers?: Readonly<Record<string, string>>;
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
  // Raised before routing (`frameworkErrors`), e.g. for `GET /%zz`.
  FST_ERR_BAD_URL: {
    status: 400,
    code: ErrorCode.BAD_REQUEST,
    detail:
      'The URL cannot be decoded: every `%` must start a percent-encoded UTF-8 byte (`%` and two hex digits)',
  },
};

/** How errors are answered; each has a default so that a bare call answers as a default server. */
interface ErrorResponseOptions {
  /** Answer messages that name Redis's address as they are (`EXPOSE_REDIS_ADDRESS`). @defaultValue `false` */
  readonly exposeRedisAddress?: boolean;
  /**
   * Files of the server a message may name (the event file), shown by name alone when outside the
   * app's directory; paths inside it are shown relative to it anyway. @defaultValue none
   */
  readonly files?: readonly string[];
}

/**
 * The one place where errors become HTTP responses: catalogue errors keep their status and code
 * (and lose the Redis address unless `exposeRedisAddress`), Fastify's request errors are mapped
 * onto the catalogue, and anything else is a 500 that is logged in full but answered without
 * internals.
 */
export function toErrorResponse(error: unknown, options: ErrorResponseOptions = {}): Mapped {
  if (error instanceof RankdError) {
    // Never an absolute path (a model or event file's): the server's layout is no caller's business.
    const message = withoutAbsolutePaths(
      options.exposeRedisAddress ? error.message : (error.publicMessage ?? error.message),
      options.files,
    );
    return {
      status: error.statusCode,
      body: { detail: error.problems ?? message, error_code: error.code, ...error.extra },
      ...(error.headers === undefined ? {} : { headers: error.headers }),
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

/**
 * An error Node's HTTP server reports on a connection (`clientError`): a parser error (`HPE_*`, with
 * llhttp's `reason`), a request timeout, a socket error, or the body idle timer's
 * `RANKD_REQUEST_TIMEOUT` (http-limits.ts).
 */
export interface ClientError extends Error {
  code?: string;
  reason?: string;
}

/**
 * What a client error becomes, or undefined for a socket error (a reset, a broken pipe): nobody is
 * left to read an answer. These errors reach no route, so {@link toErrorResponse} never sees them.
 */
function clientErrorResponse(error: ClientError): Mapped | undefined {
  const { code } = error;
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT')
    return {
      status: 408,
      body: {
        // Node does not say which of its two timeouts expired.
        detail:
          'The request did not arrive in time (its headers within a sixth of REQUEST_TIMEOUT_MS, all of it within REQUEST_TIMEOUT_MS); the connection is closed',
        error_code: ErrorCode.REQUEST_TIMEOUT,
      },
    };
  if (code === ErrorCode.REQUEST_TIMEOUT)
    return {
      status: 408,
      body: {
        detail:
          'The request body stopped arriving (nothing for a sixth of REQUEST_TIMEOUT_MS); the connection is closed',
        error_code: ErrorCode.REQUEST_TIMEOUT,
      },
    };
  if (code === 'HPE_HEADER_OVERFLOW')
    return {
      status: 431,
      body: {
        detail:
          'The request headers are larger than the server accepts (16 KiB in all by default); the connection is closed',
        error_code: ErrorCode.HEADERS_TOO_LARGE,
      },
    };
  if (code?.startsWith('HPE_')) {
    // llhttp's reasons are fixed sentences ("Duplicate Content-Length"), never the request's bytes.
    const reason = typeof error.reason === 'string' && error.reason.length > 0 ? error.reason : code;
    return {
      status: 400,
      body: {
        detail: `Not a valid HTTP/1.1 request (${reason}); the connection is closed`,
        error_code: ErrorCode.MALFORMED_REQUEST,
      },
    };
  }
  return undefined;
}

/** Node's private fields of an HTTP server's socket that tell whether a request is being answered. */
interface HttpSocket extends Socket {
  /** The response being written on the socket, if any. */
  _httpMessage?: ServerResponse | null;
  /** The parser and the last request whose headers it read. */
  parser?: { incoming?: IncomingMessage | null } | null;
}

/**
 * Whether an answer on `socket` now would not be read as the answer to the request being received:
 * no response has started, and the request being read was not answered already (e.g. a 415 sent
 * before its body arrived: a second answer would be taken for the answer to the next request).
 */
function mayAnswer(socket: Socket): boolean {
  const { _httpMessage: response, parser } = socket as HttpSocket;
  if (response) return !response.headersSent;
  const incoming = parser?.incoming;
  return incoming === undefined || incoming === null || incoming.complete;
}

/** The bytes of a whole error response, for a socket no `ServerResponse` can write on. */
function rawResponse({ status, body }: Mapped): string {
  const json = JSON.stringify(body);
  return (
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n` +
    'Content-Type: application/json; charset=utf-8\r\n' +
    `Content-Length: ${Buffer.byteLength(json)}\r\nConnection: close\r\n\r\n${json}`
  );
}

/**
 * Fastify's `clientErrorHandler` (its `this` is the server): answers a request Node's parser refused
 * or that timed out, in rankd's shape, then closes the connection, as Node would (the bytes that
 * follow cannot be trusted to start a request). Socket errors are only closed.
 */
export function handleClientError(this: FastifyInstance, error: ClientError, socket: Socket): void {
  const mapped = socket.destroyed ? undefined : clientErrorResponse(error);
  if (mapped !== undefined) {
    this.log.info(
      { status: mapped.status, error_code: mapped.body.error_code, detail: mapped.body.detail },
      'request rejected, connection closed',
    );
    if (socket.writable && mayAnswer(socket)) socket.write(rawResponse(mapped));
  }
  socket.destroy();
}

/** Logs and sends `error` as an error response (Fastify's error handler and `frameworkErrors`). */
function sendError(
  error: unknown,
  request: FastifyRequest,
  reply: FastifyReply,
  options: ErrorResponseOptions = {},
): FastifyReply {
  const { status, body, headers } = toErrorResponse(error, options);
  // A Redis outage answers every request with 503: one line each, not a stack trace each. The
  // line has the whole message, the address included, whatever the response may say.
  if (status === 503)
    request.log.warn(
      { status, error_code: body.error_code },
      error instanceof RankdError ? error.message : String(body.detail),
    );
  else if (status >= 500) request.log.error({ err: error }, 'request failed');
  else request.log.info({ status, error_code: body.error_code }, 'request rejected');
  // As for the requests Node's parser refuses: a client that sends no Host is not to be trusted with the next one.
  if (body.error_code === ErrorCode.MALFORMED_REQUEST) reply.header('connection', 'close');
  if (headers !== undefined) reply.headers(headers);
  return reply.code(status).type('application/json; charset=utf-8').send(body);
}

/**
 * Fastify's `frameworkErrors`: errors Fastify raises before routing (a URL that cannot be decoded,
 * ...), answered like every other error instead of in Fastify's own shape.
 */
export function handleFrameworkError(
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  sendError(error, request, reply);
}

/**
 * Answers an `Expect` header other than `100-continue` (Node's `checkExpectation`; without a
 * listener Node answers 417 with no body).
 */
function refuseExpectation(_request: IncomingMessage, response: ServerResponse): void {
  const body: ErrorBody = {
    detail: 'Unsupported `Expect` header: the only expectation this server meets is `100-continue`',
    error_code: ErrorCode.BAD_REQUEST,
  };
  const json = JSON.stringify(body);
  response
    .writeHead(417, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(json),
    })
    .end(json);
}

/**
 * Installs the error and not-found handlers on `server`. Errors before routing need Fastify's
 * `clientErrorHandler` ({@link handleClientError}) and `frameworkErrors` ({@link handleFrameworkError})
 * options, given when the server is created.
 */
export function installErrorHandling(server: FastifyInstance, options: ErrorResponseOptions = {}): void {
  server.setErrorHandler((error: unknown, request: FastifyRequest, reply: FastifyReply) =>
    sendError(error, request, reply, options),
  );
  server.server.on('checkExpectation', refuseExpectation);
  server.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) => {
    const body: ErrorBody = {
      detail: `No route ${request.method} ${request.url.split('?')[0]}; the API is documented at /redoc`,
      error_code: ErrorCode.NOT_FOUND,
    };
    return reply.code(404).send(body);
  });
}
