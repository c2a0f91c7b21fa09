import { TypeBoxValidatorCompiler } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance } from 'fastify';
import { createStores } from '../app/create-stores.js';
import { defineApp, type RankdApp } from '../app/define-app.js';
import { type Config, loadConfig } from '../config/index.js';
import { AppLoadError } from '../errors/index.js';
import { createEventSink } from '../events/create-sink.js';
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
import { registerDocs } from './docs.js';
import { installErrorHandling } from './error-handler.js';
import { installHttpMetrics } from './http-metrics.js';
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
import type { Services } from './services.js';

/** What a server is built from; everything has a default so tests can pass only what they change. */
export interface BuildServerOptions {
  /** Validated configuration. @defaultValue `loadConfig()` (the environment) */
  config?: Config;
  /** The app to serve. @defaultValue an app with only the built-in entity types */
  app?: RankdApp;
  /**
   * Adds routes before the server is ready (routes cannot be added after). They get the same
   * access control (`config: { access }`) and error handling as rankd's own routes.
   */
  extraRoutes?: (server: FastifyInstance, services: Services) => void | Promise<void>;
  /** Where log lines go, as JSON, instead of stdout (tests read them). @defaultValue stdout */
  logStream?: LogStream;
  /**
   * Where spans go when `OTEL_ENABLED=true`, instead of the exporter `OTEL_EXPORTER` names: an
   * OpenTelemetry `SpanExporter`, e.g. an `InMemorySpanExporter` in tests.
   */
  spanExporter?: SpanExporterLike;
}

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
 */
export async function buildServer(options: BuildServerOptions = {}): Promise<FastifyInstance> {
  const config = options.config ?? loadConfig();
  const app = options.app ?? defineApp();
  // First, as it may fail (tracing on without the SDK installed) before anything is started.
  const tracing = config.OTEL_ENABLED ? await RequestTracing.start(config, options.spanExporter) : undefined;
  const server = Fastify({
    logger: await loggerOptions(config, options.logStream),
    bodyLimit: config.BODY_LIMIT,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    // The caller's x-request-id when it is a sane one, else a UUID; every log line of the request has it.
    genReqId: requestIdOf,
  });
  server.setValidatorCompiler(TypeBoxValidatorCompiler);
  // Only JSON bodies are accepted: a text/plain body gets 415, not a confusing 422.
  server.removeContentTypeParser('text/plain');
  // Fastify's own JSON parser when FAST_PATHS=false.
  if (config.FAST_PATHS) installJsonBodyParser(server);

  const metrics = config.METRICS_ENABLED
    ? new RankdMetrics({ pipelines: app.pipelines.map(({ pipeline }) => pipeline.name) })
    : undefined;
  // The logger only exists once the server does, hence the callback rather than a logger argument.
  const { redis, keys, index, features } = createStores(
    config,
    (event, detail) =>
      event === 'ready'
        ? server.log.info(`Redis connected at ${detail}`)
        : server.log.warn(
            `Redis unavailable (${detail}); retrying in the background. Start one with \`rankd redis\`.`,
          ),
    metrics?.redis,
  );
  const events = createEventSink(config, keys, server.log);
  metrics?.registerEventStats(() => ({ ...events.stats(), droppedBy: events.droppedBy() }));
  const stageObserverFor: Services['stageObserverFor'] = tracing
    ? (request) => tracing.stageObserver(request, metrics?.stages)
    : () => metrics?.stages;
  const services: Services = { config, app, redis, index, features, events, metrics, stageObserverFor };
  server.decorate('rankd', services);
  server.addHook('onClose', async () => metrics?.close());
  // In-flight requests have handed over their events by now: write them, within EVENTS_CLOSE_TIMEOUT_MS.
  server.addHook('onClose', async () => events.close());
  server.addHook('onClose', async () => {
    // Components first (model file watchers, sessions): nothing may reload into a closed server.
    for (const failure of await app.close()) server.log.warn(failure.message);
    await redis.close();
  });

  // Before any route: the request metrics hook into each route as it is added.
  installRequestIdHeader(server);
  if (metrics) installHttpMetrics(server, metrics, config.METRICS_ACCESS);
  tracing?.install(server);
  installErrorHandling(server);
  installAccessControl(server, config);
  await registerDocs(server, app.name);
  registerHealthRoutes(server, redis);
  registerEntityUploadRoute(server, services);
  registerEntityGetRoute(server, services);
  registerEntityDeleteRoutes(server, services);
  registerFeatureUploadRoute(server, services);
  registerFeatureGetRoute(server, services);
  registerFeatureDeleteRoute(server, services);
  registerPipelineRoutes(server, services);
  registerFeedbackRoute(server, services);
  registerModelReloadRoute(server, services);
  await options.extraRoutes?.(server, services);

  redis.connect();
  try {
    await app.initialize({ log: server.log });
  } catch (error) {
    await app.close();
    await events.close();
    await redis.close();
    metrics?.close();
    await tracing?.shutdown();
    throw new AppLoadError(`The app ${app.name} failed to start: ${(error as Error).message}`, error);
  }
  await server.ready();
  return server;
}
