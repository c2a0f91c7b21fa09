/**
 * `rankd/client`: a typed client of a rankd server for browsers and other programs. It needs only
 * `fetch` and imports nothing of the server, so bundling it pulls in nothing else.
 * @module
 */
export {
  type CallOptions,
  type ClientOptions,
  createClient,
  type EntitiesApi,
  type FeaturesApi,
  type RankdClient,
} from './client.js';
export { type ErrorBody, type FieldProblem, RankdClientError } from './errors.js';
export type {
  Entity,
  EntityDeleteResponse,
  EntityGetResponse,
  EntityId,
  EntityTypeName,
  EntityUploadResponse,
  FeatureDeleteResponse,
  FeatureGetResponse,
  FeatureGetResult,
  FeatureRow,
  FeatureUploadResponse,
  FeatureViewName,
  FeatureViewState,
  FeedbackItem,
  FeedbackResponse,
  PipelineKey,
  PipelineRequest,
  PipelineResponse,
  PipelineRoute,
  RankedCandidate,
  RankingResponse,
  RowId,
  UntypedPaths,
} from './types.js';
