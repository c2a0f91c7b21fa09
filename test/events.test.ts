/**
 * Events: each kind with its fields (in the response and in the stream), which kinds reach the
 * sink, the stream written after the response and capped, a sink that is down or slow never
 * failing a request (drops counted, memory bounded), the file sink, flushing on close, and the
 * feedback route.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { logEvent } from '../src/index.js';
import type { RankdEvent } from '../src/server.js';
import { eventsServer, flushEvents, readEvents, readStream, streamLength } from './helpers/events-app.js';
import { freePort } from './helpers/free-port.js';
import { rawClient } from './helpers/ranking-app.js';
import { startTestRedis, type TestRedis } from './helpers/redis-server.js';
import { postJson } from './helpers/server.js';

let redis: TestRedis;
const servers: FastifyInstance[] = [];
const dirs: string[] = [];

before(async () => {
  redis = await startTestRedis();
});

after(async () => {
  for (const server of servers) await server.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  await redis?.stop();
});

async function serve(env: Record<string, string> = {}) {
  const started = await eventsServer(redis, env);
  servers.push(started.server);
  return { ...started, key: `${started.project}:events` };
}

const IDS = ['p01', 'p03', 'p06', 'p04', 'p07'];
/** By price, then BoostP03 lifts p03 to the top. */
const RANKED = ['p03', 'p07', 'p06', 'p04', 'p01'];
const price = (id: string) => Number(id.slice(1)) + 0.5;
const scoreOf = (id: string) => price(id) + (id === 'p03' ? 100 : 0);

function rank(server: FastifyInstance, body: Record<string, unknown> = {}, headers = {}) {
  return postJson(
    server,
    '/api/v1/ranking',
    {
      request_id: 'req-1',
      candidates: IDS.map((product_id) => ({ product_id })),
      user_page_size: 2,
      ...body,
    },
    headers,
  );
}

const ofType = (events: RankdEvent[], type: string) =>
  events.filter((e) => e.event_type === type).map((e) => e.event_data);

