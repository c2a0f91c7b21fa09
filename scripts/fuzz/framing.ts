/**
 * Framing errors no HTTP client library will send: written as raw bytes on a fresh socket.
 * Each one must get an answer in rankd's error shape (Node's parser refuses most of them before
 * any route runs, which is where Fastify's own shape slips out), and never two answers (a second
 * answer means the server read a smuggled request out of a body).
 */
import fc from 'fast-check';
import { EXAMPLE_BODIES } from './bodies.js';
import type { CaseSpec } from './fuzz-case.js';

/** The `Host` header every case has unless it is about `Host`. */
const HOST = 'Host: 127.0.0.1';
/** A request the server answers, smuggled in a body: if it is answered, framing was read two ways. */
const SMUGGLED = 'GET /healthcheck HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n';

interface Framing {
  name: string;
  /** The request's bytes (`\r\n` line ends unless the case is about line ends). */
  text: string;
  /**
   * Not a framing error (odd but allowed, e.g. an absolute-form target, or tolerated by Node's
   * parser and harmless, e.g. two spaces in the request line): any answer in rankd's shape will
   * do. Else the request must be refused with a 4xx.
   */
  wellFramed?: boolean;
  /** Responses expected on the socket: 1, or 2 for a pipelined pair. */
  responses?: number;
  /** Split the bytes into this many pieces, sent with pauses between them (slow clients). */
  pieces?: number;
}

const body = EXAMPLE_BODIES['/api/v1/entities/get'] ?? '{}';
const post = (headers: string[], payload: string) =>
  `POST /api/v1/entities/get HTTP/1.1\r\n${headers.map((h) => `${h}\r\n`).join('')}\r\n${payload}`;
const json = 'Content-Type: application/json';
const cl = (n: number | string) => `Content-Length: ${n}`;
const chunked = (payload: string) => `${payload.length.toString(16)}\r\n${payload}\r\n0\r\n\r\n`;

const badChunkSize = fc.constantFrom(
  'zz',
  '-1',
  'ffffffffffffffffffff',
  ' 5',
  '0x5',
  '',
  '5;\u0000',
  '1_0',
  '+5',
);
const badLength = fc.constantFrom(
  '-1',
  '1e2',
  '+10',
  '0x10',
  '99999999999999999999',
  '10 10',
  '',
  'abc',
  '10,11',
);
const badRequestLine = fc.constantFrom(
  'GET / HTTP/1.1 extra',
  'GET / HTTP/3.0',
  'GET  /healthcheck  HTTP/1.1 (tolerated)',
  'FOO /healthcheck HTTP/1.1',
  'get /healthcheck HTTP/1.1',
  'GET /health\u0000check HTTP/1.1',
  'GET http://evil.example/healthcheck HTTP/1.1 (tolerated)',
  'GET * HTTP/1.1',
  'GET /é HTTP/1.1',
  'GET /healthcheck?%ff HTTP/1.1 (tolerated)',
  'GET healthcheck HTTP/1.1',
  'GET /healthcheck HTTP/1.1\u0000',
);
const badHeader = fc.constantFrom(
  'NoColonHere',
  'Bad Name: x',
  'X-Nul: a\u0000b',
  'X-Latin1: caf\u00e9 (tolerated)',
  ': empty-name',
  'X-Ctl: a\u0007b',
  `X-Huge: ${'h'.repeat(20_000)}`,
);

