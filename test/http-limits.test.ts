/**
 * HTTP limits and errors before routing, on a listening server (raw sockets: no client library
 * sends malformed framing, and `inject` has no connection). Timeouts close stalled requests with a
 * 408 in rankd's shape while slow handlers and bodies sent in pieces are untouched; framing errors,
 * a missing Host, an undecodable URL, oversized headers and an unknown `Expect` are answered in
 * rankd's shape; connections past MAX_CONNECTIONS are refused while open ones keep working.
 *
 * The timeouts here are short (a few hundred ms) so that the tests are quick; nothing asserts how
 * long anything took, only what the server answered and whether it closed the connection.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../src/config/index.js';
import { ErrorCode } from '../src/errors/index.js';
import { buildServer } from '../src/http/build-server.js';
import { clientPauseLimitOf, httpLimitOptions } from '../src/http/http-limits.js';
import { type RunningServer, startServer } from '../src/http/start-server.js';
import { startTestRedis, type TestRedis } from './helpers/redis-server.js';
import { testConfig } from './helpers/server.js';

const REQUEST_TIMEOUT_MS = 1800;
/** The headers' limit and the body's idle limit: a sixth of REQUEST_TIMEOUT_MS. */
const PAUSE_LIMIT_MS = REQUEST_TIMEOUT_MS / 6;
const KEEP_ALIVE_TIMEOUT_MS = 200;
/** Pauses of a client that is sending: far shorter than PAUSE_LIMIT_MS, even on a busy machine. */
const SENDING_PAUSE_MS = PAUSE_LIMIT_MS / 10;
/** How long the slow routes take: longer than every timeout above, which must not cut them. */
const SLOW_HANDLER_MS = 2 * REQUEST_TIMEOUT_MS;
/** A guard so that a server that never answers fails the test instead of hanging it. */
const WATCHDOG_MS = 15_000;

const GET_BODY = '{"entity_type":"product","entity_ids":["p1"]}';
const CODES = new Set<string>(Object.values(ErrorCode));

let redis: TestRedis;

/** A listening server on the test Redis with `env`, and a slow route. */
async function listening(
  env: Record<string, string>,
): Promise<{ server: FastifyInstance; running: RunningServer }> {
  const server = await buildServer({
    config: testConfig(redis, env),
    extraRoutes: (s) => {
      s.post('/test/slow', async () => {
        await sleep(SLOW_HANDLER_MS);
        return { slow: true };
      });
      s.get('/test/slow', async () => {
        await sleep(SLOW_HANDLER_MS);
        return { slow: true };
      });
    },
  });
  if (!(await server.rankd.redis.waitUntilReady(5000)))
    throw new Error('the server did not connect to Redis');
  const running = await startServer(server, { port: 0, host: '127.0.0.1', shutdownTimeoutMs: 1000 });
  return { server, running };
}

/** One HTTP response as read off the socket. */
interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** What a connection received, and whether the server closed it. */
interface Exchange {
  responses: RawResponse[];
  /** Everything received, for assertion messages. */
  text: string;
  closedByServer: boolean;
}

/** Splits what a connection received into responses (bodies framed by Content-Length). */
function parseResponses(text: string): RawResponse[] {
  const responses: RawResponse[] = [];
  let rest = text;
  while (rest.startsWith('HTTP/1.1 ')) {
    const end = rest.indexOf('\r\n\r\n');
    if (end < 0) break;
    const [statusLine = '', ...lines] = rest.slice(0, end).split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const length = Number(headers['content-length'] ?? 0);
    const body = Buffer.from(rest.slice(end + 4), 'latin1')
      .subarray(0, length)
      .toString('utf8');
    responses.push({ status: Number(statusLine.split(' ')[1]), headers, body });
    rest = rest.slice(end + 4 + length);
  }
  return responses;
}

/**
 * Opens a connection, writes `pieces` (latin1: one byte per character) with `pauseMs` between them,
 * then waits for the server to close the connection (or for `until` to say it has what it needs).
 * `drip` keeps writing one byte every `pauseMs` after the pieces, as a slow client would.
 */