describe('each kind of event', () => {
  let events: RankdEvent[];

  before(async () => {
    const { server } = await serve();
    const res = await rank(server, { include_events: true }, { 'x-rankd-run-id': 'replay-7' });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    events = res.body.events;
  });

  test('every event has the predecessor’s envelope, with run_id from x-rankd-run-id', () => {
    assert.ok(events.length > 0);
    for (const event of events) {
      assert.deepEqual(Object.keys(event), [
        'request_id',
        'api_source',
        'event_timestamp',
        'event_type',
        'event_data',
        'run_id',
      ]);
      assert.equal(event.request_id, 'req-1');
      assert.equal(event.api_source, '/api/v1/ranking');
      assert.equal(event.run_id, 'replay-7');
      assert.ok(!Number.isNaN(Date.parse(event.event_timestamp)));
    }
  });

  test('FEATURE: per candidate, each feature the model declared, with its value (include_events returns them unsampled)', () => {
    const expected = IDS.flatMap((id) => [
      {
        feature_identifier: id,
        feature_identifier_type: 'product',
        feature_name: 'facts:price',
        feature_value: price(id),
      },
      {
        feature_identifier: id,
        feature_identifier_type: 'product',
        feature_name: 'facts:in_stock',
        feature_value: Number(id.slice(1)) % 2 === 0,
      },
    ]);
    assert.deepEqual(ofType(events, 'FEATURE'), expected);
  });

  test('MODEL: the score per entity with model_name and model_version', () => {
    assert.deepEqual(
      ofType(events, 'MODEL'),
      IDS.map((id) => ({
        model_name: 'PriceModel',
        model_version: '2.0',
        model_output: String(price(id)),
        entity_identifier: id,
        entity_identifier_type: 'product',
      })),
    );
  });

  test('BUSINESS_LOGIC: old and new score of each changed candidate', () => {
    assert.deepEqual(ofType(events, 'BUSINESS_LOGIC'), [
      {
        entity_identifier: 'p03',
        entity_identifier_type: 'product',
        business_logic_pipeline_order: 0,
        business_logic_name: 'BoostP03',
        old_score: '3.5',
        new_score: '103.5',
      },
    ]);
  });

  test('CANDIDATE: every candidate before pagination; IMPRESSION: the page, ordered within it', () => {
    assert.deepEqual(
      ofType(events, 'CANDIDATE'),
      RANKED.map((id, order) => ({
        entity_identifier: id,
        entity_identifier_type: 'product',
        candidate_score: scoreOf(id),
        candidate_order: order,
      })),
    );
    assert.deepEqual(
      ofType(events, 'IMPRESSION'),
      RANKED.slice(0, 2).map((id, order) => ({
        entity_identifier: id,
        entity_identifier_type: 'product',
        impression_score: scoreOf(id),
        impression_order: order,
      })),
    );
  });

  test('EXPERIMENTATION: the unit, the variant and how it was assigned', () => {
    const [assignment, ...more] = ofType(events, 'EXPERIMENTATION');
    assert.equal(more.length, 0);
    assert.ok(assignment);
    assert.equal(assignment.experiment_id, 'layout');
    assert.equal(assignment.entity_id, 'req-1');
    assert.ok(['grid', 'list'].includes(assignment.result as string));
    assert.equal(assignment.has_error, false);
    assert.ok(!Number.isNaN(Date.parse(assignment.timestamp as string)));
    assert.deepEqual(Object.keys(assignment.metadata as object).sort(), [
      'bucket',
      'provider',
      'unit',
      'unit_type',
    ]);
  });

  test('custom events logged with logEvent from pipeline code; built-in types are refused', () => {
    assert.deepEqual(ofType(events, 'MODEL_RAN'), [{ candidates: 5 }]);
    assert.throws(() => logEvent('IMPRESSION', {}), /built-in event type/);
    assert.throws(() => logEvent('no spaces', {}), /not an event type/);
  });

  test('order: EXPERIMENTATION, then the model’s custom event, FEATURE, MODEL, BUSINESS_LOGIC, CANDIDATE, IMPRESSION', () => {
    const order = [...new Set(events.map((e) => e.event_type))];
    assert.deepEqual(order, [
      'EXPERIMENTATION',
      'MODEL_RAN',
      'FEATURE',
      'MODEL',
      'BUSINESS_LOGIC',
      'CANDIDATE',
      'IMPRESSION',
    ]);
  });
});

