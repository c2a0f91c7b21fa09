import type { FastifyRequest } from 'fastify';
import type { RankdApp } from '../app/define-app.js';
import type { Config } from '../config/index.js';
import type { EntityIndex } from '../entity-index/entity-index.js';
import type { EventSink } from '../events/event-sink.js';
import type { FeatureStore } from '../features/feature-store.js';
import type { RankdMetrics } from '../observability/metrics.js';
import type { RedisConnection } from '../redis/connection.js';
import type { StageObserver } from '../request/stage-timing.js';

/** What route handlers work with: built once per server by `buildServer`. */
export interface Services {
  readonly config: Config;
  readonly app: RankdApp;
  readonly redis: RedisConnection;
  readonly index: EntityIndex;
  readonly features: FeatureStore;
  /** This server's Prometheus metrics (docs/observability.md); undefined when `METRICS_ENABLED=false`. */
  readonly metrics: RankdMetrics | undefined;
  /** What times a request's pipeline stages: metrics, and spans when tracing is on; undefined when neither is. */
  readonly stageObserverFor: (request: FastifyRequest) => StageObserver | undefined;
  /** Where requests' events and feedback go (docs/events.md); `events.stats()` for metrics. */
  readonly events: EventSink;
}