const framings: fc.Arbitrary<Framing> = fc.oneof(
  fc.constantFrom<Framing>(
    { name: 'two equal Content-Lengths', text: post([HOST, json, cl(body.length), cl(body.length)], body) },
    {
      name: 'two different Content-Lengths',
      text: post([HOST, json, cl(body.length), cl(body.length + 5)], `${body}xxxxx`),
    },
    {
      name: 'Content-Length and Transfer-Encoding',
      text: post([HOST, json, cl(body.length), 'Transfer-Encoding: chunked'], chunked(body)),
    },
    {
      name: 'Transfer-Encoding and Content-Length, smuggling',
      text: post([HOST, json, 'Transfer-Encoding: chunked', cl(5)], `0\r\n\r\n${SMUGGLED}`),
    },
    {
      name: 'chunk longer than its size',
      text: post([HOST, json, 'Transfer-Encoding: chunked'], `3\r\n${body}\r\n0\r\n\r\n`),
    },
    { name: 'obs-fold header', text: post([HOST, json, cl(body.length), 'X-Folded: a', '  b'], body) },
    {
      name: 'obs-fold Content-Type',
      text: post([HOST, 'Content-Type:', ' application/json', cl(body.length)], body),
    },
    { name: 'missing Host', text: post([json, cl(body.length)], body) },
    { name: 'missing Host (GET)', text: 'GET /healthcheck HTTP/1.1\r\n\r\n' },
    // RFC 9112 says 400, Node accepts it; not one of the framing errors rankd promises to refuse (yet).
    {
      name: 'two Host headers',
      text: post([HOST, 'Host: evil.example', json, cl(body.length)], body),
      wellFramed: true,
    },
    {
      name: 'Transfer-Encoding: chunked, identity',
      text: post([HOST, json, 'Transfer-Encoding: chunked, identity'], chunked(body)),
    },
    { name: 'Transfer-Encoding: gzip', text: post([HOST, json, 'Transfer-Encoding: gzip'], body) },
    { name: 'Transfer-Encoding: xchunked', text: post([HOST, json, 'Transfer-Encoding: xchunked'], body) },
    {
      name: 'space before colon',
      text: post([HOST, json, 'Transfer-Encoding : chunked', cl(body.length)], body),
    },
    {
      name: 'bare LF line ends',
      text: `POST /api/v1/entities/get HTTP/1.1\nHost: 127.0.0.1\n${json}\n${cl(body.length)}\n\n${body}`,
    },
    { name: 'HTTP/1.0 without Host', text: 'GET /healthcheck HTTP/1.0\r\n\r\n', wellFramed: true },
    {
      name: 'Expect: 100-continue',
      text: post([HOST, json, cl(body.length), 'Expect: 100-continue', 'Connection: close'], body),
      wellFramed: true,
    },
    {
      name: 'pipelined pair',
      text: `GET /healthcheck HTTP/1.1\r\n${HOST}\r\n\r\n${post([HOST, json, cl(body.length), 'Connection: close'], body)}`,
      wellFramed: true,
      responses: 2,
    },
  ),
  badChunkSize.map((size) => ({
    name: `bad chunk size ${JSON.stringify(size)}`,
    text: post([HOST, json, 'Transfer-Encoding: chunked'], `${size}\r\n${body}\r\n0\r\n\r\n`),
  })),
  badLength.map((length) => ({
    name: `Content-Length ${JSON.stringify(length)}`,
    text: post([HOST, json, cl(length)], body),
  })),
  badRequestLine.map((line) => {
    const [text = line, tolerated] = line.split(' (tolerated)');
    return {
      name: `request line ${JSON.stringify(text.slice(0, 60))}`,
      text: `${text}\r\n${HOST}\r\n\r\n`,
      wellFramed: tolerated !== undefined,
    };
  }),
  badHeader.map((header) => {
    const [text = header, tolerated] = header.split(' (tolerated)');
    return {
      name: `header ${JSON.stringify(text.slice(0, 40))}`,
      text: post([HOST, json, text, cl(body.length)], body),
      wellFramed: tolerated !== undefined,
    };
  }),
  fc.integer({ min: 2, max: 5 }).map((pieces) => ({
    name: `slow body in ${pieces} pieces`,
    text: post([HOST, json, cl(body.length), 'Connection: close'], body),
    wellFramed: true,
    pieces,
  })),
);

/** Splits `bytes` into `n` pieces of (nearly) equal length; the first holds at least the request line. */
function split(bytes: Buffer, n: number): Buffer[] {
  const pieces: Buffer[] = [];
  const size = Math.ceil(bytes.length / n);
  for (let at = 0; at < bytes.length; at += size) pieces.push(bytes.subarray(at, at + size));
  return pieces;
}

/** A framing case: raw bytes on their own socket (`raw.pieces`), with the pause of slow ones kept short. */
export const framingCase: fc.Arbitrary<CaseSpec> = fc
  .tuple(framings, fc.integer({ min: 20, max: 150 }))
  .map(([f, pauseMs]): CaseSpec => {
    // latin1: one byte per character, so a case's `\u0000` or `é` is the byte written, not UTF-8.
    const bytes = Buffer.from(f.text, 'latin1');
    const [requestLine = ''] = f.text.split(/\r?\n/, 1);
    const [method = '?', path = '?'] = requestLine.split(' ');
    return {
      route: 'raw framing',
      kind: `framing: ${f.name}`,
      method,
      path,
      headers: [],
      body: undefined,
      raw: {
        pieces: f.pieces ? split(bytes, f.pieces) : [bytes],
        pauseMs: f.pieces ? pauseMs : 0,
        responses: f.responses ?? 1,
      },
      ...(f.wellFramed ? {} : { mustReject: `a framing error (${f.name}) must be refused` }),
    };
  });
