import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import type { Config } from '../config/index.js';

/** Where log lines go instead of stdout: anything with `write(line)` (a pino destination). */
export interface LogStream {
  /** Receives one log line: a JSON object, newline-terminated. */
  write(line: string): void;
}

/** The header a request id is taken from, when the caller sends one, and echoed in. */
const REQUEST_ID_HEADER = 'x-request-id';

/**
 * A caller's id is kept when it is 1–128 visible ASCII characters: UUIDs, trace ids and the like,
 * but nothing that could forge a log line (newlines) or bloat every line of the request.
 */
const ACCEPTED_REQUEST_ID = /^[\x21-\x7e]{1,128}$/;

/**
 * Secrets that must never reach a log, wherever a headers object is logged: as `req.headers`
 * (a custom serializer), as `headers` at the top, or one level down (`{ request: { headers } }`).
 */
export const REDACTED_PATHS = ['authorization', 'x-api-key', 'cookie', 'set-cookie'].flatMap((header) => {
  const key = `headers["${header}"]`;
  return [`req.${key}`, key, `*.${key}`];
});

/**
 * The request id: the caller's `x-request-id` when acceptable, so one id follows a request
 * across services, else a random UUID (unique across processes, unlike Fastify's `req-1`).
 */
export function requestIdOf(request: IncomingMessage): string {
  const given = request.headers[REQUEST_ID_HEADER];
  return typeof given === 'string' && ACCEPTED_REQUEST_ID.test(given) ? given : randomUUID();
}

/** Whether logs are pretty-printed: in development, and only for a person at a terminal. */
export function wantsPrettyLogs(config: Pick<Config, 'ENVIRONMENT'>, isTTY: boolean): boolean {
  return config.ENVIRONMENT === 'development' && isTTY;
}

/**
 * Fastify's logger options: pino JSON lines, one per event, each line of a request carrying its
 * `reqId`; secrets redacted; pretty lines (pino-pretty, loaded only then) in development at a
 * terminal. `stream` (tests, embedders) receives JSON lines and wins over pretty printing.
 */
export async function loggerOptions(
  config: Pick<Config, 'ENVIRONMENT' | 'LOG_LEVEL'>,
  stream?: LogStream,
): Promise<FastifyServerOptions['logger']> {
  if (config.LOG_LEVEL === 'silent') return false;
  const options = { level: config.LOG_LEVEL, redact: { paths: REDACTED_PATHS, censor: '[Redacted]' } };
  if (stream) return { ...options, stream };
  if (wantsPrettyLogs(config, process.stdout.isTTY === true)) {
    const { default: pretty } = await import('pino-pretty');
    return {
      ...options,
      stream: pretty({ colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' }),
    };
  }
  return options;
}

/** Echoes the request id in the `x-request-id` response header, errors and 404s included. */
export function installRequestIdHeader(server: FastifyInstance): void {
  server.addHook('onRequest', (request, reply, done) => {
    reply.header(REQUEST_ID_HEADER, request.id);
    done();
  });
}
