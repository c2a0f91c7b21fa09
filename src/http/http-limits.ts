import type { Server as HttpServer, IncomingMessage, ServerOptions, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config/index.js';
import { ErrorCode, MalformedRequestError } from '../errors/index.js';
import type { ClientError } from './error-handler.js';

/** The request timeout's share a client gets to send its headers, or to pause while sending a body. */
const PAUSE_SHARE = 6;

/**
 * How long a client may take to send its headers, and may pause while sending a body, in ms: a
 * sixth of `REQUEST_TIMEOUT_MS` (10 s of the default 60 s; 0 when it is 0). Headers fit in one
 * packet (Node refuses more than 16 KiB) and a client streaming a body pauses for milliseconds, so
 * one that keeps silent that long has stopped sending, long before the whole request is late.
 */
export function clientPauseLimitOf(config: Pick<Config, 'REQUEST_TIMEOUT_MS'>): number {
  return Math.floor(config.REQUEST_TIMEOUT_MS / PAUSE_SHARE);
}

/** The Fastify options that carry the HTTP limits (docs/reference/configuration.md, "HTTP limits"). */
interface HttpLimitOptions {
  requestTimeout: number;
  keepAliveTimeout: number;
  http: ServerOptions;
}

/**
 * Fastify options for the limits `config` sets. Node checks its headers and request timeouts on a
 * timer (every 30 s unless told otherwise, so a 10 s timeout could take 40 s): here every second, or
 * every tenth of the shorter timeout when that is under 10 s (the check only walks the connections
 * that are in the middle of a request).
 */
export function httpLimitOptions(config: Config): HttpLimitOptions {
  const headersTimeout = clientPauseLimitOf(config);
  const timeouts = [headersTimeout, config.REQUEST_TIMEOUT_MS].filter((ms) => ms > 0);
  const shortest = Math.min(...timeouts, 10_000);
  return {
    // Fastify sets both on the server after creating it; the `http` copies only satisfy Node's
    // check, at creation, that the headers timeout is not longer than the request timeout.
    requestTimeout: config.REQUEST_TIMEOUT_MS,
    keepAliveTimeout: config.KEEP_ALIVE_TIMEOUT_MS,
    http: {
      requestTimeout: config.REQUEST_TIMEOUT_MS,
      headersTimeout,
      connectionsCheckingInterval: Math.max(10, Math.floor(shortest / 10)),
      // Node would answer a missing Host with an empty 400; the onRequest hook below refuses it in rankd's shape.
      requireHostHeader: false,
    },
  };
}

/**
 * Installs what the server options cannot say: the connection limit, the body idle timeout, and the
 * refusal of HTTP/1.1 requests without `Host` (RFC 9112 §3.2: a server must answer them 400).
 */
export function installHttpLimits(server: FastifyInstance, config: Config): void {
  // Node's own: a connection past the limit is closed as soon as it is accepted, before it costs anything.
  if (config.MAX_CONNECTIONS > 0) server.server.maxConnections = config.MAX_CONNECTIONS;
  const bodyIdle = clientPauseLimitOf(config);
  if (bodyIdle > 0) watchBodyIdle(server.server, bodyIdle);
  server.addHook('onRequest', (request, _reply, done) => {
    const { raw } = request;
    if (raw.headers.host === undefined && raw.httpVersionMajor === 1 && raw.httpVersionMinor === 1) {
      done(new MalformedRequestError('Not a valid HTTP/1.1 request: it has no Host header'));
      return;
    }
    done();
  });
}

/**
 * Closes, with a 408, a connection whose request body stops arriving for `idleMs`: Node's request
 * timeout only bounds the whole request, so without this a client that stopped sending would hold
 * its connection (and the body received so far) until then. The socket's own idle timer is used
 * while the body is read, and put back as it was once the body has arrived: never while a handler
 * runs, and never over Node's keep-alive timer, which takes the socket's timer once the response is
 * sent (a body still arriving after its answer is left to that timer and to the request timeout).
 */
function watchBodyIdle(server: HttpServer, idleMs: number): void {
  // First in line: the timer is armed before Fastify starts reading the body.
  server.prependListener('request', (request: IncomingMessage, response: ServerResponse) => {
    if (!hasBody(request)) return;
    const { socket } = request;
    const disarm = () => {
      if (!response.writableFinished && !socket.destroyed) socket.setTimeout(server.timeout);
    };
    // Node tells the response being written about a socket timeout, and destroys the socket when
    // nobody listens: with this listener it is ours to handle.
    response.once('timeout', () => {
      // Arrived but unread (a GET's body, or one a 401 left behind): not a client that stalled.
      if (request.complete) {
        disarm();
        return;
      }
      const error: ClientError = new Error('request body idle');
      error.code = ErrorCode.REQUEST_TIMEOUT;
      // The path of Node's own request timeout: Fastify's clientErrorHandler answers and closes.
      server.emit('clientError', error, socket);
    });
    request.once('end', disarm);
    socket.setTimeout(idleMs);
  });
}

/** Whether a request announces a body (a GET has none, and its handler must not be timed). */
function hasBody(request: IncomingMessage): boolean {
  const length = request.headers['content-length'];
  return request.headers['transfer-encoding'] !== undefined || Number(length) > 0;
}
