/**
 * Admission control (docs/reference/configuration.md, "Admission control"): a cost per request,
 * worked out before any work starts; a bound on the work in flight with room kept for cheap
 * requests; expensive requests that wait, then are refused with 503 `RANKD_OVERLOADED` and
 * `Retry-After`, while cheap ones are served; per-key shares (429); refusals that write nothing;
 * and the metrics that count them. Nothing here asserts how long anything took: requests are held
 * in flight by a route that waits for the test to let it go.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, afterEach, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { ErrorCode } from '../src/errors/index.js';
import { AdmissionControl, AdmissionTicket, type ShedReason } from '../src/http/admission-control.js';
import { BASE_COST, EXPENSIVE_COST, requestCost } from '../src/http/admission-cost.js';
import { buildServer } from '../src/http/build-server.js';
import { type RunningServer, startServer } from '../src/http/start-server.js';
import { parsePrometheus, sampleValue } from './helpers/prometheus.js';
import { RawRedis } from './helpers/raw-redis.js';
import { startTestRedis, type TestRedis } from './helpers/redis-server.js';
import { testConfig } from './helpers/server.js';

/** The spec's example request: 24 candidates, a page of 8. */
const SPEC_EXAMPLE = {
  request_id: 'r1',
  query: { query: 'candle' },
  candidates: Array.from({ length: 24 }, (_, i) => ({ product_id: `p${i}` })),
  user_page_size: 8,
};
/** The most expensive ranking request there is: 1000 candidates, explain, events, a page of 100. */
const HEAVIEST = {
  ...SPEC_EXAMPLE,
  candidates: Array.from({ length: 1000 }, (_, i) => ({ product_id: `p${i}` })),
  explain: true,
  include_events: true,
  user_page_size: 100,
};
/** A guard so that a server that never answers fails the test instead of hanging it. */
const WATCHDOG_MS = 20_000;
const bytes = (body: unknown) => Buffer.byteLength(JSON.stringify(body));

describe('the cost of a request', () => {
  test('the spec example is cheap, the heaviest ranking is expensive', () => {
    assert.ok(requestCost(SPEC_EXAMPLE, bytes(SPEC_EXAMPLE)) < EXPENSIVE_COST);
    assert.ok(requestCost(HEAVIEST, bytes(HEAVIEST)) >= EXPENSIVE_COST);
    // A plain 1000-candidate ranking (the rank benchmark's case b) stays cheap.
    const plain = { ...HEAVIEST, explain: false, include_events: false };
    assert.ok(requestCost(plain, bytes(plain)) < EXPENSIVE_COST);
  });

  test('each of candidates, include_events, explain, page size and body size adds to it', () => {
    const base = { candidates: Array.from({ length: 100 }, () => ({ product_id: 'p' })), user_page_size: 10 };
    const cost = (body: Record<string, unknown>, size = 1000) => requestCost(body, size);
    const plain = cost(base);
    assert.ok(cost({ ...base, candidates: [...base.candidates, { product_id: 'q' }] }) > plain);
    assert.ok(cost({ ...base, include_events: true }) > plain);
    assert.ok(cost({ ...base, explain: true }) > plain);
    assert.ok(cost({ ...base, explain: true, user_page_size: 50 }) > cost({ ...base, explain: true }));
    assert.ok(cost(base, 1_000_000) > plain);
    // include_events is the heaviest: every candidate's events are in the answer.
    assert.ok(cost({ ...base, include_events: true }) - plain > cost({ ...base, explain: true }) - plain);
  });

  test('a body that is not a ranking request costs the base and its size', () => {
    assert.equal(requestCost(undefined, 0), BASE_COST);
    assert.equal(requestCost({ entity_type: 'product', entity_ids: ['a'] }, 0), BASE_COST);
    assert.equal(requestCost({ entities: [] }, 10 * 1024 * 1024), BASE_COST + 10 * 1024);
    // Fields of the wrong type (a body that validation would refuse) count as absent.
    assert.equal(requestCost({ candidates: 'x', explain: 'yes' }, 0), BASE_COST);
  });
});