describe('a single-entity pipeline', () => {
  test('sends its MODEL event to the stream, in the same shape as a ranking pipeline’s', async () => {
    const { server, key } = await serve();
    const res = await postJson(server, '/api/v1/price', {
      request_id: 'one-1',
      product: { product_id: 'p02' },
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body, { data: 2.5 });
    await flushEvents(server);
    const [entry] = await readStream(redis, key);
    const events = JSON.parse(entry?.fields.events ?? '[]') as unknown[];
    assert.deepEqual(
      events.filter((e) => (e as RankdEvent).event_type === 'MODEL').map((e) => JSON.stringify(e)),
      [
        '{"event_type":"MODEL","event_data":{"model_name":"PriceModel","model_version":"2.0","model_output":"2.5","entity_identifier":"p02","entity_identifier_type":"product"}}',
      ],
    );
  });
});

describe('an app event that is not JSON', () => {
  test('is left out of the response and the stream and counted as dropped; the request answers 200', async () => {
    const { server, key } = await serve();
    const res = await rank(server, {
      request_id: 'bigint-1',
      candidates: [{ product_id: 'p05' }],
      include_events: true,
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const types = (res.body.events as RankdEvent[]).map((e) => e.event_type);
    assert.ok(types.includes('MODEL_RAN') && !types.includes('NOT_JSON'), types.join());
    await flushEvents(server);
    const [entry] = await readStream(redis, key);
    assert.deepEqual(
      entry?.events.map((e) => e.event_type),
      types.filter((type) => type !== 'FEATURE'),
    );
    assert.equal(server.rankd.events.stats().dropped, 1);
  });
});

describe('the Redis stream', () => {
  test('written after the response: a request only queues its events; the flusher writes them as one entry', async () => {
    const { server, key } = await serve();
    const res = await rank(server, { request_id: 'after-1' });
    assert.equal(res.status, 200);
    assert.deepEqual(
      Object.keys(res.body),
      ['ranked_candidates'],
      'no events in the response without include_events',
    );
    // The flush interval is a minute and the batch is not full: nothing is in the stream yet.
    assert.equal(await streamLength(redis, key), 0);
    assert.equal(server.rankd.events.stats().pending, 1 + 1 + 5 + 1 + 5 + 2);
    await flushEvents(server);
    const entries = await readStream(redis, key);
    assert.equal(entries.length, 1);
    const [entry] = entries;
    // The envelope once, in fields of its own (no run_id: there was none), then the events.
    assert.deepEqual(Object.keys(entry?.fields ?? {}), [
      'request_id',
      'api_source',
      'event_timestamp',
      'events',
    ]);
    assert.equal(entry?.fields.request_id, 'after-1');
    assert.equal(entry?.fields.api_source, '/api/v1/ranking');
    // Default kinds: no FEATURE (sample rate 0 here); the custom event is CUSTOM.
    assert.deepEqual(
      entry?.events.map((e) => e.event_type),
      [
        'EXPERIMENTATION',
        'MODEL_RAN',
        ...Array(5).fill('MODEL'),
        'BUSINESS_LOGIC',
        ...Array(5).fill('CANDIDATE'),
        'IMPRESSION',
        'IMPRESSION',
      ],
    );
    assert.deepEqual(Object.keys(JSON.parse(entry?.fields.events ?? '[]')[0]), ['event_type', 'event_data']);
    assert.deepEqual(server.rankd.events.stats(), { written: 15, dropped: 0, failedBatches: 0, pending: 0 });
  });

  test('include_events does not change what the sink gets: FEATURE stays out when not sampled', async () => {
    const { server, key } = await serve();
    const res = await rank(server, { request_id: 'both', include_events: true });
    assert.ok(res.body.events.some((e: RankdEvent) => e.event_type === 'FEATURE'));
    await flushEvents(server);
    const types = (await readEvents(redis, key)).map((e) => e.event_type);
    assert.equal(types.length, 15);
    assert.ok(!types.includes('FEATURE'));
  });

  test('EVENTS_FEATURE_SAMPLE_RATE=1 sends every request’s FEATURE events; EVENTS_KINDS picks the rest', async () => {
    const { server, key } = await serve({ EVENTS_FEATURE_SAMPLE_RATE: '1', EVENTS_KINDS: 'IMPRESSION' });
    await rank(server, { request_id: 'sampled' });
    await flushEvents(server);
    const types = (await readEvents(redis, key)).map((e) => e.event_type);
    assert.deepEqual(types, [...Array(10).fill('FEATURE'), 'IMPRESSION', 'IMPRESSION']);
  });

  test('a full batch is written without waiting for the interval', async () => {
    const { server, key } = await serve({ EVENTS_BATCH_SIZE: '10', EVENTS_KINDS: 'CANDIDATE' });
    await rank(server, { request_id: 'b1' });
    await rank(server, { request_id: 'b2' });
    const deadline = Date.now() + 5000;
    while ((await streamLength(redis, key)) < 2 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 10));
    assert.equal((await readEvents(redis, key)).length, 10);
  });

  test('capped with MAXLEN ~: about EVENTS_STREAM_MAXLEN events, give or take one stream node', async () => {
    // Small nodes, so that `~` (which trims whole nodes) trims a stream this short at all.
    const client = await rawClient(redis);
    await client.configSet('stream-node-max-entries', '5');
    try {
      const { server, key } = await serve({ EVENTS_STREAM_MAXLEN: '150', EVENTS_BATCH_SIZE: '30' });
      for (let i = 0; i < 40; i++) assert.equal((await rank(server, { request_id: `cap-${i}` })).status, 200);
      await flushEvents(server);
      assert.equal(server.rankd.events.stats().written, 40 * 15);
      // 150 events of 15 per entry: MAXLEN ~ 10 entries, which `~` may exceed by up to a node (5).
      const length = await streamLength(redis, key);
      assert.ok(length >= 10 && length <= 15, `XLEN ${length}`);
      const entries = await readStream(redis, key);
      // Trimming drops the oldest: the newest requests are all there.
      assert.equal(entries.at(-1)?.fields.request_id, 'cap-39');
      assert.equal(entries.at(-1)?.events.length, 15);
    } finally {
      await client.configSet('stream-node-max-entries', '100');
      await client.close();
    }
  });

  test('the server flushes waiting events when it closes', async () => {
    const { server, key } = await serve();
    await rank(server, { request_id: 'on-close' });
    assert.equal(await streamLength(redis, key), 0);
    servers.splice(servers.indexOf(server), 1);
    await server.close();
    assert.equal((await readEvents(redis, key)).length, 15);
  });
});

describe('a sink that is down or slow', () => {
  test('an unreachable event Redis never fails a request; the bounded buffer drops whole requests and counts them', async () => {
    const closed = await freePort();
    const { server } = await serve({
      EVENTS_REDIS_URL: `redis://127.0.0.1:${closed}`,
      EVENTS_BUFFER_MAX: '40',
    });
    for (let i = 0; i < 5; i++) {
      const res = await rank(server, { request_id: `down-${i}` });
      assert.equal(res.status, 200);
      assert.deepEqual(
        res.body.ranked_candidates.map((r: { candidate_id: string }) => r.candidate_id),
        RANKED.slice(0, 2),
      );
    }
    // 15 events a request: two requests fit in 40, the other three are dropped whole.
    assert.deepEqual(server.rankd.events.stats(), { written: 0, dropped: 45, failedBatches: 0, pending: 30 });
  });

  test('an event Redis that dies: requests still answer 200, failed batches and drops are counted, memory stays bounded', async () => {
    const events = await startTestRedis();
    try {
      const { server, key } = await serve({ EVENTS_REDIS_URL: events.url, EVENTS_BUFFER_MAX: '100' });
      await rank(server, { request_id: 'alive' });
      await flushEvents(server);
      assert.equal(server.rankd.events.stats().written, 15);
      assert.equal((await readEvents(events, key)).length, 15);
      await events.kill();
      for (let i = 0; i < 20; i++)
        assert.equal((await rank(server, { request_id: `dead-${i}` })).status, 200);
      await server.rankd.events.flush();
      const stats = server.rankd.events.stats();
      assert.equal(stats.written, 15);
      assert.ok(stats.pending <= 100, `pending ${stats.pending}`);
      assert.equal(stats.written + stats.dropped + stats.pending, 21 * 15);
      assert.ok(stats.dropped >= 20 * 15 - 100);
    } finally {
      await events.stop();
    }
  });

  test('feedback answers 503 when the event Redis is down, as the caller must know', async () => {
    const closed = await freePort();
    const { server } = await serve({ EVENTS_REDIS_URL: `redis://127.0.0.1:${closed}` });
    const res = await postJson(server, '/api/v1/events/feedback', {
      events: [{ request_id: 'r', entity_id: 'p01', feedback_type: 'click' }],
    });
    assert.equal(res.status, 503);
    assert.equal(res.body.error_code, 'RANKD_REDIS_UNAVAILABLE');
  });
});

describe('other sinks', () => {
  test('EVENTS_SINK=file appends one JSON line per request (the stream entry’s fields), batched like the stream', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rankd-events-'));
    dirs.push(dir);
    const file = join(dir, 'events.jsonl');
    const { server, key } = await serve({ EVENTS_SINK: 'file', EVENTS_FILE: file });
    await rank(server, { request_id: 'f1' });
    await rank(server, { request_id: 'f2' });
    await server.rankd.events.flush();
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
    assert.equal(lines.length, 2);
    const records = lines.map((line) => JSON.parse(line));
    for (const record of records)
      assert.deepEqual(Object.keys(record), [
        'request_id',
        'api_source',
        'event_timestamp',
        'run_id',
        'events',
      ]);
    assert.deepEqual(
      records.map((r) => [r.request_id, r.run_id, r.events.length, r.events.at(-1).event_type]),
      [
        ['f1', null, 15, 'IMPRESSION'],
        ['f2', null, 15, 'IMPRESSION'],
      ],
    );
    assert.equal(await streamLength(redis, key), 0, 'nothing in the stream');
    const feedback = await postJson(server, '/api/v1/events/feedback', {
      events: [{ request_id: 'f1', entity_id: 'p03', feedback_type: 'purchase' }],
    });
    assert.deepEqual(feedback.body, { written: 1 });
    const last = JSON.parse(readFileSync(file, 'utf8').trimEnd().split('\n').at(-1) as string);
    assert.equal(last.api_source, '/api/v1/events/feedback');
    assert.equal(last.events[0].event_type, 'FEEDBACK');
  });

  test('EVENTS_SINK=off records nothing for the sink; include_events still works', async () => {
    const { server, key } = await serve({ EVENTS_SINK: 'off' });
    const res = await rank(server, { request_id: 'off', include_events: true });
    assert.equal(res.body.events.length, 25);
    await rank(server, { request_id: 'off-2' });
    await server.rankd.events.flush();
    assert.deepEqual(server.rankd.events.stats(), { written: 0, dropped: 0, failedBatches: 0, pending: 0 });
    assert.equal(await streamLength(redis, key), 0);
  });
});

describe('POST /api/v1/events/feedback', () => {
  let server: FastifyInstance;
  let key: string;

  before(async () => {
    ({ server, key } = await serve());
  });

  const feedback = (events: unknown[], headers = {}) =>
    postJson(server, '/api/v1/events/feedback', { events }, headers);

  test('writes FEEDBACK events to the stream at once, all of the batch', async () => {
    const res = await feedback(
      [
        { request_id: 'r1', entity_id: 'p03', feedback_type: 'click', timestamp: '2024-05-01T10:00:00Z' },
        {
          request_id: 'r1',
          entity_id: 7,
          entity_type: 'product',
          feedback_type: 'purchase',
          timestamp: 1714557600000,
          value: 19.9,
        },
        { request_id: 'r2', entity_id: 'q1', entity_type: 'query', feedback_type: 'dwell' },
      ],
      { 'x-rankd-run-id': 'run-9' },
    );
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body, { written: 3 });
    const entries = await readStream(redis, key);
    // The two reactions to r1 share an entry (they share an envelope); r2's has its own.
    assert.deepEqual(
      entries.map((e) => e.events.length),
      [2, 1],
    );
    const events = entries.flatMap((e) => e.events);
    assert.equal(events.length, 3);
    for (const event of events) {
      assert.equal(event.event_type, 'FEEDBACK');
      assert.equal(event.api_source, '/api/v1/events/feedback');
      assert.equal(event.run_id, 'run-9');
    }
    assert.deepEqual(
      events.map((e) => e.event_data),
      [
        {
          entity_identifier: 'p03',
          entity_identifier_type: 'product',
          feedback_type: 'click',
          timestamp: '2024-05-01T10:00:00.000Z',
          value: null,
        },
        {
          entity_identifier: '7',
          entity_identifier_type: 'product',
          feedback_type: 'purchase',
          timestamp: '2024-05-01T10:00:00.000Z',
          value: 19.9,
        },
        {
          entity_identifier: 'q1',
          entity_identifier_type: 'query',
          feedback_type: 'dwell',
          timestamp: events[2]?.event_timestamp,
          value: null,
        },
      ],
    );
  });

  test('bad input is a 422 naming each problem, and nothing of the batch is written', async () => {
    const before = await streamLength(redis, key);
    const good = { request_id: 'r3', entity_id: 'p01', feedback_type: 'click' };
    const cases: Array<[unknown[], RegExp]> = [
      [[good, { ...good, timestamp: 'yesterday' }], /events,1,timestamp/],
      [[good, { ...good, entity_type: 'planet' }], /events,1,entity_type/],
      [[good, { ...good, feedback_type: 'Click!' }], /events,1,feedback_type/],
      [[good, { entity_id: 'p01', feedback_type: 'click' }], /events,1/],
      [[good, { ...good, extra: 1 }], /events,1/],
      [[], /events/],
      [Array(1001).fill(good), /events/],
    ];
    for (const [events, where] of cases) {
      const res = await feedback(events);
      assert.equal(res.status, 422, JSON.stringify(events).slice(0, 200));
      assert.equal(res.body.error_code, 'RANKD_VALIDATION');
      assert.match(res.body.detail.map((p: { loc: unknown[] }) => p.loc.join(',')).join(' '), where);
    }
    assert.equal(await streamLength(redis, key), before);
  });

  test('an entity id with an unpaired surrogate is a 422 naming it, with upload’s message; nothing written', async () => {
    // In UTF-8 every unpaired surrogate is U+FFFD: the event would name another entity.
    const upload = await postJson(server, '/api/v1/entities/upload', {
      entity_type: 'product',
      entities: [{ product_id: '\ud800SURR' }],
    });
    assert.equal(upload.status, 422, JSON.stringify(upload.body));
    const { msg, type } = upload.body.detail[0];
    const before = await streamLength(redis, key);
    const good = { request_id: 'r4', entity_id: 'p01', feedback_type: 'click' };
    const res = await feedback([
      good,
      { ...good, entity_id: 'p\udc1e' },
      good,
      { ...good, entity_id: '\udbff' },
    ]);
    assert.equal(res.status, 422, JSON.stringify(res.body));
    assert.equal(res.body.error_code, 'RANKD_VALIDATION');
    assert.deepEqual(res.body.detail, [
      { loc: ['body', 'events', 1, 'entity_id'], msg, type },
      { loc: ['body', 'events', 3, 'entity_id'], msg, type },
    ]);
    await server.rankd.events.flush();
    assert.equal(await streamLength(redis, key), before);
    // A pair (an emoji) is ordinary text.
    const pair = await feedback([{ ...good, entity_id: 'candle\ud83d\udd6f' }]);
    assert.deepEqual(pair.body, { written: 1 });
  });

  test('a ranking request with such an id is refused before it runs: no event reaches the stream', async () => {
    await server.rankd.events.flush();
    const before = await streamLength(redis, key);
    const res = await rank(server, {
      request_id: 'surrogate',
      candidates: [{ product_id: 'p01' }, { product_id: '\ud800SURR' }],
    });
    assert.equal(res.status, 422, JSON.stringify(res.body));
    assert.deepEqual(
      res.body.detail.map((p: { loc: unknown[] }) => p.loc),
      [['body', 'candidates', 1, 'product_id']],
    );
    await new Promise((resolve) => setImmediate(resolve));
    await server.rankd.events.flush();
    assert.equal(await streamLength(redis, key), before);
  });

  test('documented in /openapi.json with its errors', async () => {
    const doc = (await server.inject({ method: 'GET', url: '/openapi.json' })).json();
    const op = doc.paths['/api/v1/events/feedback']?.post;
    assert.ok(op?.summary);
    assert.equal(op.operationId, 'events_feedback');
    for (const status of ['200', '422', '503']) assert.ok(op.responses[status], status);
  });
});
