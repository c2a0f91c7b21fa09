import type { FastifyRequest } from 'fastify';
import type { AppServices } from '../app/define-app.js';
import type { RankdMetrics } from '../observability/metrics.js';
import type { StageObserver } from '../request/stage-timing.js';

/**
 * What route handlers work with: built once per server by `buildServer`. An app's own server
 * extension gets the same object, seen through the part the app layer declares.
 */
export interface Services extends AppServices {
  /** This server's Prometheus metrics (docs/reference/observability.md); undefined when `METRICS_ACCESS=off`. */
  readonly metrics: RankdMetrics | undefined;
  /** What times a request's pipeline stages: metrics, and spans when tracing is on; undefined when neither is. */
  readonly stageObserverFor: (request: FastifyRequest) => StageObserver | undefined;
}
