import { after, before } from 'node:test';
import type { FastifyInstance, InjectOptions } from 'fastify';
import type { RankdApp } from '../../src/app/define-app.js';
import { type Config, loadConfig } from '../../src/config/index.js';
import type { EventBuffering } from '../../src/events/create-sink.js';
import { buildServer } from '../../src/http/build-server.js';
import { startTestRedis, type TestRedis } from './redis-server.js';

/**
 * `RANKD_TEST_FAST_PATHS=off` (`npm run test:plain`) runs every test server with
 * `FAST_PATHS=false`, so that the HTTP suites check the plain paths too; `on` or unset leaves the
 * default. A test that sets `FAST_PATHS` itself keeps its own.
 */
export const TEST_FAST_PATHS: 'on' | 'off' = (() => {
  const value = process.env.RANKD_TEST_FAST_PATHS ?? 'on';
  if (value !== 'on' && value !== 'off')
    throw new Error(`RANKD_TEST_FAST_PATHS=${value}: expected on or off`);
  return value;
})();

/**
 * Config for tests: the test Redis (a test cluster's nodes as `REDIS_CLUSTER_NODES`), no logs,
 * short timeouts so outages are seen quickly, fast paths as {@link TEST_FAST_PATHS} says.
 */
export function testConfig(redis: TestRedis, env: Record<string, string> = {}): Config {
  return loadConfig({
    REDIS_URL: redis.url,
    ...(redis.clusterNodes === undefined ? {} : { REDIS_CLUSTER_NODES: redis.clusterNodes }),
    LOG_LEVEL: 'silent',
    REDIS_COMMAND_TIMEOUT_MS: '1000',
    ...(TEST_FAST_PATHS === 'off' ? { FAST_PATHS: 'false' } : {}),
    ...env,
  });
}

/** A server on the test Redis, connected before it is returned. */
export async function testServer(
  redis: TestRedis,
  options: { env?: Record<string, string>; app?: RankdApp; eventBuffering?: Partial<EventBuffering> } = {},
): Promise<FastifyInstance> {
  const server = await buildServer({
    config: testConfig(redis, options.env),
    ...(options.app ? { app: options.app } : {}),
    ...(options.eventBuffering ? { eventBuffering: options.eventBuffering } : {}),
  });
  if (!(await server.rankd.redis.waitUntilReady(5000)))
    throw new Error('test server did not connect to Redis');
  return server;
}

/** What {@link useTestServer} sets up: read its fields inside tests, once `before` has run. */
export interface TestServerFixture {
  readonly redis: TestRedis;
  readonly server: FastifyInstance;
}

/**
 * Registers, in the current suite (or the file), a `before` that starts a test Redis and a
 * server on it, and an `after` that closes both: the pair nearly every HTTP test file needs.
 */
export function useTestServer(
  options: { env?: Record<string, string>; app?: RankdApp } = {},
): TestServerFixture {
  let redis: TestRedis | undefined;
  let server: FastifyInstance | undefined;
  before(async () => {
    redis = await startTestRedis();
    server = await testServer(redis, options);
  });
  after(async () => {
    await server?.close();
    await redis?.stop();
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('useTestServer: read the fixture inside a test, after before()');
    return value;
  };
  return {
    get redis() {
      return started(redis);
    },
    get server() {
      return started(server);
    },
  };
}

/** POSTs JSON and returns status and parsed body. */
export async function postJson(
  server: FastifyInstance,
  url: string,
  payload: unknown,
  headers: InjectOptions['headers'] = {},
  // biome-ignore lint/suspicious/noExplicitAny: response bodies are arbitrary JSON that tests assert field by field
): Promise<{ status: number; body: any }> {
  const response = await server.inject({
    method: 'POST',
    url,
    payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
    headers: { 'content-type': 'application/json', ...headers },
  });
  return {
    status: response.statusCode,
    body: response.body.length > 0 ? JSON.parse(response.body) : undefined,
  };
}
