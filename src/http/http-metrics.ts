import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  HookHandlerDoneFunction,
  onResponseHookHandler,
} from 'fastify';
import Type from 'typebox';
import type { RankdMetrics } from '../observability/metrics.js';
import type { RouteAccess } from './access.js';
import { docLink } from './openapi-document.js';

/** The route label of requests no route matched (404s): one series, whatever the URL. */
const UNKNOWN_ROUTE = 'unknown';

/** Where `GET /metrics` is served: on this server, to whom; or not here (a port of its own in `METRICS_ACCESS`). */
type MetricsRoute = { readonly access: RouteAccess } | 'elsewhere';

/**
 * Counts and times every request by route pattern, method and status, and serves `GET /metrics`
 * unless `route` says it is served elsewhere. Must be installed before the routes: each route gets
 * its own onResponse hook that already knows its pattern (reading `request.routeOptions` would
 * build an object per request).
 */
export function installHttpMetrics(
  server: FastifyInstance,
  metrics: RankdMetrics,
  route: MetricsRoute,
): void {
  server.addHook('onRoute', (added) => {
    const recorder = metrics.httpRoute(added.url);
    const hook = (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
      recorder.record(request.method, reply.statusCode, reply.elapsedTime / 1000);
      done();
    };
    const existing = added.onResponse;
    added.onResponse = (
      existing === undefined ? [hook] : Array.isArray(existing) ? [...existing, hook] : [existing, hook]
    ) as onResponseHookHandler[];
  });
  // The not-found handler takes no route hooks, so 404s are caught by one global hook.
  const unknown = metrics.httpRoute(UNKNOWN_ROUTE);
  server.addHook('onResponse', (request, reply, done) => {
    if (request.is404) unknown.record(request.method, reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
  if (route === 'elsewhere') return;
  server.get(
    '/metrics',
    {
      config: { access: route.access },
      schema: {
        operationId: 'metrics',
        summary: 'Prometheus metrics (text format)',
        description: `What each metric means: ${docLink('observability', 'reference/observability.md')}.`,
        tags: ['observability'],
        response: { 200: Type.String({ description: 'Prometheus text exposition format 0.0.4' }) },
      },
    },
    async (_request, reply) => reply.type(metrics.contentType).send(await metrics.render()),
  );
}
