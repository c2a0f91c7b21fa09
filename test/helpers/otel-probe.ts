/**
 * Run as a child process by test/tracing.test.ts (with record-otel-imports.mjs): builds a server
 * for the observed app on REDIS_URL with the tracing settings of the environment, serves one
 * ranking request, closes, and appends the OpenTelemetry modules CommonJS loaded to
 * RANKD_PROBE_FILE (the ESM ones are recorded by the loader hook).
 */
import assert from 'node:assert/strict';
import { appendFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { loadConfig } from '../../src/config/index.js';
import { buildServer } from '../../src/http/build-server.js';
import { observedApp, rankingBody } from './observed-app.js';

const server = await buildServer({
  config: loadConfig({ ...process.env, LOG_LEVEL: 'silent', EVENTS_SINK: 'off' }),
  app: observedApp,
});
assert.ok(await server.rankd.redis.waitUntilReady(5000), 'connected');
const res = await server.inject({ method: 'POST', url: '/api/v1/ranking', payload: rankingBody(3) });
assert.equal(res.statusCode, 200, res.body);
await server.close();
const loadedByRequire = Object.keys(createRequire(import.meta.url).cache).filter((path) =>
  path.includes('/@opentelemetry/'),
);
appendFileSync(process.env.RANKD_PROBE_FILE as string, loadedByRequire.map((path) => `${path}\n`).join(''));