describe('AdmissionControl', () => {
  /** A control with a settable loop delay and a record of refusals. */
  function control(options: { budget?: number; keyShare?: number; maxWaitMs?: number } = {}) {
    const loopDelay = { recentMs: 0 };
    const shed: ShedReason[] = [];
    const admission = new AdmissionControl({
      budget: options.budget ?? 100_000,
      keyShare: options.keyShare ?? 1,
      loopDelay,
      onShed: (reason) => shed.push(reason),
      maxWaitMs: options.maxWaitMs ?? 50,
    });
    return { admission, loopDelay, shed };
  }
  const EXPENSIVE = 11_000;
  const CHEAP = 125;

  test('cheap requests are let in while an expensive one runs; a second expensive one waits its turn', async () => {
    const { admission } = control({ maxWaitMs: 5000 });
    const heavy = admission.admit(EXPENSIVE, undefined);
    assert.ok(heavy instanceof AdmissionTicket);
    const cheap = admission.admit(CHEAP, undefined);
    assert.ok(cheap instanceof AdmissionTicket);
    const next = admission.admit(EXPENSIVE, undefined);
    assert.ok(next instanceof Promise, 'a second expensive request waits');
    assert.equal(admission.stats().waiting, 1);
    cheap.release();
    heavy.release();
    // Cheap requests were served beside the first: the second starts once the lane has rested.
    const ticket = await next;
    assert.ok(ticket.expensive);
    assert.deepEqual(admission.stats(), {
      cheapCost: 0,
      expensiveCost: EXPENSIVE,
      waiting: 0,
      loopDelayMs: 0,
    });
    ticket.release();
    ticket.release();
    assert.equal(admission.stats().expensiveCost, 0, 'a second release gives nothing back twice');
    admission.close();
  });

  test('an expensive request that finds no room within the wait is refused with 503 and Retry-After', async () => {
    const { admission, shed } = control();
    const heavy = admission.admit(EXPENSIVE, undefined) as AdmissionTicket;
    admission.admit(CHEAP, undefined);
    await assert.rejects(Promise.resolve(admission.admit(EXPENSIVE, undefined)), (error: Error) => {
      const refused = error as Error & { statusCode: number; code: string; headers: Record<string, string> };
      assert.equal(refused.statusCode, 503);
      assert.equal(refused.code, ErrorCode.OVERLOADED);
      assert.match(refused.headers['retry-after'] ?? '', /^[1-9]\d*$/);
      return true;
    });
    assert.deepEqual(shed, ['expensive_wait']);
    assert.equal(admission.stats().waiting, 0);
    heavy.release();
    admission.close();
  });

  test('while the event loop lags no expensive request starts; cheap ones still do', async () => {
    const { admission, loopDelay, shed } = control();
    loopDelay.recentMs = 500;
    assert.ok(admission.admit(CHEAP, undefined) instanceof AdmissionTicket);
    await assert.rejects(Promise.resolve(admission.admit(EXPENSIVE, undefined)), {
      code: ErrorCode.OVERLOADED,
    });
    assert.deepEqual(shed, ['loop_delay']);
    loopDelay.recentMs = 0;
    const ticket = admission.admit(EXPENSIVE, undefined);
    assert.ok(ticket instanceof AdmissionTicket, 'once the loop keeps time again, it starts at once');
    admission.close();
  });

  test('without cheap requests, expensive ones share their part of the budget', async () => {
    const { admission } = control({ budget: 100_000 });
    // The expensive part is a fifth: 20,000.
    const first = admission.admit(9000, undefined);
    const second = admission.admit(9000, undefined);
    assert.ok(first instanceof AdmissionTicket && second instanceof AdmissionTicket);
    const third = admission.admit(9000, undefined);
    assert.ok(third instanceof Promise, 'a third would go past the part');
    admission.close();
    await assert.rejects(third, { code: ErrorCode.OVERLOADED }, 'closing refuses the waiting ones');
  });

  test('an expensive request larger than the whole budget still runs alone', () => {
    const { admission } = control({ budget: 1000 });
    assert.ok(admission.admit(EXPENSIVE, undefined) instanceof AdmissionTicket);
    admission.close();
  });

  test('a full budget refuses cheap requests at once (503), except the first', () => {
    const { admission, shed } = control({ budget: 300 });
    const first = admission.admit(250, undefined);
    assert.ok(first instanceof AdmissionTicket);
    assert.throws(
      () => admission.admit(CHEAP, undefined),
      (error: Error & { statusCode?: number }) => {
        assert.equal(error.statusCode, 503);
        return true;
      },
    );
    assert.deepEqual(shed, ['budget']);
    first.release();
    assert.ok(admission.admit(CHEAP, undefined) instanceof AdmissionTicket);
    admission.close();
  });

  test('room is kept for cheap requests: expensive ones take at most their part of it', () => {
    const { admission } = control({ budget: 10_000 });
    // Alone, larger than its part (2,000): it runs, and is charged to cheap requests only up to its part.
    const heavy = admission.admit(5000, undefined) as AdmissionTicket;
    const held: AdmissionTicket[] = [];
    for (let i = 0; i < 8000 / 100; i++) held.push(admission.admit(100, undefined) as AdmissionTicket);
    assert.throws(() => admission.admit(100, undefined), { code: ErrorCode.OVERLOADED });
    for (const ticket of held) ticket.release();
    heavy.release();
    admission.close();
  });

  test('with a key share, a key that holds its share gets 429; other keys and a key alone do not', () => {
    const { admission, shed } = control({ budget: 1000, keyShare: 0.5 });
    const a = admission.admit(400, 'a') as AdmissionTicket;
    assert.throws(
      () => admission.admit(200, 'a'),
      (error: Error & { statusCode?: number; code?: string }) => {
        assert.equal(error.statusCode, 429);
        assert.equal(error.code, ErrorCode.KEY_SHARE_EXCEEDED);
        return true;
      },
    );
    assert.ok(admission.admit(400, 'b') instanceof AdmissionTicket);
    assert.deepEqual(shed, ['key_share']);
    a.release();
    assert.ok(
      admission.admit(200, 'a') instanceof AdmissionTicket,
      'once its request ended, the key has room again',
    );
    admission.close();
  });

  test('a key with nothing in flight is let in whatever its share, and its expensive requests have their own share', () => {
    const { admission } = control({ budget: 100_000, keyShare: 0.25 });
    // Over a quarter of the budget, but the key holds nothing yet.
    const big = admission.admit(EXPENSIVE, 'a');
    assert.ok(big instanceof AdmissionTicket);
    // A quarter of the expensive part (5,000) is held already: the key's next expensive one is refused.
    assert.throws(() => admission.admit(EXPENSIVE, 'a'), { code: ErrorCode.KEY_SHARE_EXCEEDED });
    admission.close();
  });
});

