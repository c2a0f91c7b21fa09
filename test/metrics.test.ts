/**
 * `GET /metrics`: after real traffic (index upload and get, ranking requests, a 404, a 422, and a
 * 503 with Redis killed) every series is there with the right labels and counts; route labels are
 * patterns; the Redis error counter counts the outage. Also METRICS_ACCESS (key, public, off, and
 * a port of its own served by `rankd run` alone and with workers, where the primary sums the
 * workers' metrics), the event and model-reload hooks, and that rankd's fast histogram
 * renders exactly what prom-client's own would.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { Histogram, Registry } from 'prom-client';
import { loadConfig, metricsPortOf } from '../src/config/index.js';
import { defineApp, defineRankingPipeline, linearModel } from '../src/index.js';
import { FastHistogram } from '../src/observability/histogram.js';
import { type RankdMetrics, renderSummed } from '../src/observability/metrics.js';
import { reportModelReload } from '../src/observability/model-reloads.js';
import { PIPELINE_STAGES } from '../src/request/stage-timing.js';
import { killServices, startCliService } from './helpers/cli-service.js';
import { freePort } from './helpers/free-port.js';
import { OBSERVED_PIPELINE, observedApp, observedProducts, rankingBody } from './helpers/observed-app.js';
import { find, type PromSample, parsePrometheus, sampleValue } from './helpers/prometheus.js';
import { TemplateProduct } from './helpers/ranking-app.js';
import { startTestRedis, type TestRedis } from './helpers/redis-server.js';
import { postJson, testServer } from './helpers/server.js';

const CANDIDATES = 12;
const RANKINGS = 3;

async function scrape(
  server: FastifyInstance,
): Promise<{ samples: PromSample[]; types: Map<string, string> }> {
  const res = await server.inject({ method: 'GET', url: '/metrics' });
  assert.equal(res.statusCode, 200, res.body);
  assert.match(String(res.headers['content-type']), /^text\/plain; version=0\.0\.4/);
  return parsePrometheus(res.body);
}

const requests = (samples: PromSample[], route: string, method: string, status: number) =>
  sampleValue(samples, 'rankd_http_requests_total', { route, method, status: String(status) });

describe('after traffic', () => {
  let redis: TestRedis;
  let server: FastifyInstance;
  let samples: PromSample[];
  let types: Map<string, string>;

  before(async () => {
    redis = await startTestRedis();
    server = await testServer(redis, { app: observedApp });
    const upload = await postJson(server, '/api/v1/entities/upload', {
      entity_type: 'product',
      entities: observedProducts(CANDIDATES),
    });
    assert.equal(upload.status, 200);
    for (let i = 0; i < 2; i++) {
      const got = await postJson(server, '/api/v1/entities/get', {
        entity_type: 'product',
        entity_ids: ['p1'],
      });
      assert.equal(got.status, 200);
    }
    for (let i = 0; i < RANKINGS; i++) {
      const ranked = await postJson(server, '/api/v1/ranking', rankingBody(CANDIDATES, `r${i}`));
      assert.equal(ranked.status, 200, JSON.stringify(ranked.body));
    }
    assert.equal((await server.inject({ method: 'GET', url: '/no/such/route/42' })).statusCode, 404);
    assert.equal((await server.inject({ method: 'GET', url: '/no/such/route/43?x=1' })).statusCode, 404);
    const invalid = await postJson(server, '/api/v1/entities/get', { entity_type: 'product' });
    assert.equal(invalid.status, 422);
    ({ samples, types } = await scrape(server));
  });

  after(async () => {
    await server?.close();
    await redis?.stop();
  });

  test('requests are counted by route pattern, method and status; 404s under route="unknown"', () => {
    assert.equal(requests(samples, '/api/v1/entities/upload', 'POST', 200), 1);
    assert.equal(requests(samples, '/api/v1/entities/get', 'POST', 200), 2);
    assert.equal(requests(samples, '/api/v1/entities/get', 'POST', 422), 1);
    assert.equal(requests(samples, '/api/v1/ranking', 'POST', 200), RANKINGS);
    assert.equal(requests(samples, 'unknown', 'GET', 404), 2);
    assert.equal(types.get('rankd_http_requests_total'), 'counter');
    // Never a raw URL: every route label is a registered pattern or "unknown".
    const routes = new Set(find(samples, 'rankd_http_requests_total').map((s) => s.labels.route));
    for (const route of routes) assert.doesNotMatch(String(route), /no\/such|\?/);
  });

  test('the latency histogram has one series per request series, cumulative buckets, and +Inf = count', () => {
    assert.equal(types.get('rankd_http_request_duration_seconds'), 'histogram');
    for (const counted of find(samples, 'rankd_http_requests_total')) {
      const labels = counted.labels;
      const count = sampleValue(samples, 'rankd_http_request_duration_seconds_count', labels);
      assert.equal(count, counted.value, JSON.stringify(labels));
      const buckets = find(samples, 'rankd_http_request_duration_seconds_bucket', labels);
      assert.equal(buckets.length, 13, 'twelve bounds and +Inf');
      for (let i = 1; i < buckets.length; i++)
        assert.ok((buckets[i]?.value ?? 0) >= (buckets[i - 1]?.value ?? 0), 'cumulative');
      assert.equal(buckets.at(-1)?.labels.le, '+Inf');
      assert.equal(buckets.at(-1)?.value, count);
      assert.ok(sampleValue(samples, 'rankd_http_request_duration_seconds_sum', labels) > 0);
    }
  });

  test('each pipeline stage was timed once per ranking request', () => {
    for (const stage of PIPELINE_STAGES) {
      const labels = { pipeline: OBSERVED_PIPELINE, stage };
      assert.equal(
        sampleValue(samples, 'rankd_pipeline_stage_duration_seconds_count', labels),
        RANKINGS,
        stage,
      );
      assert.ok(sampleValue(samples, 'rankd_pipeline_stage_duration_seconds_sum', labels) >= 0, stage);
    }
  });

  test('candidates per request: one observation per ranking request, summing the candidates', () => {
    const labels = { pipeline: OBSERVED_PIPELINE };
    assert.equal(sampleValue(samples, 'rankd_candidates_per_request_count', labels), RANKINGS);
    assert.equal(sampleValue(samples, 'rankd_candidates_per_request_sum', labels), RANKINGS * CANDIDATES);
    assert.equal(sampleValue(samples, 'rankd_candidates_per_request_bucket', { ...labels, le: '10' }), 0);
    assert.equal(
      sampleValue(samples, 'rankd_candidates_per_request_bucket', { ...labels, le: '25' }),
      RANKINGS,
    );
  });

  test('Redis commands are timed by command, and no error was counted', () => {
    assert.equal(sampleValue(samples, 'rankd_redis_command_duration_seconds_count', { command: 'mset' }), 1);
    // Two gets and one hydration MGET per ranking request at least.
    const mgets = sampleValue(samples, 'rankd_redis_command_duration_seconds_count', { command: 'mget' });
    assert.ok(mgets >= 2 + RANKINGS, `mget count ${mgets}`);
    for (const kind of ['timeout', 'unavailable', 'reply'])
      assert.equal(sampleValue(samples, 'rankd_redis_errors_total', { kind }), 0, kind);
  });

  test('events and model reload series exist; process metrics carry the prefix; every series is rankd_*', () => {
    for (const name of [
      'rankd_events_written_total',
      'rankd_events_dropped_total',
      'rankd_events_failed_batches_total',
    ])
      assert.equal(types.get(name), 'counter', name);
    assert.equal(types.get('rankd_events_pending'), 'gauge');
    assert.equal(types.get('rankd_model_reloads_total'), 'counter');
    assert.ok(find(samples, 'rankd_process_cpu_user_seconds_total').length === 1);
    assert.ok(find(samples, 'rankd_nodejs_heap_size_total_bytes').length === 1);
    for (const sample of samples) assert.match(sample.name, /^rankd_/);
  });

  test('every metric the sample Grafana dashboard queries is exposed', () => {
    const dashboard = readFileSync(
      new URL('../docs/reference/grafana-dashboard.json', import.meta.url),
      'utf8',
    );
    const names = new Set([...dashboard.matchAll(/\b(rankd_[a-z0-9_]+)/g)].map((m) => m[1] as string));
    assert.ok(names.size >= 10, `the dashboard queries ${names.size} metrics`);
    for (const name of names) {
      const family = name.replace(/_(bucket|sum|count)$/, '');
      assert.ok(types.has(family), `${name} (family ${family}) is exposed`);
    }
  });

  test('the /metrics request itself is counted on the next scrape', async () => {
    const next = await scrape(server);
    assert.ok(requests(next.samples, '/metrics', 'GET', 200) >= 1);
  });

  test('model reloads reported anywhere in the process are counted by model and result', async () => {
    reportModelReload('PriceModel', 'reloaded');
    reportModelReload('PriceModel', 'reloaded');
    reportModelReload('PriceModel', 'failed');
    const next = await scrape(server);
    assert.equal(
      sampleValue(next.samples, 'rankd_model_reloads_total', { model: 'PriceModel', result: 'reloaded' }),
      2,
    );
    assert.equal(
      sampleValue(next.samples, 'rankd_model_reloads_total', { model: 'PriceModel', result: 'failed' }),
      1,
    );
  });

  test('event counters mirror the registered stats at each scrape, starting over if they go down', async () => {
    let stats = { written: 5, dropped: 1, failedBatches: 0, pending: 7 };
    server.rankd.metrics?.registerEventStats(() => stats);
    let next = await scrape(server);
    assert.equal(sampleValue(next.samples, 'rankd_events_written_total'), 5);
    assert.equal(sampleValue(next.samples, 'rankd_events_dropped_total', { reason: 'other' }), 1);
    assert.equal(sampleValue(next.samples, 'rankd_events_pending'), 7);
    stats = { written: 9, dropped: 3, failedBatches: 2, pending: 0 };
    next = await scrape(server);
    assert.equal(sampleValue(next.samples, 'rankd_events_written_total'), 9);
    assert.equal(sampleValue(next.samples, 'rankd_events_dropped_total', { reason: 'other' }), 3);
    assert.equal(sampleValue(next.samples, 'rankd_events_failed_batches_total'), 2);
    stats = { written: 4, dropped: 0, failedBatches: 0, pending: 0 };
    next = await scrape(server);
    assert.equal(sampleValue(next.samples, 'rankd_events_written_total'), 4);
  });

  test('Redis killed: the request answers 503, counted with its status, and the error counter rises', async () => {
    await redis.kill();
    const res = await postJson(server, '/api/v1/entities/get', {
      entity_type: 'product',
      entity_ids: ['p1'],
    });
    assert.equal(res.status, 503);
    const ranked = await postJson(server, '/api/v1/ranking', rankingBody(3));
    assert.equal(ranked.status, 503);
    const next = await scrape(server);
    assert.equal(requests(next.samples, '/api/v1/entities/get', 'POST', 503), 1);
    assert.equal(requests(next.samples, '/api/v1/ranking', 'POST', 503), 1);
    assert.ok(sampleValue(next.samples, 'rankd_redis_errors_total', { kind: 'unavailable' }) >= 2);
    assert.equal(sampleValue(next.samples, 'rankd_redis_errors_total', { kind: 'reply' }), 0);
  });
});

describe('settings', () => {
  let redis: TestRedis;
  const servers: FastifyInstance[] = [];

  before(async () => {
    redis = await startTestRedis();
  });

  after(async () => {
    for (const server of servers) await server.close();
    await redis?.stop();
  });

  const serve = async (env: Record<string, string>) => {
    const server = await testServer(redis, { env });
    servers.push(server);
    return server;
  };

  test('with API keys on, /metrics needs a key by default, as the API routes do', async () => {
    const server = await serve({ API_KEYS: 'k1' });
    const res = await server.inject({ method: 'GET', url: '/metrics' });
    assert.equal(res.statusCode, 401, res.body);
    assert.equal(res.json().error_code, 'RANKD_UNAUTHORIZED');
    const api = await postJson(server, '/api/v1/entities/get', { entity_type: 'product', entity_ids: ['x'] });
    assert.equal(api.status, 401);
    for (const headers of [{ 'x-api-key': 'k1' }, { authorization: 'Bearer k1' }])
      assert.equal((await server.inject({ method: 'GET', url: '/metrics', headers })).statusCode, 200);
  });

  test('without API keys /metrics is open, as every route', async () => {
    const server = await serve({});
    assert.equal((await server.inject({ method: 'GET', url: '/metrics' })).statusCode, 200);
  });

  test('METRICS_ACCESS=public: /metrics answers without a key while the API needs one', async () => {
    const server = await serve({ API_KEYS: 'k1', METRICS_ACCESS: 'public' });
    assert.equal((await server.inject({ method: 'GET', url: '/metrics' })).statusCode, 200);
    const api = await postJson(server, '/api/v1/entities/get', { entity_type: 'product', entity_ids: ['x'] });
    assert.equal(api.status, 401);
  });

  test('METRICS_ACCESS=<port>: no /metrics on the server’s own port, whatever the key; requests still counted', async () => {
    const server = await serve({ API_KEYS: 'k1', METRICS_ACCESS: '19464' });
    const res = await server.inject({ method: 'GET', url: '/metrics', headers: { 'x-api-key': 'k1' } });
    assert.equal(res.statusCode, 404, res.body);
    assert.equal(res.json().error_code, 'RANKD_NOT_FOUND');
    await server.inject({ method: 'GET', url: '/healthcheck' });
    const { samples } = parsePrometheus(await (server.rankd.metrics as RankdMetrics).render());
    assert.equal(requests(samples, '/healthcheck', 'GET', 200), 1);
  });

  test('a METRICS_ACCESS port must be a port, and differ from PORT', () => {
    assert.throws(
      () => loadConfig({ PORT: '5001', METRICS_ACCESS: '5001' }),
      /METRICS_ACCESS=5001: must differ from PORT/,
    );
    assert.throws(
      () => loadConfig({ METRICS_ACCESS: '70000' }),
      /METRICS_ACCESS=70000: a port is from 1 to 65535/,
    );
    assert.throws(() => loadConfig({ METRICS_ACCESS: 'everyone' }), /METRICS_ACCESS="everyone"/);
    assert.equal(metricsPortOf(loadConfig({ METRICS_ACCESS: '9464' })), 9464);
    assert.equal(metricsPortOf(loadConfig({})), undefined);
  });

  test('renderSummed: several servers’ metrics as one, each series summed on its own', async () => {
    const [a, b] = [await serve({}), await serve({})] as [FastifyInstance, FastifyInstance];
    for (let i = 0; i < 2; i++) await a.inject({ method: 'GET', url: '/healthcheck' });
    await a.inject({ method: 'GET', url: '/nope' });
    await b.inject({ method: 'GET', url: '/healthcheck' });
    await postJson(b, '/api/v1/entities/get', { entity_type: 'product', entity_ids: ['x'] });
    const snapshots = [
      await (a.rankd.metrics as RankdMetrics).snapshot(),
      await (b.rankd.metrics as RankdMetrics).snapshot(),
    ];
    const { contentType, text } = await renderSummed(snapshots);
    assert.match(contentType, /^text\/plain; version=0\.0\.4/);
    const { samples } = parsePrometheus(text);
    assert.equal(requests(samples, '/healthcheck', 'GET', 200), 3);
    assert.equal(requests(samples, 'unknown', 'GET', 404), 1);
    assert.equal(requests(samples, '/api/v1/entities/get', 'POST', 200), 1);
    // The histogram keeps one series per route: its buckets are not added across routes.
    const count = (route: string) =>
      sampleValue(samples, 'rankd_http_request_duration_seconds_count', {
        route,
        method: 'GET',
        status: '200',
      });
    assert.equal(count('/healthcheck'), 3);
    const inf = sampleValue(samples, 'rankd_http_request_duration_seconds_bucket', {
      route: '/healthcheck',
      method: 'GET',
      status: '200',
      le: '+Inf',
    });
    assert.equal(inf, 3);
  });

  test('METRICS_ACCESS=off: no /metrics route and no metrics', async () => {
    const server = await serve({ METRICS_ACCESS: 'off' });
    assert.equal((await server.inject({ method: 'GET', url: '/metrics' })).statusCode, 404);
    assert.equal(server.rankd.metrics, undefined);
  });

  test('two servers in one process keep their own counts', async () => {
    const [a, b] = [await serve({}), await serve({})] as [FastifyInstance, FastifyInstance];
    await a.inject({ method: 'GET', url: '/healthcheck' });
    await a.inject({ method: 'GET', url: '/healthcheck' });
    await b.inject({ method: 'GET', url: '/healthcheck' });
    assert.equal(requests((await scrape(a)).samples, '/healthcheck', 'GET', 200), 2);
    assert.equal(requests((await scrape(b)).samples, '/healthcheck', 'GET', 200), 1);
  });
});

test('a file model reloaded by the running server is counted per result', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rankd-metrics-model-'));
  const file = join(dir, 'weights.json');
  writeFileSync(file, JSON.stringify({ weights: {}, bias: 1 }));
  const model = linearModel({
    name: 'MetricsLinear',
    file,
    features: [],
    entity: TemplateProduct,
    watch: false,
  });
  const app = defineApp({
    name: 'reloads',
    pipelines: [
      defineRankingPipeline({ name: 'Linear', path: '/linear', candidate: TemplateProduct, model }),
    ],
  });
  const redis = await startTestRedis();
  const server = await testServer(redis, { app });
  try {
    writeFileSync(file, JSON.stringify({ weights: {}, bias: 2 }));
    assert.equal((await model.reload()).status, 'reloaded');
    assert.equal((await model.reload()).status, 'unchanged');
    writeFileSync(file, '{ not json');
    assert.equal((await model.reload()).status, 'failed');
    const { samples } = await scrape(server);
    for (const result of ['reloaded', 'unchanged', 'failed'])
      assert.equal(
        sampleValue(samples, 'rankd_model_reloads_total', { model: 'MetricsLinear', result }),
        1,
        result,
      );
  } finally {
    await server.close();
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the fast histogram renders exactly what prom-client's histogram renders for the same values", async () => {
  const ours = new Registry();
  const theirs = new Registry();
  const options = { name: 'h', help: 'h', labelNames: ['a', 'b'], buckets: [0.1, 0.5, 1, 5] };
  const fast = new FastHistogram({ ...options, registry: ours });
  const reference = new Histogram({ ...options, registers: [theirs] });
  const values = [0, 0.05, 0.1, 0.1000001, 0.5, 0.7, 1, 4.9, 5, 5.1, 100];
  for (const [i, value] of values.entries()) {
    const labels = i % 2 === 0 ? ['x', 'y'] : ['x', 'z'];
    fast.series(...labels).observe(value);
    reference.labels(...labels).observe(value);
  }
  assert.equal(await ours.metrics(), await theirs.metrics());
});

describe('a METRICS_ACCESS port with `rankd run`: no key there, none on the main port', () => {
  const APP = 'test/fixtures/workers/app.ts';
  let redis: TestRedis;

  before(async () => {
    redis = await startTestRedis();
  });

  after(async () => {
    killServices();
    await redis?.stop();
  });

  /** `count` requests to /healthcheck, each on a connection of its own (so that workers take turns). */
  async function healthchecks(base: string, count: number): Promise<void> {
    for (let i = 0; i < count; i++) {
      const res = await fetch(`${base}/healthcheck`, { headers: { connection: 'close' } });
      assert.equal(res.status, 200);
      await res.arrayBuffer();
    }
  }

  async function scrapePort(port: number) {
    const res = await fetch(`http://127.0.0.1:${port}/metrics`);
    assert.equal(res.status, 200);
    assert.match(String(res.headers.get('content-type')), /^text\/plain; version=0\.0\.4/);
    return parsePrometheus(await res.text()).samples;
  }

  for (const workers of [1, 2]) {
    test(`--workers ${workers}: every request of every worker counted once, read without a key`, {
      timeout: 180_000,
    }, async () => {
      const metricsPort = await freePort();
      const service = await startCliService(
        APP,
        { REDIS_URL: redis.url, API_KEYS: 'k1', METRICS_ACCESS: String(metricsPort) },
        ['--workers', String(workers)],
      );
      assert.match(service.output(), new RegExp(`metrics: http://127\\.0\\.0\\.1:${metricsPort}/metrics`));
      const main = await fetch(`${service.base}/metrics`, { headers: { 'x-api-key': 'k1' } });
      assert.equal(main.status, 404, 'not on the main port, even with a key');
      await main.arrayBuffer();
      const other = await fetch(`http://127.0.0.1:${metricsPort}/healthcheck`);
      assert.equal(other.status, 404, 'the metrics port serves nothing else');
      await other.arrayBuffer();
      // 20 requests: with two workers, taking connections in turn, each counted 10. One worker's
      // metrics (what /metrics on the main port gives with workers) would say 10.
      await healthchecks(service.base, 20);
      const samples = await scrapePort(metricsPort);
      assert.equal(requests(samples, '/healthcheck', 'GET', 200), 20);
      assert.ok(samples.every((sample) => sample.name.startsWith('rankd_')));
      service.child.kill('SIGTERM');
      assert.equal(await service.exited, 0, service.output());
    });
  }
});
