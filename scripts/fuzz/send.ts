/**
 * Sending a case to 127.0.0.1 and collecting what came back. HTTP cases go through node:http
 * on kept-alive connections (10,000 fresh sockets would leave as many in TIME_WAIT); framing cases
 * are written byte for byte on a socket of their own and the answer parsed here.
 */
import http from 'node:http';
import net from 'node:net';
import type { FuzzCase } from './fuzz-case.js';

/** One HTTP response. */
export interface Response {
  status: number;
  /** Header names lower case; a repeated header's values joined with `, `. */
  headers: Record<string, string>;
  body: Buffer;
}

/** What a request got: responses (framing cases may get two), or none and why. */
export type Answer =
  | { kind: 'responses'; responses: Response[]; ms: number }
  | { kind: 'timeout'; ms: number }
  | { kind: 'no-answer'; error: string; ms: number };

/** Where requests go: always loopback, whatever the target's URL said. */
export interface Endpoint {
  port: number;
  agent: http.Agent;
}

/** An endpoint on 127.0.0.1:`port` with `sockets` kept-alive connections. */
export function endpoint(port: number, sockets: number): Endpoint {
  return { port, agent: new http.Agent({ keepAlive: true, maxSockets: sockets }) };
}

/** Sends `c` and resolves with its answer; never rejects. `timeoutMs` bounds the whole exchange. */
export function send(to: Endpoint, c: FuzzCase, timeoutMs: number): Promise<Answer> {
  return c.raw ? sendRaw(to.port, c.raw, timeoutMs) : sendHttp(to, c, timeoutMs);
}

function sendHttp(to: Endpoint, c: FuzzCase, timeoutMs: number): Promise<Answer> {
  const started = performance.now();
  const ms = () => Math.round(performance.now() - started);
  return new Promise((resolve) => {
    let done = false;
    const finish = (answer: Answer) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve(answer);
    };
    const headers: Record<string, string> = {};
    for (const [name, value] of c.headers) headers[name] = value;
    if (c.body !== undefined) headers['content-length'] = String(c.body.length);
    let request: http.ClientRequest;
    try {
      request = http.request({
        host: '127.0.0.1',
        port: to.port,
        method: c.method,
        path: c.path,
        headers,
        agent: to.agent,
      });
    } catch (error) {
      // node:http refused to send it (e.g. a header it will not write): the case is skipped as such.
      resolve({ kind: 'no-answer', error: `not sent: ${(error as Error).message}`, ms: 0 });
      return;
    }
    const timer = setTimeout(() => {
      request.destroy();
      finish({ kind: 'timeout', ms: ms() });
    }, timeoutMs);
    request.on('error', (error) => finish({ kind: 'no-answer', error: error.message, ms: ms() }));
    request.on('response', (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', (error) => finish({ kind: 'no-answer', error: error.message, ms: ms() }));
      response.on('end', () => {
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(response.headers))
          headers[name] = Array.isArray(value) ? value.join(', ') : (value ?? '');
        finish({
          kind: 'responses',
          responses: [{ status: response.statusCode ?? 0, headers, body: Buffer.concat(chunks) }],
          ms: ms(),
        });
      });
    });
    request.end(c.body);
  });
}

function sendRaw(port: number, raw: NonNullable<FuzzCase['raw']>, timeoutMs: number): Promise<Answer> {
  const started = performance.now();
  const ms = () => Math.round(performance.now() - started);
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let done = false;
    const socket = net.connect(port, '127.0.0.1');
    const finish = (answer?: Answer) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      if (answer) return resolve(answer);
      const responses = parseResponses(Buffer.concat(chunks));
      resolve(
        responses.length > 0
          ? { kind: 'responses', responses, ms: ms() }
          : { kind: 'no-answer', error: 'closed without a response', ms: ms() },
      );
    };
    // Enough answers seen: no need to wait for the server to close (a kept-alive one would not).
    const complete = () => parseResponses(Buffer.concat(chunks), true).length >= raw.responses;
    const timer = setTimeout(() => {
      if (chunks.length > 0) finish();
      else finish({ kind: 'timeout', ms: ms() });
    }, timeoutMs);
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      if (complete()) finish();
    });
    socket.on('end', () => finish());
    socket.on('close', () => finish());
    socket.on('error', (error) =>
      chunks.length > 0 ? finish() : finish({ kind: 'no-answer', error: error.message, ms: ms() }),
    );
    socket.on('connect', async () => {
      for (const [i, piece] of raw.pieces.entries()) {
        if (i > 0 && raw.pauseMs > 0) await new Promise((r) => setTimeout(r, raw.pauseMs));
        // An answer before the whole request is written (a 413 for a body too large): stop
        // writing, or the server's close turns into EPIPE and the answer read so far is lost.
        if (done || socket.destroyed || chunks.length > 0) return;
        await new Promise<void>((r) => socket.write(piece, () => r()));
      }
    });
  });
}

/**
 * The responses in `bytes`, in order. A body is read by Content-Length or chunked framing, else
 * to the end; with `completeOnly` a response whose body has not fully arrived is left out.
 */
export function parseResponses(bytes: Buffer, completeOnly = false): Response[] {
  const responses: Response[] = [];
  let at = 0;
  while (at < bytes.length) {
    const headEnd = bytes.indexOf('\r\n\r\n', at);
    if (headEnd < 0) break;
    const [statusLine = '', ...lines] = bytes.subarray(at, headEnd).toString('latin1').split('\r\n');
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? 0);
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
      headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
    }
    let bodyStart = headEnd + 4;
    // An interim 100 Continue is not the answer.
    if (status === 100) {
      at = bodyStart;
      continue;
    }
    let body: Buffer;
    if (headers['transfer-encoding']?.toLowerCase() === 'chunked') {
      const parts: Buffer[] = [];
      let ended = false;
      for (;;) {
        const lineEnd = bytes.indexOf('\r\n', bodyStart);
        if (lineEnd < 0) break;
        const size = Number.parseInt(bytes.subarray(bodyStart, lineEnd).toString('latin1'), 16);
        if (!Number.isFinite(size)) break;
        bodyStart = lineEnd + 2;
        if (size === 0) {
          const trailerEnd = bytes.indexOf('\r\n', bodyStart);
          bodyStart = trailerEnd < 0 ? bytes.length : trailerEnd + 2;
          ended = true;
          break;
        }
        parts.push(bytes.subarray(bodyStart, bodyStart + size));
        bodyStart += size + 2;
      }
      if (!ended && completeOnly) break;
      body = Buffer.concat(parts);
      at = bodyStart;
    } else if (headers['content-length'] !== undefined) {
      const length = Number(headers['content-length']);
      if (completeOnly && bytes.length < bodyStart + length) break;
      body = bytes.subarray(bodyStart, bodyStart + length);
      at = bodyStart + length;
    } else {
      if (completeOnly && status !== 204 && status !== 304) break;
      body = bytes.subarray(bodyStart);
      at = bytes.length;
    }
    responses.push({ status, headers, body });
  }
  return responses;
}