describe('admission control over HTTP', () => {
  let redis: TestRedis;
  const servers: FastifyInstance[] = [];
  /** Requests held in flight by `/test/hold` until the test lets them go. */
  const holds: Array<() => void> = [];

  before(async () => {
    redis = await startTestRedis();
  });
  // A test that failed half-way leaves its requests held: the next one starts with none.
  afterEach(() => {
    for (const release of holds.splice(0)) release();
  });
  after(async () => {
    await Promise.all(servers.map((server) => server.close()));
    await redis?.stop();
  });

  /** A server whose `POST /test/hold` stays in flight until released; its cost is its body's. */
  async function serverWith(env: Record<string, string>): Promise<FastifyInstance> {
    const server = await buildServer({
      config: testConfig(redis, env),
      extraRoutes: (s) => {
        s.post('/test/hold', async () => {
          await new Promise<void>((resolve) => holds.push(resolve));
          return { held: true };
        });
      },
    });
    servers.push(server);
    if (!(await server.rankd.redis.waitUntilReady(5000))) throw new Error('server did not connect to Redis');
    return server;
  }

  const post = (
    server: FastifyInstance,
    url: string,
    body: unknown,
    headers: Record<string, string> = {},
  ) => {
    const options: InjectOptions = {
      method: 'POST',
      url,
      payload: JSON.stringify(body),
      headers: { 'content-type': 'application/json', ...headers },
    };
    return server.inject(options);
  };
  const metric = async (server: FastifyInstance, name: string, labels: Record<string, string> = {}) =>
    sampleValue(
      parsePrometheus((await server.inject({ method: 'GET', url: '/metrics' })).body).samples,
      name,
      labels,
    );
  /** Waits until `check()` is true; a guard fails the test instead of hanging it when it never is. */
  const until = async (check: () => boolean | Promise<boolean>, what: string) => {
    const deadline = Date.now() + WATCHDOG_MS;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`never happened: ${what}`);
      await sleep(5);
    }
  };
  /** Waits until `count` requests are held by the route (admitted and running). */
  const held = (count: number) => until(() => holds.length >= count, `${count} request(s) held`);

  test('with an expensive request in flight, another gets 503 RANKD_OVERLOADED with Retry-After; cheap ones are served', async () => {
    const server = await serverWith({});
    const first = post(server, '/test/hold', HEAVIEST);
    await held(1);
    assert.equal(
      await metric(server, 'rankd_admission_cost_in_flight', { class: 'expensive' }),
      requestCost(HEAVIEST, bytes(HEAVIEST)),
    );
    // A cheap request beside it: served.
    const cheap = await post(server, '/api/v1/entities/get', { entity_type: 'product', entity_ids: ['p1'] });
    assert.equal(cheap.statusCode, 200);
    // A second expensive one: waits, finds no room, and is refused.
    const second = await post(server, '/test/hold', HEAVIEST);
    assert.equal(second.statusCode, 503);
    assert.equal(second.json().error_code, ErrorCode.OVERLOADED);
    assert.match(String(second.json().detail), /Retry after \d+ s/);
    assert.match(second.headers['retry-after'] as string, /^[1-9]\d*$/);
    assert.equal(holds.length, 1, 'the refused request never reached its handler');
    assert.equal(await metric(server, 'rankd_requests_shed_total', { reason: 'expensive_wait' }), 1);
    holds.shift()?.();
    assert.equal((await first).statusCode, 200);
    assert.equal(await metric(server, 'rankd_admission_cost_in_flight', { class: 'expensive' }), 0);
  });

  test('a waiting expensive request starts when the one in flight ends', async () => {
    const server = await serverWith({});
    const first = post(server, '/test/hold', HEAVIEST);
    await held(1);
    // No cheap request meanwhile: the lane needs no rest, only room.
    const second = post(server, '/test/hold', HEAVIEST);
    await until(async () => (await metric(server, 'rankd_admission_waiting')) === 1, 'one request waiting');
    holds.shift()?.();
    assert.equal((await first).statusCode, 200);
    await held(1);
    holds.shift()?.();
    assert.equal((await second).statusCode, 200);
  });

  test('a refused upload writes nothing: an expensive one while the lane is taken, a cheap one with the budget full', async () => {
    // The expensive part is 400, so the room of cheap requests beside an expensive one is 1,600.
    const server = await serverWith({ ADMISSION_BUDGET: '2000', MAX_BATCH: '2000' });
    // A big upload (2.5 MB: expensive by its size) while an expensive request is in flight.
    const entities = Array.from({ length: 1500 }, (_, i) => ({
      product_id: `big${i}`,
      title: 'x'.repeat(1700),
    }));
    const hold = post(server, '/test/hold', HEAVIEST);
    await held(1);
    const big = await post(server, '/api/v1/entities/upload', { entity_type: 'product', entities });
    assert.equal(big.statusCode, 503);
    assert.equal(big.json().error_code, ErrorCode.OVERLOADED);
    // A cheap request holding most of the budget: the next cheap one finds it full.
    const cheapHold = post(server, '/test/hold', {
      candidates: Array.from({ length: 1550 }, () => ({})),
    });
    await held(2);
    const small = await post(server, '/api/v1/entities/upload', {
      entity_type: 'product',
      entities: [{ product_id: 'small1', title: 'x' }],
    });
    assert.equal(small.statusCode, 503);
    assert.equal(small.json().error_code, ErrorCode.OVERLOADED);
    assert.match(small.headers['retry-after'] as string, /^[1-9]\d*$/);
    assert.equal(await metric(server, 'rankd_requests_shed_total', { reason: 'budget' }), 1);
    for (const release of holds.splice(0)) release();
    await Promise.all([hold, cheapHold]);
    // Nothing in this file writes to Redis but those two uploads (and /test/hold writes no event).
    const raw = await RawRedis.connect(redis);
    try {
      assert.equal(await raw.dbSize(), 0, 'nothing was written');
    } finally {
      await raw.close();
    }
  });

  test('per-key share: a key past its share gets 429 RANKD_KEY_SHARE_EXCEEDED; another key is served', async () => {
    const server = await serverWith({
      API_KEYS: 'k1,k2',
      ADMISSION_BUDGET: '1000',
      ADMISSION_KEY_SHARE: '0.5',
    });
    const hold = post(
      server,
      '/test/hold',
      { candidates: Array.from({ length: 300 }, () => ({})) },
      { 'x-api-key': 'k1' },
    );
    await held(1);
    const again = await post(
      server,
      '/api/v1/entities/get',
      { entity_type: 'product', entity_ids: ['p1'] },
      { 'x-api-key': 'k1' },
    );
    assert.equal(again.statusCode, 429);
    assert.equal(again.json().error_code, ErrorCode.KEY_SHARE_EXCEEDED);
    assert.match(again.headers['retry-after'] as string, /^[1-9]\d*$/);
    const other = await post(
      server,
      '/api/v1/entities/get',
      { entity_type: 'product', entity_ids: ['p1'] },
      { 'x-api-key': 'k2' },
    );
    assert.equal(other.statusCode, 200);
    const metrics = await server.inject({ method: 'GET', url: '/metrics', headers: { 'x-api-key': 'k2' } });
    assert.equal(
      sampleValue(parsePrometheus(metrics.body).samples, 'rankd_requests_shed_total', {
        reason: 'key_share',
      }),
      1,
    );
    holds.shift()?.();
    assert.equal((await hold).statusCode, 200);
  });

  test('a request whose client leaves gives its room back', async () => {
    const server = await serverWith({});
    const running: RunningServer = await startServer(server, {
      port: 0,
      host: '127.0.0.1',
      shutdownTimeoutMs: 1000,
    });
    const body = JSON.stringify(HEAVIEST);
    const socket = net.connect(running.port, '127.0.0.1');
    socket.on('error', () => undefined);
    socket.write(
      `POST /test/hold HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    await held(1);
    socket.destroy();
    while ((await metric(server, 'rankd_admission_cost_in_flight', { class: 'expensive' })) !== 0)
      await sleep(5);
    holds.shift()?.();
  });

  test('health, docs and the console are never subject to it', async () => {
    const server = await serverWith({ ADMISSION_BUDGET: '1' });
    const hold = post(server, '/test/hold', {});
    await held(1);
    for (const url of ['/healthcheck', '/openapi.json', '/console'])
      assert.equal((await server.inject({ method: 'GET', url })).statusCode, 200, url);
    holds.shift()?.();
    await hold;
  });

  test('ADMISSION_BUDGET=0 turns it off', async () => {
    const server = await serverWith({ ADMISSION_BUDGET: '0' });
    const first = post(server, '/test/hold', HEAVIEST);
    const second = post(server, '/test/hold', HEAVIEST);
    await held(2);
    for (const release of holds.splice(0)) release();
    assert.deepEqual([(await first).statusCode, (await second).statusCode], [200, 200]);
    assert.match(
      (await server.inject({ method: 'GET', url: '/metrics' })).body,
      /^(?![\s\S]*rankd_requests_shed_total)/,
    );
  });
});
