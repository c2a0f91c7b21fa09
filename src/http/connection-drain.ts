import type { Server as HttpServer, IncomingMessage, ServerResponse } from 'node:http';
import { Server as NetServer, type Socket } from 'node:net';

/** What is known about one open connection. */
interface Connection {
  /** Requests received on it whose response has not finished. */
  inFlight: number;
  /** When it last had nothing in flight (ms since the epoch). */
  idleSince: number;
  /** The response being produced, so a drain can still mark it `Connection: close`. */
  response: ServerResponse | undefined;
}

/** How a drain ended. */
interface DrainResult {
  /** Requests still running at the deadline, whose connections were cut. */
  cutRequests: number;
}

/**
 * Lets an HTTP server stop without failing a request, which `server.close()` alone cannot promise:
 * since Node 19 it destroys idle keep-alive sockets at once, and a client that has just sent its
 * next request on one (it cannot know) sees a reset. A drain instead
 *
 * 1. stops accepting connections (in a `node:cluster` worker, the primary then hands new
 *    connections to the other workers),
 * 2. answers every request from then on, and every response not yet started, with
 *    `Connection: close`, so clients move to a new connection after their current request,
 * 3. closes only sockets that have been idle for `idleGraceMs`: a client busy enough to send again
 *    sooner gets its `Connection: close` answer instead, and one idle for longer is as unlikely to
 *    be sending at that instant as at any keep-alive timeout,
 * 4. cuts what is left at the deadline.
 *
 * Attach it before the server listens, so that it sees every connection.
 */
export class ConnectionDrain {
  readonly #server: HttpServer;
  readonly #connections = new Map<Socket, Connection>();
  #draining = false;

  constructor(server: HttpServer) {
    this.#server = server;
    server.on('connection', (socket: Socket) => {
      this.#connections.set(socket, { inFlight: 0, idleSince: Date.now(), response: undefined });
      socket.once('close', () => this.#connections.delete(socket));
    });
    // First in line, so the header is set before any handler could answer synchronously.
    server.prependListener('request', (request: IncomingMessage, response: ServerResponse) =>
      this.#onRequest(request, response),
    );
  }

  /** Whether a drain has started. */
  get draining(): boolean {
    return this.#draining;
  }

  /** Open connections (idle or not). */
  get openConnections(): number {
    return this.#connections.size;
  }

  /** Drains as described on the class; resolves when no connection is left. */
  async drain(options: { idleGraceMs: number; timeoutMs: number; pollMs?: number }): Promise<DrainResult> {
    this.#draining = true;
    for (const connection of this.#connections.values()) {
      if (connection.response !== undefined) markClose(connection.response);
    }
    // net.Server's close, not http.Server's: the latter would destroy idle keep-alive sockets now.
    NetServer.prototype.close.call(this.#server);
    const deadline = Date.now() + options.timeoutMs;
    while (this.#connections.size > 0 && Date.now() < deadline) {
      this.#closeIdle(options.idleGraceMs);
      if (this.#connections.size === 0) break;
      await new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 25));
    }
    let cutRequests = 0;
    for (const [socket, connection] of this.#connections) {
      cutRequests += connection.inFlight;
      socket.destroy();
    }
    return { cutRequests };
  }

  #onRequest(request: IncomingMessage, response: ServerResponse): void {
    const connection = this.#connections.get(request.socket);
    if (this.#draining) markClose(response);
    if (connection === undefined) return;
    connection.inFlight++;
    connection.response = response;
    response.once('close', () => {
      connection.inFlight--;
      if (connection.response === response) connection.response = undefined;
      if (connection.inFlight === 0) connection.idleSince = Date.now();
    });
  }

  #closeIdle(idleGraceMs: number): void {
    const now = Date.now();
    for (const [socket, connection] of this.#connections) {
      if (connection.inFlight === 0 && now - connection.idleSince >= idleGraceMs) socket.destroy();
    }
  }
}

/** Asks Node to close the connection once this response is sent (when it is not sent yet). */
function markClose(response: ServerResponse): void {
  if (!response.headersSent) response.setHeader('connection', 'close');
}
