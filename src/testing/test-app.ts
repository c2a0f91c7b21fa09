import { fileURLToPath } from 'node:url';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import type { RankdApp } from '../app/define-app.js';
import { loadRows, loadSampleData, type RowsToLoad } from '../cli/load-sample-data.js';
import { loadConfig } from '../config/index.js';
import { buildServer } from '../http/build-server.js';
import { startThrowawayRedis } from './throwaway-redis.js';

/** What {@link testApp} loads and how it configures the server. */
export interface TestAppOptions extends RowsToLoad {
  /**
   * A project directory (or `file:` URL) whose sample data is loaded first, as `rankd load-sample`
   * loads it: `data/<entity type>.jsonl` and `feature-store/data/<view>.jsonl`.
   */
  readonly sampleData?: string | URL;
  /**
   * Settings, as `.env` holds them. Neither `.env` nor the environment is read, so a test runs the
   * same everywhere; `REDIS_URL` is the throwaway server's, `REDIS_CLUSTER_NODES` ignored.
   * @defaultValue `{ LOG_LEVEL: 'silent' }`
   */
  readonly settings?: Readonly<Record<string, string>>;
}

/** An app served in process on its own throwaway Redis; made by {@link testApp}. */
export interface TestApp {
  /** The server: `server.inject(...)` sends any request; `server.rankd` holds its stores. */
  readonly server: FastifyInstance;
  /** The throwaway Redis, for a test that looks at Redis itself. */
  readonly redisUrl: string;
  /** Sends `body` as JSON to `path` (`POST`), in process: resolves with `statusCode`, `json()`, `body`. */
  post(path: string, body: unknown): Promise<LightMyRequestResponse>;
  /** Closes the server and stops its Redis, deleting its data. Call it in `after()`. */
  close(): Promise<void>;
}

/** How long Redis may take to accept the server's connection: a broken machine, not a slow one. */
const CONNECT_TIMEOUT_MS = 20_000;

/**
 * Serves `app` in process for a test: starts a throwaway `redis-server` on a free port (never 6379),
 * builds the app's server on it, loads the sample data and the given entities and feature rows
 * (checked as uploads are: a bad row fails here, naming it). Requests go through `server.inject`:
 * the whole HTTP path without a socket.
 *
 * @example
 * ```ts
 * import assert from 'node:assert/strict';
 * import { test } from 'node:test';
 * import { testApp } from 'rankd/testing';
 * import app from './pipelines/main.js';
 *
 * test('a candle first', async () => {
 *   const shop = await testApp(app, { entities: { product: [{ product_id: 'x1', title: 'Candle' }] } });
 *   try {
 *     const response = await shop.post('/api/v1/ranking', { candidates: [{ product_id: 'x1' }] });
 *     assert.equal(response.json().ranked_candidates[0].candidate_id, 'x1');
 *   } finally {
 *     await shop.close();
 *   }
 * });
 * ```
 */
export async function testApp(app: RankdApp, options: TestAppOptions = {}): Promise<TestApp> {
  const redis = await startThrowawayRedis();
  let server: FastifyInstance | undefined;
  try {
    const config = loadConfig({
      LOG_LEVEL: 'silent',
      ...options.settings,
      REDIS_URL: redis.url,
      REDIS_CLUSTER_NODES: '',
    });
    const built = await buildServer({ app, config });
    server = built;
    if (!(await built.rankd.redis.waitUntilReady(CONNECT_TIMEOUT_MS)))
      throw new Error(`the test server did not connect to its Redis at ${redis.url}`);
    const services = { app, index: built.rankd.index, features: built.rankd.features };
    if (options.sampleData !== undefined) {
      const dir = options.sampleData instanceof URL ? fileURLToPath(options.sampleData) : options.sampleData;
      await loadSampleData(dir, services);
    }
    await loadRows(services, options);
  } catch (error) {
    await server?.close();
    await redis.stop();
    throw error;
  }
  const ready = server;
  return {
    server: ready,
    redisUrl: redis.url,
    post: (path, body) =>
      ready.inject({
        method: 'POST',
        url: path,
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify(body),
      }),
    async close() {
      try {
        await ready.close();
      } finally {
        await redis.stop();
      }
    },
  };
}
