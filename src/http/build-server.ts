import { resolve } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { createStores } from '../app/create-stores.js';
import { defineApp, type RankdApp } from '../app/define-app.js';
import { declaredEntityTypes, EmptyIndexWatch } from '../app/empty-index-watch.js';
import { type Config, eventsFileOf, loadConfig } from '../config/index.js';
import { AppLoadError } from '../errors/index.js';
import { createEventSink, type EventBuffering } from '../events/create-sink.js';
import { eventJson } from '../fast-paths/event-json.js';
import { installJsonBodyParser } from '../fast-paths/json-body.js';
import {
  installRequestIdHeader,
  type LogStream,
  loggerOptions,
  requestIdOf,
} from '../observability/logging.js';
import { RankdMetrics } from '../observability/metrics.js';
import { RequestTracing, type SpanExporterLike } from '../observability/tracing.js';
import { installAccessControl } from './access.js';
import { installAdmission } from './admission.js';
import { bodyValidatorCompiler } from './body-validator.js';
import { registerDocs } from './docs.js';
import { handleClientError, handleFrameworkError, installErrorHandling } from './error-handler.js';
import { httpLimitOptions, installHttpLimits } from './http-limits.js';
import { installHttpMetrics } from './http-metrics.js';
import { type InFlightRequests, installInFlightRecording } from './in-flight-requests.js';
import { hideRoutesWithoutSchema } from './openapi-document.js';
import { registerConsoleRoutes } from './routes/console.js';
import { registerEntityDeleteRoutes } from './routes/entities-delete.js';
import { registerEntityGetRoute } from './routes/entities-get.js';
import { registerEntityUploadRoute } from './routes/entities-upload.js';
import { registerFeedbackRoute } from './routes/events-feedback.js';
import { registerFeatureDeleteRoute } from './routes/features-delete.js';
import { registerFeatureGetRoute } from './routes/features-get.js';
import { registerFeatureUploadRoute } from './routes/features-upload.js';
import { registerHealthRoutes } from './routes/health.js';
import { registerModelReloadRoute } from './routes/models-reload.js';
import { registerPipelineRoutes } from './routes/pipeline-routes.js';
import { installSecurityHeaders } from './security-headers.js';
import type { Services } from './services.js';
import { reportUnknownFields } from './unknown-fields.js';

/**
 * What a server is built from; everything has a default so tests can pass only what they change.
 */
export interface BuildServerOptions {
  /** Validated configuration. @defaultValue `loadConfig()` (the environment) */
  config?: Config;
  /** The app to serve. @defaultValue an app with only the built-in entity types */
  app?: RankdApp;
  /**
   * Adds routes before the server is ready (routes cannot be added after), after the app's own
   * `server` extension. They get the same access control (`config: { access }`) and error handling
   * as rankd's own routes.
   */
  extraRoutes?: (server: FastifyInstance, services: Services) => void | Promise<void>;
  /**
   * Builds the routes and the OpenAPI document only: Redis is never connected and the app's
   * components are not initialized (no model file is read). For reading `server.swagger()`, e.g.
   * `rankd client types`; such a server answers requests that need Redis with 503s.
   */
  documentOnly?: boolean;
  /** Where log lines go, as JSON, instead of stdout (tests read them). @defaultValue stdout */
  logStream?: LogStream;
  /**
   * Where spans go when tracing is on (`OTEL_EXPORTER` not `off`), instead of the exporter it names:
   * an OpenTelemetry `SpanExporter`, e.g. an `InMemorySpanExporter` in tests.
   */
  spanExporter?: SpanExporterLike;
  /**
   * Where to record the requests in flight, so that the loop watchdog (`LoopWatchdog`, which
   * `rankd run` starts) can name them when the event loop is stuck. @defaultValue not recorded
   */
  inFlightRequests?: InFlightRequests;
  /**
   * How the event sink buffers, where it should differ from its defaults (100,000 events waiting at
   * most, writes of up to 1000 every 50 ms, 2 s on close): e.g. a test that decides when events are
   * written (`server.rankd.events.flush()`) with `{ flushIntervalMs: 60_000 }`.
   */
  eventBuffering?: Partial<EventBuffering>;
  /**
   * How often the index is checked for declared entity types without any entity, in ms; 0 = never.
   * @defaultValue `60000`
   */
  emptyIndexCheckIntervalMs?: number;
}