function exchange(
  port: number,
  pieces: string[],
  options: {
    pauseMs?: number;
    drip?: boolean;
    until?: (responses: RawResponse[]) => boolean;
    socket?: net.Socket;
  } = {},
): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    const socket = options.socket ?? net.connect(port, '127.0.0.1');
    let text = '';
    let closed = false;
    let done = false;
    const finish = (closedByServer: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(watchdog);
      socket.off('data', onData);
      resolve({ responses: parseResponses(text), text, closedByServer });
    };
    const watchdog = setTimeout(() => {
      done = true;
      socket.destroy();
      reject(new Error(`no end within ${WATCHDOG_MS} ms; received ${JSON.stringify(text.slice(0, 300))}`));
    }, WATCHDOG_MS);
    const onData = (chunk: Buffer) => {
      text += chunk.toString('latin1');
      if (options.until?.(parseResponses(text))) finish(false);
    };
    socket.on('data', onData);
    socket.once('close', () => {
      closed = true;
      finish(true);
    });
    socket.on('error', () => undefined);
    void (async () => {
      if (socket.connecting) await new Promise((ready) => socket.once('connect', ready));
      for (const [i, piece] of pieces.entries()) {
        if (i > 0) await sleep(options.pauseMs ?? 0);
        if (closed || done) return;
        socket.write(Buffer.from(piece, 'latin1'));
      }
      while (options.drip && !closed && !done) {
        await sleep(options.pauseMs ?? 50);
        if (!closed && !done) socket.write('x');
      }
    })();
  });
}

/** Asserts one response in rankd's error shape with `code`, and returns its detail. */
function assertRankdError(exchange: Exchange, status: number, code: string): string {
  const [response] = exchange.responses;
  assert.ok(response, `no response; received ${JSON.stringify(exchange.text.slice(0, 300))}`);
  assert.equal(response.status, status, exchange.text);
  assert.match(response.headers['content-type'] ?? '', /^application\/json/, exchange.text);
  const body = JSON.parse(response.body) as Record<string, unknown>;
  assert.deepEqual(Object.keys(body).sort(), ['detail', 'error_code'], exchange.text);
  assert.equal(typeof body.detail, 'string');
  assert.ok(CODES.has(String(body.error_code)), `${String(body.error_code)} is in the catalogue`);
  assert.equal(body.error_code, code, exchange.text);
  return String(body.detail);
}

const post = (headers: string[], body: string) =>
  `POST /api/v1/entities/get HTTP/1.1\r\n${headers.map((h) => `${h}\r\n`).join('')}\r\n${body}`;
const HOST = 'Host: 127.0.0.1';
const JSON_TYPE = 'Content-Type: application/json';
const length = (n: number | string) => `Content-Length: ${n}`;

before(async () => {
  redis = await startTestRedis();
});

after(async () => {
  await redis?.stop();
});

