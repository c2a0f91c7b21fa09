/**
 * rankd's public API: what app modules import.
 * @module
 */

/**
 * TypeBox's builder, re-exported so apps declare entity fields without another dependency.
 *
 * @example
 * ```ts
 * import { defineEntity, Type } from 'rankd';
 *
 * export const Order = defineEntity({
 *   name: 'order',
 *   fields: { amount: Type.Number({ default: 0 }), note: Type.Optional(Type.String()) },
 * });
 * ```
 */
export { default as Type, type Static } from 'typebox';
export {
  type AppOptions,
  type AppServices,
  defineApp,
  isRankdApp,
  type PlannedPipeline,
  type RankdApp,
  type RouteAccess,
  type ServerExtension,
} from './app/define-app.js';
export {
  type BusinessLogicStep,
  defineBusinessLogic,
  type ScoredCandidate,
  type StepChange,
  type StepNote,
  type StepTrace,
} from './business-logic/define-business-logic.js';
export {
  type BoostOptions,
  boost,
  type DedupeOptions,
  type DiversityOptions,
  dedupe,
  diversity,
  type FilterOptions,
  filter,
  type KeyBy,
  type PinOptions,
  type PinPositions,
  pin,
  type StepKey,
  type StepOptions,
} from './business-logic/index.js';
export { type Config, loadConfig } from './config/index.js';
export * from './entities/index.js';
export * from './errors/index.js';
export type { EventSink, EventSinkStats } from './events/event-sink.js';
export type { FeedbackInput } from './events/feedback.js';
export { BUILT_IN_EVENT_TYPES, type RankdEvent } from './events/recorder.js';
export type {
  AssignmentAttributes,
  ExperimentProvider,
} from './experiments/assign.js';
export {
  bucketOf,
  defineExperiment,
  type Experiment,
  type ExperimentOptions,
  type ExperimentUnit,
  type Variant,
  type VariantParams,
} from './experiments/define-experiment.js';
export {
  defineInterleaving,
  type InterleavingExperiment,
  type InterleavingOptions,
  type InterleavingRanker,
} from './experiments/define-interleaving.js';
export { type ExperimentModelOptions, experimentModel } from './experiments/experiment-model.js';
export { getExperimentVariant } from './experiments/get-variant.js';
export type { InterleavingTeam } from './experiments/team-draft.js';
export {
  defineFeatureView,
  type FeatureView,
  type FeatureViewOptions,
} from './features/define-feature-view.js';
export {
  defineRealtimeFeatures,
  type FeatureValues,
  type RankdRequest,
  type RealtimeFeatures,
} from './features/define-realtime-features.js';
export { Feature, type FeatureKind, type FeatureSpec, type FeatureValue } from './features/feature-kind.js';
export { type BuildServerOptions, buildServer } from './http/build-server.js';
export { DEGRADED_HEADER } from './http/degraded.js';
export { NOT_IN_INDEX_HEADER } from './http/not-in-index.js';
export { defineModel, type Model, type ModelOptions, type Scores } from './models/define-model.js';
export { explainModel } from './models/explain/explain-model.js';
export type { Explanation, ModelContributions, StageExplanation } from './models/explain/explanation.js';
export { featureColumns, featureMatrix } from './models/feature-matrix.js';
export type { FileModel, FileModelOptions, ReloadResult } from './models/file-model.js';
export { type GbdtModelOptions, gbdtModel } from './models/gbdt-model.js';
export { type LinearModelOptions, linearModel } from './models/linear-model.js';
export { type ChainOptions, chainModels, type ModelChain } from './models/model-chain.js';
export type { Objective } from './models/objective.js';
export { type OnnxModelOptions, onnxModel } from './models/onnx-model.js';
export {
  type RemoteModel,
  type RemoteModelOptions,
  type RemoteModelStats,
  remoteModel,
} from './models/remote-model.js';
export type { LogStream } from './observability/logging.js';
export type { AdmissionCounts, EventCounts, RankdMetrics } from './observability/metrics.js';
export { reportModelReload } from './observability/model-reloads.js';
export type { SpanExporterLike } from './observability/tracing.js';
export type { Pipeline, UnreachableShardPolicy } from './pipeline/define-pipeline.js';
export {
  DEFAULT_MAX_CANDIDATES,
  defineRankingPipeline,
  type RankingPipelineOptions,
} from './pipeline/ranking-pipeline.js';
export type { ShadowOptions } from './pipeline/shadow-run.js';
export {
  defineSingleEntityPipeline,
  type SingleEntityPipelineOptions,
} from './pipeline/single-entity-pipeline.js';
export type {
  Component,
  ComponentContext,
  ComponentLogger,
  ProvidedFeatures,
} from './request/component.js';
export type { Degradation, DegradedBody, DegradedNode } from './request/degradation.js';
export { logEvent } from './request/log-event.js';
export type { AssignedVariant } from './request/request-context.js';
export {
  currentContext,
  type EntityRef,
  get_feature,
  getFeature,
  getFeatures,
  identifierOf,
  RequestContext,
} from './request/request-context.js';
export { cosine, dot, embeddingSimilarity } from './request/similarity.js';
export type { PipelineStage, StageObserver } from './request/stage-timing.js';
export {
  type QueryMatch,
  type TextField,
  type TextFields,
  type TextMatcher,
  type TextMatcherOptions,
  type TextScores,
  textMatcher,
} from './text/text-matcher.js';
export { tokenize } from './text/words.js';
export {
  datasetFromRows,
  type FeatureImportance,
  ndcgAt,
  type RankingDataset,
  type RankingRow,
  splitByGroups,
  TrainedModel,
  TrainingInputError,
  type TrainOptions,
  type TrainProgress,
  type TreeHistory,
  trainLambdaMart,
} from './training/index.js';
export { VERSION } from './version.js';
