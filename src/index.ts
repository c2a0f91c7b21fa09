/**
 * rankd's front door: what an app's modules import to declare entities, features, pipelines,
 * models, business logic and experiments. Serving it yourself is `rankd/server`; training models
 * offline is `rankd/training`; a project's tests use `rankd/testing`; other programs talk to a
 * server with `rankd/client`.
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
export {
  BrandEntity,
  CategoryEntity,
  ProductEntity,
  QueryEntity,
  RequestEntity,
  UserEntity,
} from './entities/built-in.js';
export {
  defineEntity,
  type EntityOf,
  type EntityReference,
  type EntityType,
  type EntityTypeOptions,
  type ServiceEntity,
} from './entities/define-entity.js';
export type { Identifier } from './entities/identifier.js';
export {
  AppDefinitionError,
  ErrorCode,
  type ErrorCodeValue,
  ExperimentLookupError,
  FeatureLookupError,
  ModelInvalidError,
  ValidationError,
} from './errors/catalogue.js';
export { type FieldProblem, RankdError } from './errors/rankd-error.js';
export type { AssignmentAttributes, ExperimentProvider } from './experiments/assign.js';
export {
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
export type { Pipeline, UnreachableShardPolicy } from './pipeline/define-pipeline.js';
export { defineRankingPipeline, type RankingPipelineOptions } from './pipeline/ranking-pipeline.js';
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
export type { Degradation, DegradedNode } from './request/degradation.js';
export { logEvent } from './request/log-event.js';
export {
  type AssignedVariant,
  currentContext,
  type EntityRef,
  get_feature,
  getFeature,
  getFeatures,
  identifierOf,
  type RequestContext,
} from './request/request-context.js';
export { cosine, dot, embeddingSimilarity } from './request/similarity.js';
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