/** How often the index is checked for declared entity types without any entity (empty-index-watch.ts). */
const EMPTY_INDEX_CHECK_INTERVAL_MS = 60_000;

declare module 'fastify' {
  interface FastifyInstance {
    /** rankd's services for this server (config, app, Redis, index). */
    rankd: Services;
  }
}

/**
 * Builds the HTTP server: routes, docs, access control and error handling, on a Redis connection
 * that is opened in the background (Redis being down is answered with 503s, not a failed start).
 * It never listens: `startServer` does, and tests use `server.inject()`. Closing the server closes
 * the app's components (model file watchers) and Redis.
 *
 * @example
 * ```ts
 * import { buildServer, loadConfig } from 'rankd/server';
 * import app from './pipelines/main.js';
 *
 * // The server `rankd run` runs, in a program of your own.
 * const server = await buildServer({ app, config: loadConfig(process.env) });
 * await server.listen({ port: 5001, host: '0.0.0.0' });
 * process.once('SIGTERM', () => void server.close());
 * ```
 */
export async function buildServer(options: BuildServerOptions = {}): Promise<FastifyInstance> {
  const config = options.config ?? loadConfig();
  const app = options.app ?? defineApp();
  // First, as it may fail (tracing on without the SDK installed) before anything is started.
  const tracing =
    config.OTEL_EXPORTER !== 'off' ? await RequestTracing.start(config, options.spanExporter) : undefined;
  const server = Fastify({
    logger: await loggerOptions(config, options.logStream),
    bodyLimit: config.BODY_LIMIT,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    // The caller's x-request-id when it is a sane one, else a UUID; every log line of the request has it.
    genReqId: requestIdOf,
    ...httpLimitOptions(config),
    // Errors before any route (parser errors, timeouts, undecodable URLs) in rankd's shape, not Fastify's.
    clientErrorHandler: handleClientError,
    frameworkErrors: handleFrameworkError,
  });
  server.setValidatorCompiler(bodyValidatorCompiler(config.REQUEST_BODIES));
  reportUnknownFields(server);
  // Only JSON bodies are accepted: a text/plain body gets 415, not a confusing 422.
  server.removeContentTypeParser('text/plain');
  // Fastify's own JSON parser when FAST_PATHS=false.
  if (config.FAST_PATHS) installJsonBodyParser(server);

  const metrics =
    config.METRICS_ACCESS !== 'off'
      ? new RankdMetrics({ pipelines: app.pipelines.map(({ pipeline }) => pipeline.name) })
      : undefined;
  // The logger only exists once the server does, hence the callback rather than a logger argument.
  // On a cluster the detail is a whole sentence naming the node, its slots and what to check:
  // `rankd redis` cannot help there, and the seed list says nothing about which node failed.
  const cluster = config.REDIS_CLUSTER_NODES.length > 0;
  const { redis, keys, index, features } = createStores(
    config,
    (event, detail) =>
      cluster
        ? event === 'ready'
          ? server.log.info(`Redis Cluster: ${detail}`)
          : server.log.warn(`Redis Cluster: ${detail}`)
        : event === 'ready'
          ? server.log.info(`Redis connected at ${detail}`)
          : server.log.warn(
              `Redis unavailable (${detail}); retrying in the background. Start one with \`rankd redis\`.`,
            ),
    metrics?.redis,
    !options.documentOnly,
  );
  if (redis.readCache !== undefined) metrics?.registerReadCache(redis.readCache);
  // A document-only server writes no event: its sink must not open a connection of its own.
  const events = createEventSink(
    options.documentOnly ? { ...config, EVENTS_SINK: 'off' } : config,
    keys,
    server.log,
    process.cwd(),
    options.eventBuffering,
    eventJson(config.FAST_PATHS),
  );
  metrics?.registerEventStats(() => ({ ...events.stats(), droppedBy: events.droppedBy() }));
  const stageObserverFor: Services['stageObserverFor'] = tracing
    ? (request) => tracing.stageObserver(request, metrics?.stages)
    : () => metrics?.stages;
  const services: Services = { config, app, redis, index, features, events, metrics, stageObserverFor };
  const emptyIndex = new EmptyIndexWatch(
    redis,
    keys,
    declaredEntityTypes(app),
    options.documentOnly ? 0 : (options.emptyIndexCheckIntervalMs ?? EMPTY_INDEX_CHECK_INTERVAL_MS),
    {
      warn: (message) => server.log.warn(message),
      info: (message) => server.log.info(message),
      checked: (type, empty) => metrics?.indexEmpty(type, empty),
    },
  );
  server.addHook('onClose', async () => emptyIndex.stop());
  server.decorate('rankd', services);
  server.addHook('onClose', async () => metrics?.close());
  // In-flight requests have handed over their events by now: write them, within the sink's close wait.
  server.addHook('onClose', async () => events.close());
  server.addHook('onClose', async () => {
    // Components first (model file watchers, sessions): nothing may reload into a closed server.
    for (const failure of await app.close()) server.log.warn(failure.message);
    await redis.close();
  });

  // The first onRequest hook: a request stuck in any later one is still listed.
  if (options.inFlightRequests) installInFlightRecording(server, options.inFlightRequests);
  // Before any route: the request metrics hook into each route as it is added.
  hideRoutesWithoutSchema(server);
  installRequestIdHeader(server);
  // With a port of their own the metrics are read there (`rankd run` serves it), never through this port.
  if (metrics)
    installHttpMetrics(
      server,
      metrics,
      config.METRICS_ACCESS === 'key' || config.METRICS_ACCESS === 'public'
        ? { access: config.METRICS_ACCESS }
        : 'elsewhere',
    );
  tracing?.install(server);
  const eventFile = eventsFileOf(config);
  installErrorHandling(server, {
    exposeRedisAddress: config.EXPOSE_REDIS_ADDRESS,
    files: eventFile === undefined ? [] : [resolve(eventFile)],
  });
  installSecurityHeaders(server);
  // Before access control: a request without Host is refused as malformed, whatever its key.
  installHttpLimits(server, config);
  installAccessControl(server, config);
  // After access control (it knows the key, for per-key limits), before the routes.
  installAdmission(server, config, metrics);
  await registerDocs(server, app.name);
  try {
    // The app's plugins, hooks and routes: after what every route must have (access control, error
    // responses, metrics, the document), before rankd's routes, so that hooks it adds at the top
    // level are in place when the index routes' own plugin scopes copy their parent's hooks.
    await app.server?.(server, services);
    await options.extraRoutes?.(server, services);
    registerHealthRoutes(server, redis, config.EXPOSE_REDIS_ADDRESS, () => emptyIndex.empty);
    registerEntityUploadRoute(server, services);
    registerEntityGetRoute(server, services);
    registerEntityDeleteRoutes(server, services);
    registerFeatureUploadRoute(server, services);
    registerFeatureGetRoute(server, services);
    registerFeatureDeleteRoute(server, services);
    registerPipelineRoutes(server, services);
    registerFeedbackRoute(server, services);
    registerModelReloadRoute(server, services);
    registerConsoleRoutes(server, services);
    if (!options.documentOnly) {
      redis.connect();
      await app.initialize({ log: server.log });
    }
    // Plugins the app registered without awaiting them load here, and fail here.
    await server.ready();
    emptyIndex.start(config.REDIS_COMMAND_TIMEOUT_MS);
  } catch (error) {
    await app.close();
    await events.close();
    await redis.close();
    metrics?.close();
    await tracing?.shutdown();
    throw new AppLoadError(`The app ${app.name} failed to start: ${(error as Error).message}`, error);
  }
  return server;
}
