import type { FastifyInstance, InjectOptions } from 'fastify';
import type { RankdApp } from '../../src/app/define-app.js';
import { type Config, loadConfig } from '../../src/config/index.js';
import { buildServer } from '../../src/http/build-server.js';
import type { TestRedis } from './redis-server.js';

/**
 * Config for tests: the test Redis (a test cluster's nodes as `REDIS_CLUSTER_NODES`), no logs,
 * short timeouts so outages are seen quickly.
 */
export function testConfig(redis: TestRedis, env: Record<string, string> = {}): Config {
  return loadConfig({
    REDIS_URL: redis.url,
    ...(redis.clusterNodes === undefined ? {} : { REDIS_CLUSTER_NODES: redis.clusterNodes }),
    LOG_LEVEL: 'silent',
    REDIS_CONNECT_TIMEOUT_MS: '500',
    REDIS_COMMAND_TIMEOUT_MS: '1000',
    ...env,
  });
}

/** A server on the test Redis, connected before it is returned. */
export async function testServer(
  redis: TestRedis,
  options: { env?: Record<string, string>; app?: RankdApp } = {},
): Promise<FastifyInstance> {
  const server = await buildServer({
    config: testConfig(redis, options.env),
    ...(options.app ? { app: options.app } : {}),
  });
  if (!(await server.rankd.redis.waitUntilReady(5000)))
    throw new Error('test server did not connect to Redis');
  return server;
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
