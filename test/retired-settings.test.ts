/**
 * Settings folded into fewer ones: each, when set, is named once at start with what to use
 * instead (`rankd run`); those with an exact current equivalent are still read so; and the folded
 * settings left at their defaults behave as the old defaults did.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import {
  ConfigSchema,
  eventsFileOf,
  loadConfig,
  metricsPortOf,
  retiredSettingWarnings,
  spanDestinationOf,
} from '../src/config/index.js';
import { RETIRED_SETTINGS } from '../src/config/retired-settings.js';
import { createEventSink, SINK_BUFFERING } from '../src/events/create-sink.js';
import { FEATURE_ROWS } from '../src/events/recorder.js';
import { clientPauseLimitOf } from '../src/http/http-limits.js';
import { RedisKeys } from '../src/redis/keys.js';
import { killServices, ROOT, startCliService } from './helpers/cli-service.js';
import { startTestRedis, type TestRedis } from './helpers/redis-server.js';

const dirs: string[] = [];
let redis: TestRedis | undefined;
after(async () => {
  killServices();
  await redis?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('the warning at start', () => {
  test('each retired setting that is set gets one line naming it and what to use instead', () => {
    for (const [name, instead] of Object.entries(RETIRED_SETTINGS)) {
      assert.deepEqual(retiredSettingWarnings({ [name]: '1' }), [
        `rankd: ${name} is no longer a setting: ${instead}`,
      ]);
    }
  });

  test('names in any case; empty values and current settings say nothing', () => {
    assert.deepEqual(retiredSettingWarnings({ events_batch_size: '10' }), [
      `rankd: EVENTS_BATCH_SIZE is no longer a setting: ${RETIRED_SETTINGS.EVENTS_BATCH_SIZE}`,
    ]);
    assert.deepEqual(retiredSettingWarnings({ EVENTS_BATCH_SIZE: '', REQUEST_TIMEOUT_MS: '1000' }), []);
    assert.deepEqual(retiredSettingWarnings({ EVENTS_FEATURES: 'all', METRICS_ACCESS: 'off' }), []);
  });

  test('FEATURE in EVENTS_KINDS is named with EVENTS_FEATURES=all', () => {
    assert.deepEqual(retiredSettingWarnings({ EVENTS_KINDS: 'MODEL, FEATURE' }), [
      'rankd: FEATURE in EVENTS_KINDS is no longer read: use EVENTS_FEATURES=all',
    ]);
  });

  test('every replacement it names is a setting rankd reads', () => {
    const settings = Object.keys(ConfigSchema.properties);
    for (const [name, instead] of Object.entries(RETIRED_SETTINGS)) {
      const named = instead.match(/\b[A-Z]+_[A-Z_]+\b/g) ?? [];
      for (const setting of named) assert.ok(settings.includes(setting), `${name}: ${setting}`);
    }
  });

  test('`rankd run` prints it once, from .env too, and starts', { timeout: 120_000 }, async () => {
    redis = await startTestRedis();
    const dir = mkdtempSync(join(tmpdir(), 'rankd-retired-'));
    dirs.push(dir);
    writeFileSync(join(dir, '.env'), 'EVENTS_FLUSH_INTERVAL_MS=10\nmetrics_enabled=false\n');
    const service = await startCliService(
      join(ROOT, 'test/fixtures/workers/app.ts'),
      { REDIS_URL: redis.url, HEADERS_TIMEOUT_MS: '5000' },
      ['--workers', '2'],
      { cli: ['--import', import.meta.resolve('tsx'), join(ROOT, 'src/cli/main.ts')], cwd: dir },
    );
    const output = service.output();
    for (const name of ['EVENTS_FLUSH_INTERVAL_MS', 'METRICS_ENABLED', 'HEADERS_TIMEOUT_MS'])
      assert.equal(
        output.split(`rankd: ${name} is no longer a setting`).length - 1,
        1,
        `${name}:\n${output}`,
      );
    const metrics = await fetch(`${service.base}/metrics`);
    assert.equal(metrics.status, 404, 'METRICS_ENABLED=false still read as METRICS_ACCESS=off');
    await metrics.arrayBuffer();
  });
});

describe('read as their current equivalent', () => {
  test('METRICS_ENABLED=false is METRICS_ACCESS=off; METRICS_PORT is a port of its own', () => {
    assert.equal(loadConfig({ METRICS_ENABLED: 'false' }).METRICS_ACCESS, 'off');
    assert.equal(metricsPortOf(loadConfig({ METRICS_PORT: '9464', METRICS_ACCESS: 'public' })), 9464);
    assert.equal(loadConfig({ METRICS_ENABLED: 'true', METRICS_ACCESS: 'public' }).METRICS_ACCESS, 'public');
    // A current value wins over an old setting left behind.
    assert.equal(loadConfig({ METRICS_ACCESS: 'off', METRICS_PORT: '9464' }).METRICS_ACCESS, 'off');
  });

  test('OTEL_ENABLED with the old OTEL_EXPORTER and OTEL_EXPORTER_OTLP_ENDPOINT', () => {
    assert.equal(loadConfig({ OTEL_ENABLED: 'true' }).OTEL_EXPORTER, 'otlp');
    assert.equal(loadConfig({ OTEL_ENABLED: 'true', OTEL_EXPORTER: 'console' }).OTEL_EXPORTER, 'console');
    assert.equal(
      spanDestinationOf(
        loadConfig({ OTEL_ENABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }),
      ),
      'http://collector:4318',
    );
    assert.equal(loadConfig({ OTEL_ENABLED: 'false', OTEL_EXPORTER: 'otlp' }).OTEL_EXPORTER, 'off');
    assert.equal(spanDestinationOf(loadConfig({ OTEL_EXPORTER: 'otlp' })), 'http://localhost:4318');
  });

  test('EVENTS_FILE with EVENTS_SINK=file is EVENTS_SINK=file:<path>', () => {
    const config = loadConfig({ EVENTS_SINK: 'file', EVENTS_FILE: '/var/log/rankd/events.jsonl' });
    assert.equal(config.EVENTS_SINK, 'file:/var/log/rankd/events.jsonl');
    assert.equal(eventsFileOf(config), '/var/log/rankd/events.jsonl');
    assert.equal(eventsFileOf(loadConfig({ EVENTS_SINK: 'file' })), './events.jsonl');
    assert.equal(eventsFileOf(loadConfig({})), undefined);
  });

  test('the FEATURE switches are EVENTS_FEATURES', () => {
    assert.equal(loadConfig({ EVENTS_FEATURE_SAMPLE_RATE: '1' }).EVENTS_FEATURES, 'all');
    const listed = loadConfig({ EVENTS_KINDS: 'MODEL,FEATURE' });
    assert.equal(listed.EVENTS_FEATURES, 'all');
    assert.deepEqual(listed.EVENTS_KINDS, ['MODEL']);
    assert.equal(loadConfig({ EVENTS_SHOWN_FEATURES: 'false' }).EVENTS_FEATURES, 'off');
    assert.equal(loadConfig({ EVENTS_SHOWN_FEATURES: 'true' }).EVENTS_FEATURES, 'shown');
    assert.equal(
      loadConfig({ EVENTS_FEATURES: 'off', EVENTS_FEATURE_SAMPLE_RATE: '1' }).EVENTS_FEATURES,
      'off',
    );
  });

  test('a retired setting without an equivalent is only named: it does not stop the start', () => {
    assert.equal(loadConfig({ EVENTS_STREAM_MAXLEN: 'many' }).EVENTS_STREAM_MAX_BYTES, 64 * 1024 * 1024);
  });
});

describe('the folded settings at their defaults behave as the old defaults did', () => {
  test('HTTP: headers and body pauses 10 s, whole request 60 s', () => {
    const config = loadConfig({});
    assert.equal(config.REQUEST_TIMEOUT_MS, 60_000);
    assert.equal(clientPauseLimitOf(config), 10_000);
  });

  test('the event sink: 100,000 waiting, writes of 1000 every 50 ms, 2 s on close', () => {
    assert.deepEqual(SINK_BUFFERING, {
      bufferMax: 100_000,
      batchSize: 1000,
      flushIntervalMs: 50,
      closeTimeoutMs: 2000,
    });
  });

  test('FEATURE events: the shown rows in every request, every candidate in one request of a hundred', async () => {
    const keys = new RedisKeys('retired', '1');
    const real = Math.random;
    // The policy draws with Math.random, once per request: below 1%, then above it.
    const draws = [0.005, 0.5];
    Math.random = () => draws.shift() ?? 0.5;
    const shown = createEventSink(loadConfig({ EVENTS_SINK: 'file' }), keys);
    Math.random = real;
    const off = createEventSink(loadConfig({ EVENTS_SINK: 'file', EVENTS_FEATURES: 'off' }), keys);
    try {
      const sampled = shown.policy.kindsForRequest();
      const other = shown.policy.kindsForRequest();
      assert.ok(sampled.has('FEATURE') && sampled.has(FEATURE_ROWS));
      assert.ok(!other.has('FEATURE') && other.has(FEATURE_ROWS));
      const none = off.policy.kindsForRequest();
      assert.ok(!none.has('FEATURE') && !none.has(FEATURE_ROWS));
    } finally {
      Math.random = real;
      await shown.close();
      await off.close();
    }
  });
});

test('configuration.md documents every setting, and nothing else, in no more than 35 rows', () => {
  const doc = readFileSync(join(ROOT, 'docs/reference/configuration.md'), 'utf8');
  const table = doc.slice(doc.indexOf('| Variable |'), doc.indexOf('\n\n', doc.indexOf('| Variable |')));
  const documented = [...table.matchAll(/^\| `([A-Z_]+)` \|/gm)].map((m) => m[1]);
  assert.deepEqual([...documented].sort(), Object.keys(ConfigSchema.properties).sort());
  assert.ok(documented.length <= 35, `${documented.length} settings`);
  for (const name of Object.keys(RETIRED_SETTINGS)) assert.ok(!documented.includes(name), name);
});