describe('timeouts', () => {
  let server: FastifyInstance;
  let running: RunningServer;
  before(async () => {
    ({ server, running } = await listening({
      REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
      KEEP_ALIVE_TIMEOUT_MS: String(KEEP_ALIVE_TIMEOUT_MS),
      MAX_CONNECTIONS: '50',
    }));
  });
  after(async () => {
    await running?.close();
  });

  test('the settings are the Node server’s', () => {
    const http = server.server;
    assert.equal(http.headersTimeout, PAUSE_LIMIT_MS);
    assert.equal(http.requestTimeout, REQUEST_TIMEOUT_MS);
    assert.equal(http.keepAliveTimeout, KEEP_ALIVE_TIMEOUT_MS);
    assert.equal(http.maxConnections, 50);
  });

  test('a body sent one byte at a time is answered 408 and closed once REQUEST_TIMEOUT_MS has passed', async () => {
    // Each byte comes well within the idle limit: only the request timeout can end this.
    const result = await exchange(running.port, [post([HOST, JSON_TYPE, length(100_000)], '{')], {
      pauseMs: SENDING_PAUSE_MS,
      drip: true,
    });
    assert.ok(result.closedByServer);
    const detail = assertRankdError(result, 408, ErrorCode.REQUEST_TIMEOUT);
    assert.match(detail, /REQUEST_TIMEOUT_MS/);
    assert.equal(result.responses.length, 1);
  });

  test('a body that stops arriving is answered 408 and closed after a sixth of REQUEST_TIMEOUT_MS', async () => {
    const result = await exchange(running.port, [post([HOST, JSON_TYPE, length(GET_BODY.length)], '{"ent')]);
    assert.ok(result.closedByServer);
    const detail = assertRankdError(result, 408, ErrorCode.REQUEST_TIMEOUT);
    assert.match(detail, /stopped arriving \(nothing for a sixth of REQUEST_TIMEOUT_MS\)/);
  });

  test('a body that never starts is answered 408 and closed', async () => {
    const result = await exchange(running.port, [post([HOST, JSON_TYPE, length(GET_BODY.length)], '')]);
    assert.ok(result.closedByServer);
    assertRankdError(result, 408, ErrorCode.REQUEST_TIMEOUT);
  });

  test('headers that stop arriving are answered 408 and closed', async () => {
    const result = await exchange(running.port, [`POST /api/v1/entities/get HTTP/1.1\r\n${HOST}\r\n`]);
    assert.ok(result.closedByServer);
    const detail = assertRankdError(result, 408, ErrorCode.REQUEST_TIMEOUT);
    assert.match(detail, /its headers within a sixth of REQUEST_TIMEOUT_MS/);
  });

  test('a body in pieces with short pauses is served', async () => {
    const text = post([HOST, JSON_TYPE, length(GET_BODY.length), 'Connection: close'], GET_BODY);
    const pieces = [text.slice(0, text.length - 30), text.slice(-30, -15), text.slice(-15)];
    const result = await exchange(running.port, pieces, { pauseMs: SENDING_PAUSE_MS });
    assert.equal(result.responses[0]?.status, 200, result.text);
  });

  test('handlers slower than every timeout are not cut, with or without a body', async () => {
    const withBody = `POST /test/slow HTTP/1.1\r\n${HOST}\r\n${JSON_TYPE}\r\n${length(2)}\r\nConnection: close\r\n\r\n{}`;
    // A GET's body is never read: the idle timer must not take the arrived-but-unread body for a stall.
    const unreadBody = `GET /test/slow HTTP/1.1\r\n${HOST}\r\n${length(2)}\r\nConnection: close\r\n\r\n{}`;
    const noBody = `GET /test/slow HTTP/1.1\r\n${HOST}\r\nConnection: close\r\n\r\n`;
    const results = await Promise.all(
      [withBody, unreadBody, noBody].map((text) => exchange(running.port, [text])),
    );
    for (const result of results) {
      assert.equal(result.responses[0]?.status, 200, result.text);
      assert.deepEqual(JSON.parse(result.responses[0]?.body ?? ''), { slow: true });
    }
  });

  test('an idle keep-alive connection is closed after KEEP_ALIVE_TIMEOUT_MS', async () => {
    const result = await exchange(running.port, [post([HOST, JSON_TYPE, length(GET_BODY.length)], GET_BODY)]);
    assert.ok(result.closedByServer);
    assert.equal(result.responses.length, 1);
    assert.equal(result.responses[0]?.status, 200, result.text);
    assert.equal(result.responses[0]?.headers.connection, 'keep-alive');
  });
});

describe('errors before routing, in rankd’s shape', () => {
  let running: RunningServer;
  before(async () => {
    ({ running } = await listening({}));
  });
  after(async () => {
    await running?.close();
  });

  const body = GET_BODY;
  const malformed: Array<[string, string]> = [
    [
      'two different Content-Lengths',
      post([HOST, JSON_TYPE, length(body.length), length(body.length + 5)], `${body}xxxxx`),
    ],
    [
      'Content-Length and Transfer-Encoding',
      post(
        [HOST, JSON_TYPE, length(body.length), 'Transfer-Encoding: chunked'],
        `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`,
      ),
    ],
    ['Content-Length "1e2"', post([HOST, JSON_TYPE, length('1e2')], body)],
    [
      'an invalid chunk size',
      post([HOST, JSON_TYPE, 'Transfer-Encoding: chunked'], `zz\r\n${body}\r\n0\r\n\r\n`),
    ],
    ['an obs-fold header', post([HOST, JSON_TYPE, length(body.length), 'X-Folded: a', '  b'], body)],
    ['no Host (POST)', post([JSON_TYPE, length(body.length)], body)],
    ['no Host (GET)', 'GET /healthcheck HTTP/1.1\r\n\r\n'],
    ['no Host (unknown route)', 'GET /no/such/route HTTP/1.1\r\n\r\n'],
  ];
  for (const [name, text] of malformed) {
    test(`${name}: 400 RANKD_MALFORMED_REQUEST, connection closed`, async () => {
      const result = await exchange(running.port, [text]);
      assertRankdError(result, 400, ErrorCode.MALFORMED_REQUEST);
      assert.equal(result.responses.length, 1);
      assert.ok(result.closedByServer);
    });
  }

  test('GET /%zz: 400 RANKD_BAD_REQUEST', async () => {
    const result = await exchange(running.port, [
      `GET /%zz HTTP/1.1\r\n${HOST}\r\nConnection: close\r\n\r\n`,
    ]);
    assertRankdError(result, 400, ErrorCode.BAD_REQUEST);
  });

  test('headers over 16 KiB: 431 RANKD_HEADERS_TOO_LARGE, connection closed', async () => {
    const result = await exchange(running.port, [
      `GET /healthcheck HTTP/1.1\r\n${HOST}\r\nX-Huge: ${'h'.repeat(20_000)}\r\n\r\n`,
    ]);
    assertRankdError(result, 431, ErrorCode.HEADERS_TOO_LARGE);
    assert.ok(result.closedByServer);
  });

  test('an Expect other than 100-continue: 417 RANKD_BAD_REQUEST', async () => {
    const result = await exchange(running.port, [
      post([HOST, JSON_TYPE, length(body.length), 'Expect: teapot', 'Connection: close'], ''),
    ]);
    assertRankdError(result, 417, ErrorCode.BAD_REQUEST);
  });

  test('HTTP/1.0 without Host is still served', async () => {
    const result = await exchange(running.port, ['GET /healthcheck HTTP/1.0\r\n\r\n']);
    assert.equal(result.responses[0]?.status, 200, result.text);
  });

  test('a framing error after the request was answered gets no second answer', async () => {
    // text/plain is refused (415) as soon as the headers arrive; the body's bad chunk comes after.
    const headers = `POST /api/v1/entities/get HTTP/1.1\r\n${HOST}\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n`;
    const socket = net.connect(running.port, '127.0.0.1');
    const answered = await exchange(running.port, [`${headers}2\r\nab\r\n`], {
      socket,
      until: (responses) => responses.length > 0,
    });
    assertRankdError(answered, 415, ErrorCode.UNSUPPORTED_MEDIA_TYPE);
    const rest = await exchange(running.port, ['zz\r\nxx\r\n0\r\n\r\n'], { socket });
    assert.ok(rest.closedByServer);
    assert.equal(rest.text, '', 'nothing more is written');
  });
});

