/**
 * Tracing: with OTEL_EXPORTER set (not off) a request makes a server span and one child span per pipeline
 * stage (joined to the caller's trace by `traceparent`); with it off (the default) no
 * OpenTelemetry module other than the API is even loaded, checked in a child process whose
 * module loader records what it resolves.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace';
import type { FastifyInstance } from 'fastify';
import { buildServer } from '../src/http/build-server.js';
import { PIPELINE_STAGES } from '../src/request/stage-timing.js';
import { OBSERVED_PIPELINE, observedApp, observedProducts, rankingBody } from './helpers/observed-app.js';
import { startTestRedis, type TestRedis } from './helpers/redis-server.js';
import { postJson, testConfig } from './helpers/server.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';

/** Nanoseconds since the epoch of an OpenTelemetry time. */
const nanos = ([seconds, nanoseconds]: [number, number]) =>
  BigInt(seconds) * 1_000_000_000n + BigInt(nanoseconds);

let redis: TestRedis;

before(async () => {
  redis = await startTestRedis();
});

after(async () => {
  await redis?.stop();
});

describe('tracing on (OTEL_EXPORTER=console)', () => {
  let server: FastifyInstance;
  const exporter = new InMemorySpanExporter();

  before(async () => {
    server = await buildServer({
      config: testConfig(redis, { OTEL_EXPORTER: 'console' }),
      app: observedApp,
      spanExporter: exporter,
    });
    assert.ok(await server.rankd.redis.waitUntilReady(5000));
    await postJson(server, '/api/v1/entities/upload', {
      entity_type: 'product',
      entities: observedProducts(4),
    });
  });

  after(async () => {
    await server?.close();
  });

  test("a ranking request: a server span in the caller's trace, and one child span per stage", async () => {
    exporter.reset();
    const res = await server.inject({
      method: 'POST',
      url: '/api/v1/ranking',
      payload: rankingBody(4),
      headers: { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01`, 'x-request-id': 'traced-1' },
    });
    assert.equal(res.statusCode, 200, res.body);
    const spans: ReadableSpan[] = exporter.getFinishedSpans();
    const request = spans.find((span) => span.name === 'POST /api/v1/ranking');
    assert.ok(request, `spans: ${spans.map((s) => s.name).join(', ')}`);
    assert.equal(request.spanContext().traceId, CALLER_TRACE);
    assert.equal(request.parentSpanContext?.spanId, CALLER_SPAN);
    assert.equal(request.attributes['http.route'], '/api/v1/ranking');
    assert.equal(request.attributes['http.response.status_code'], 200);
    assert.equal(request.attributes['rankd.request_id'], 'traced-1');
    for (const stage of PIPELINE_STAGES) {
      const span = spans.find((s) => s.name === stage);
      assert.ok(span, `a span for ${stage}`);
      assert.equal(span.spanContext().traceId, CALLER_TRACE, stage);
      assert.equal(span.parentSpanContext?.spanId, request.spanContext().spanId, stage);
      assert.equal(span.attributes['rankd.pipeline'], OBSERVED_PIPELINE);
      // Within the request's span (1 µs of slack for rounding to nanoseconds).
      assert.ok(nanos(span.startTime) >= nanos(request.startTime) - 1000n, `${stage} starts inside`);
      assert.ok(nanos(span.endTime) <= nanos(request.endTime) + 1000n, `${stage} ends inside`);
      assert.ok(nanos(span.endTime) >= nanos(span.startTime), `${stage} has a duration`);
    }
    const model = spans.find((s) => s.name === 'model');
    const logic = spans.find((s) => s.name === 'business_logic');
    assert.ok(
      model && logic && nanos(logic.startTime) >= nanos(model.endTime) - 1000n,
      'stages follow each other',
    );
  });

  test('a request without traceparent starts a trace; a 503 marks its span as an error', async () => {
    exporter.reset();
    assert.equal((await server.inject({ method: 'GET', url: '/healthcheck' })).statusCode, 200);
    const [health] = exporter.getFinishedSpans();
    assert.equal(health?.name, 'GET /healthcheck');
    assert.equal(health?.parentSpanContext, undefined);
    assert.notEqual(health?.spanContext().traceId, CALLER_TRACE);

    exporter.reset();
    await redis.kill();
    try {
      const res = await postJson(server, '/api/v1/entities/get', {
        entity_type: 'product',
        entity_ids: ['p1'],
      });
      assert.equal(res.status, 503);
    } finally {
      await redis.restart();
    }
    const [failed] = exporter.getFinishedSpans();
    assert.equal(failed?.attributes['http.response.status_code'], 503);
    assert.equal(failed?.status.code, 2, 'SpanStatusCode.ERROR');
  });
});

test("OTEL_EXPORTER=<a receiver's URL>: spans are POSTed to <it>/v1/traces (at the latest on close)", async () => {
  const received: Array<{ url: string; body: string }> = [];
  const collector = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', () => {
      received.push({ url: req.url ?? '', body });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  collector.listen(0, '127.0.0.1');
  await once(collector, 'listening');
  const address = collector.address();
  assert.ok(address !== null && typeof address === 'object');
  try {
    const server = await buildServer({
      config: testConfig(redis, {
        OTEL_EXPORTER: `http://127.0.0.1:${address.port}/`,
        PROJECT_NAME: 'ranker-under-test',
      }),
    });
    assert.equal((await server.inject({ method: 'GET', url: '/healthcheck' })).statusCode, 200);
    await server.close();
    assert.equal(received.length, 1, 'one batch');
    assert.equal(received[0]?.url, '/v1/traces');
    assert.match(received[0]?.body ?? '', /GET \/healthcheck/);
    assert.match(received[0]?.body ?? '', /ranker-under-test/);
  } finally {
    collector.close();
  }
});

describe('OTEL_EXPORTER=off (the default)', () => {
  /** Runs the probe in a child process and returns the OpenTelemetry modules it loaded. */
  function loadedModules(env: Record<string, string>): string[] {
    const dir = mkdtempSync(join(tmpdir(), 'rankd-otel-probe-'));
    const file = join(dir, 'loaded.txt');
    writeFileSync(file, '');
    try {
      const child = spawnSync(
        process.execPath,
        [
          '--import',
          'tsx',
          '--import',
          './test/helpers/record-otel-imports.mjs',
          'test/helpers/otel-probe.ts',
        ],
        {
          cwd: ROOT,
          env: { ...process.env, ...env, REDIS_URL: redis.url, RANKD_PROBE_FILE: file },
          encoding: 'utf8',
          timeout: 60_000,
        },
      );
      assert.equal(child.status, 0, `probe failed:\n${child.stderr}`);
      return readFileSync(file, 'utf8').split('\n').filter(Boolean);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  test('serving a ranking request loads no OpenTelemetry module but the API', () => {
    const loaded = loadedModules({});
    const beyondApi = loaded.filter((path) => !/\/@opentelemetry\/api\//.test(path));
    assert.deepEqual(beyondApi, []);
  });

  test('the probe does see the SDK when tracing is on (so the check above can fail)', () => {
    const loaded = loadedModules({ OTEL_EXPORTER: 'console' });
    assert.ok(
      loaded.some((path) => path.includes('/@opentelemetry/sdk-trace/')),
      `loaded: ${loaded.join('\n')}`,
    );
  });
});
