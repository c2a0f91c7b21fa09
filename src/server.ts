/**
 * `rankd/server`: what a program that serves an app itself, or operates one, imports: the server
 * factory, the settings, the error catalogue with its stable codes, the answer headers, and the
 * shapes of metrics, logs, traces and events. An app's own modules need only `rankd`.
 * @module
 */
export { isRankdApp, type PlannedPipeline } from './app/define-app.js';
export { type Config, loadConfig } from './config/index.js';
export {
  AppDefinitionError,
  AppLoadError,
  AppMisuseError,
  ClusterDownError,
  ClusterNodeUnavailableError,
  ConfigError,
  ErrorCode,
  type ErrorCodeValue,
  EventSinkUnavailableError,
  ExperimentLookupError,
  FeatureLookupError,
  ForbiddenError,
  IndexValueCorruptError,
  LoopbackOnlyError,
  MalformedRequestError,
  ModelInvalidError,
  ModelNotFoundError,
  OverloadedError,
  PartialWriteError,
  RedisOutOfMemoryError,
  RedisUnavailableError,
  UnauthorizedError,
  type UnavailableNode,
  ValidationError,
  type WrittenId,
} from './errors/catalogue.js';
export { type ErrorLocation, type FieldProblem, RankdError } from './errors/rankd-error.js';
export type { EventSink, EventSinkStats } from './events/event-sink.js';
export type { FeedbackInput } from './events/feedback.js';
export { BUILT_IN_EVENT_TYPES, type RankdEvent } from './events/recorder.js';
export { type BuildServerOptions, buildServer } from './http/build-server.js';
export { DEGRADED_HEADER } from './http/degraded.js';
export { NOT_IN_INDEX_HEADER } from './http/not-in-index.js';
export type { LogStream } from './observability/logging.js';
export type { AdmissionCounts, EventCounts, RankdMetrics } from './observability/metrics.js';
export { reportModelReload } from './observability/model-reloads.js';
export type { SpanExporterLike } from './observability/tracing.js';
export type { DegradedBody } from './request/degradation.js';
export type { PipelineStage, StageObserver } from './request/stage-timing.js';
export { VERSION } from './version.js';