describe('MAX_CONNECTIONS', () => {
  let running: RunningServer;
  before(async () => {
    ({ running } = await listening({ MAX_CONNECTIONS: '2' }));
  });
  after(async () => {
    await running?.close();
  });

  test('a connection past the limit is closed unanswered; the open ones keep working', async () => {
    const request = post([HOST, JSON_TYPE, length(GET_BODY.length)], GET_BODY);
    const answered = (responses: RawResponse[]) => responses.length > 0;
    const open = [net.connect(running.port, '127.0.0.1'), net.connect(running.port, '127.0.0.1')];
    try {
      for (const socket of open) {
        const first = await exchange(running.port, [request], { socket, until: answered });
        assert.equal(first.responses[0]?.status, 200, first.text);
      }
      const extra = await exchange(running.port, [request]);
      assert.ok(extra.closedByServer);
      assert.equal(extra.text, '', 'no answer on a refused connection');
      for (const socket of open) {
        const again = await exchange(running.port, [request], { socket, until: answered });
        assert.equal(again.responses[0]?.status, 200, again.text);
      }
    } finally {
      for (const socket of open) socket.destroy();
    }
  });
});

test('defaults: the Node server gets every limit', async () => {
  const server = await buildServer({ config: testConfig(redis) });
  try {
    const defaults = loadConfig({});
    const http = server.server;
    // The defaults the three timers had as settings of their own: 10 s, 60 s, 72 s.
    assert.equal(http.headersTimeout, 10_000);
    assert.equal(http.requestTimeout, defaults.REQUEST_TIMEOUT_MS);
    assert.equal(defaults.REQUEST_TIMEOUT_MS, 60_000);
    assert.equal(http.keepAliveTimeout, defaults.KEEP_ALIVE_TIMEOUT_MS);
    assert.equal(http.maxConnections, defaults.MAX_CONNECTIONS);
    assert.ok(
      http.requestTimeout > 0 && http.headersTimeout > 0 && http.headersTimeout <= http.requestTimeout,
    );
  } finally {
    await server.close();
  }
});

test('REQUEST_TIMEOUT_MS=0 turns off the headers and body idle limits with it', () => {
  const options = httpLimitOptions(loadConfig({ REQUEST_TIMEOUT_MS: '0' }));
  assert.equal(options.http.headersTimeout, 0);
  assert.equal(options.http.requestTimeout, 0);
  assert.equal(clientPauseLimitOf({ REQUEST_TIMEOUT_MS: 0 }), 0);
  assert.equal(clientPauseLimitOf({ REQUEST_TIMEOUT_MS: 60_000 }), 10_000);
});
