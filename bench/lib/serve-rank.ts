/**
 * Entry point of the server children of `npm run bench -- rank`, speaking serve-child.ts's IPC protocol
 * (`listening` / `failed` to the parent; `cpu` and `stop` from it). `BENCH_RANK_MODE` says which:
 *
 * - `template`: the template app (`<BENCH_PKG_DIR>/template/pipelines/main.ts`, or the module
 *   `BENCH_RANK_APP` names) served by the
 *   private build's `buildServer`, as `rankd run` serves it. Everything comes from that build's
 *   dist, which is also what the template's `import 'rankd'` resolves to: one copy of rankd.
 * - `floor`: a bare Fastify route at the same path doing the Redis reads the pipeline does (one
 *   MGET of the query's and candidates' entity keys and one MGET of their feature rows in
 *   product_stats and product_sales, together, same key names) and answering a fixed body. At
 *   `PARSING_FLOOR_PATH` the same route also parses every entity it read: the least a server that
 *   hydrates must do.
 */
import { join } from 'node:path';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import { createClient, RESP_TYPES } from 'redis';
import { importDist } from './package-build.js';
import { floorBody, PARSING_FLOOR_PATH, RANK_PATH, TEMPLATE_PRODUCT_VIEWS } from './rank-data.js';
import { type ListeningServer, listenOnLoopback, runServeChild } from './serve-child.js';
import { markPipelineStages, StageProbe } from './stage-probe.js';

/** `BENCH_RANK_PROBE=1` (`rank-profile`): server CPU per segment of each request (stage-probe.ts). */
const probe =
  process.env.BENCH_RANK_PROBE === '1' ? new StageProbe([RANK_PATH, PARSING_FLOOR_PATH]) : undefined;

async function serveTemplate(): Promise<ListeningServer> {
  const dir = process.env.BENCH_PKG_DIR ?? '';
  const { loadApp } = await importDist<typeof import('../../src/cli/load-app.js')>(dir, 'cli/load-app.js');
  const { buildServer } = await importDist<typeof import('../../src/http/build-server.js')>(
    dir,
    'http/build-server.js',
  );
  const config = await importDist<typeof import('../../src/config/index.js')>(dir, 'config/index.js');
  // BENCH_RANK_APP: another app module on the same data (bench/lib/shadow-app.ts: the template with a shadow model).
  const app = await loadApp(process.env.BENCH_RANK_APP ?? join(dir, 'template', 'pipelines', 'main.ts'));
  // The read cache's counters and the process's memory, at /bench/read-cache (a build without a
  // read cache: zeros), added through the app's own server extension, before the server is ready.
  const appServer = app.server;
  const withStats: typeof app = {
    ...app,
    server: async (server, services) => {
      await appServer?.(server, services);
      const redis = services.redis as { readCache?: { stats: object; bytes: number; size: number } };
      server.get('/bench/read-cache', async () => {
        const cache = redis.readCache;
        const { rss, heapUsed } = process.memoryUsage();
        return {
          hits: 0,
          misses: 0,
          invalidations: 0,
          flushes: 0,
          evictions: 0,
          ...cache?.stats,
          bytes: cache?.bytes ?? 0,
          entries: cache?.size ?? 0,
          rssBytes: rss,
          heapUsedBytes: heapUsed,
        };
      });
    },
  };
  if (probe !== undefined) {
    const { RequestContext } = await importDist<typeof import('../../src/request/request-context.js')>(
      dir,
      'request/request-context.js',
    );
    markPipelineStages(probe, RequestContext);
  }
  const server = await buildServer({
    config: config.loadConfig(process.env),
    app: withStats,
    ...(probe === undefined ? {} : { extraRoutes: (server) => probe.install(server) }),
  });
  if (!(await server.rankd.redis.waitUntilReady(10_000))) throw new Error('Redis did not answer within 10 s');
  return listenOnLoopback(server);
}

async function serveFloor(): Promise<ListeningServer> {
  // The build's key names and settings: the same code as the template's server (src/redis/keys.ts).
  const dir = process.env.BENCH_PKG_DIR ?? '';
  const { loadConfig, redisUrlOf } = await importDist<typeof import('../../src/config/index.js')>(
    dir,
    'config/index.js',
  );
  const { RedisKeys } = await importDist<typeof import('../../src/redis/keys.js')>(dir, 'redis/keys.js');
  const config = loadConfig(process.env);
  const keys = new RedisKeys(config.PROJECT_NAME, config.INDEX_VERSION);
  // Buffers, as rankd's own connection reads: feature rows are binary, and decoding is not a read.
  const redis = createClient({ url: redisUrlOf(config) }).withTypeMapping({
    [RESP_TYPES.BLOB_STRING]: Buffer,
  });
  redis.on('error', () => undefined);
  await redis.connect();
  const bodies = new Map<number, string>();
  const server = Fastify({ logger: false, bodyLimit: config.BODY_LIMIT });
  const floorRoute = (parse: boolean) => async (request: FastifyRequest, reply: FastifyReply) => {
    const body = request.body as {
      query?: { query?: string };
      candidates: Array<{ product_id: string }>;
      user_page_size: number;
    };
    const ids = body.candidates.map((candidate) => candidate.product_id);
    const entityKeys = ids.map((id) => keys.entity('product', id));
    if (body.query?.query !== undefined) entityKeys.unshift(keys.entity('query', body.query.query));
    const rowKeys = TEMPLATE_PRODUCT_VIEWS.flatMap((view) => ids.map((id) => keys.featureRow(view, [id])));
    const [entities, rows] = await Promise.all([redis.mGet(entityKeys), redis.mGet(rowKeys)]);
    // Every candidate and row was loaded: a null means the floor read the wrong keys, and its
    // figures would be worthless. (The query's key is absent, as in rankd's read.)
    const offset = entityKeys.length - ids.length;
    if (entities.slice(offset).includes(null) || rows.includes(null))
      return reply.code(500).send({ error: 'a candidate or feature row is missing' });
    if (parse) {
      // Each parsed entity is checked against its id, which also keeps the parse from being optimised away.
      for (let i = offset; i < entities.length; i++) {
        const entity = JSON.parse((entities[i] as Buffer).toString('utf8')) as { product_id?: unknown };
        if (entity.product_id !== ids[i - offset])
          return reply.code(500).send({ error: 'an entity is not the product asked for' });
      }
    }
    let answer = bodies.get(body.user_page_size);
    if (answer === undefined) {
      answer = floorBody(body.user_page_size);
      bodies.set(body.user_page_size, answer);
    }
    return reply.type('application/json').send(answer);
  };
  probe?.install(server);
  server.post(RANK_PATH, floorRoute(false));
  server.post(PARSING_FLOOR_PATH, floorRoute(true));
  server.addHook('onClose', async () => redis.close());
  return listenOnLoopback(server);
}

runServeChild(async () => {
  const mode = process.env.BENCH_RANK_MODE;
  if (mode !== 'template' && mode !== 'floor') throw new Error(`BENCH_RANK_MODE is ${mode}`);
  return mode === 'template' ? serveTemplate() : serveFloor();
});
