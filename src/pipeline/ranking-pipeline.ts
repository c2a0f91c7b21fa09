import Type, { type TProperties, type TSchema } from 'typebox';
import type { BusinessLogicStep } from '../business-logic/define-business-logic.js';
import { QueryEntity } from '../entities/built-in.js';
import type { EntityOf, EntityType } from '../entities/define-entity.js';
import { AppDefinitionError } from '../errors/index.js';
import { SHADOW } from '../events/recorder.js';
import type { Experiment } from '../experiments/define-experiment.js';
import { INTERLEAVED, type InterleavingExperiment } from '../experiments/define-interleaving.js';
import { selectedModel } from '../experiments/experiment-model.js';
import type { Model } from '../models/define-model.js';
import type { RealtimeFeatures } from '../request/define-realtime-features.js';
import { type Pagination, pageSlice, paginationOf } from '../request/pagination.js';
import type { RequestContext } from '../request/request-context.js';
import { BusinessLogicTrace } from './business-logic-trace.js';
import type { Pipeline, UnreachableShardPolicy } from './define-pipeline.js';
import { explainedResponse } from './explain-response.js';
import { ExplainRequestFields } from './explain-schema.js';
import type { EntitySlot } from './hydrate.js';
import { type InterleavedRanking, rankInterleaved } from './interleaved-ranking.js';
import { checkPipelineOverrides, overridesOf, swappableModels } from './overrides.js';
import {
  applyBusinessLogic,
  rankingResponse,
  recordScores,
  recordShownFeatures,
  scoreCandidates,
  takePage,
} from './ranking-stages.js';
import { requestContextKey } from './request-context-key.js';
import {
  addRequestExample,
  PaginationFields,
  RankingResponseSchema,
  requestEntitySchema,
} from './request-schema.js';
import { runShadow, type ShadowOptions } from './shadow-run.js';

/**
 * Most candidates in one ranking request unless the pipeline says otherwise.
 */
export const DEFAULT_MAX_CANDIDATES = 1000;

/**
 * How a ranking pipeline is declared.
 */
export interface RankingPipelineOptions<E extends EntityType> {
  /** Route name, used in the operationId: `MyRankingPipeline` → `MyRankingPipeline_api_v1_ranking_post`. */
  name: string;
  /** Path under /api/v1. @defaultValue `/ranking` */
  path?: string;
  /** The candidates' entity type (the request is generic over it). */
  candidate: E;
  /** More entity fields of the request, optional, hydrated too: `{ user: UserEntity }`. */
  entities?: Readonly<Record<string, EntityType>>;
  /** More plain fields of the request (TypeBox). */
  fields?: TProperties;
  /** Real-time features computed for each request before the model runs. */
  realtimeFeatures?: readonly RealtimeFeatures[];
  model: Model<E>;
  /** Steps run in order on the scored, sorted candidates. */
  businessLogic?: ReadonlyArray<BusinessLogicStep<E>>;
  /** Experiments assigned on this pipeline's requests, besides the app's (docs/reference/experiments.md). */
  experiments?: readonly Experiment[];
  /**
   * An interleaving experiment (`defineInterleaving`): on its share of requests the page is merged
   * from two rankers by team draft, and each item shown is credited to the ranker that placed it
   * (docs/reference/experiments.md, "Interleaving"). @defaultValue none
   */
  interleaving?: InterleavingExperiment<E>;
  /**
   * A model run in the shadow of `model` on a share of requests, after the response is sent, from
   * the same inputs; both rankings are logged (SHADOW events) for `rankd evaluate --shadow`
   * (docs/reference/models.md, "Shadow runs"). @defaultValue none
   */
  shadow?: ShadowOptions<E>;
  /** @defaultValue 1000 */
  maxCandidates?: number;
  /**
   * When some masters of a Redis Cluster cannot answer: `degrade` ranks anyway (what they hold
   * counts as not found, and the answer says so), `fail` answers 503. @defaultValue the app's
   * `onUnreachableShard`, else `degrade`
   */
  onUnreachableShard?: UnreachableShardPolicy;
  summary?: string;
  description?: string;
  /**
   * The example request of the API reference (`/redoc`, `/openapi.json`), e.g. with ids from
   * your catalogue; checked at start like a request. @defaultValue three candidates by id, and
   * the required fields of `fields` made up from their schemas
   */
  example?: Record<string, unknown>;
}

/** The ranking request as the pipeline reads it. */
interface RankingRequest extends Partial<Pagination> {
  request_id: string;
  candidates: Array<Record<string, unknown>>;
  include_events?: boolean;
  [field: string]: unknown;
}

/**
 * Declares a ranking pipeline: hydrated candidates → model scores → business logic → stable sort
 * by descending score → one page. See docs/reference/ranking.md.
 *
 * @example
 * ```ts
 * import { defineRankingPipeline, Type, UserEntity } from 'rankd';
 * import { FeaturedBrand, InStockOnly, SoldOutDemotion } from './pipelines/product-ranking/business-logic.js';
 * import { RankingModel } from './pipelines/product-ranking/models.js';
 * import { ProductFacts, UserAffinity } from './pipelines/product-ranking/realtime-features.js';
 * import { Product } from './pipelines/product-ranking/schemas.js';
 * import { TextMatch } from './pipelines/product-ranking/text-match.js';
 *
 * // POST /api/v1/ranking: hydrate, features, model, business logic, one page.
 * export const MyRankingPipeline = defineRankingPipeline({
 *   name: 'MyRankingPipeline',
 *   path: '/ranking',
 *   candidate: Product,
 *   entities: { user: UserEntity },
 *   fields: { in_stock_only: Type.Optional(Type.Boolean({ default: false })) },
 *   realtimeFeatures: [TextMatch, ProductFacts, UserAffinity],
 *   model: RankingModel,
 *   businessLogic: [InStockOnly, SoldOutDemotion, FeaturedBrand],
 * });
 * ```
 */
export function defineRankingPipeline<E extends EntityType>(options: RankingPipelineOptions<E>): Pipeline {
  const maxCandidates = options.maxCandidates ?? DEFAULT_MAX_CANDIDATES;
  const extraEntities: Record<string, TSchema> = {};
  const slots: EntitySlot[] = [
    { field: 'query', type: QueryEntity },
    { field: 'candidates', type: options.candidate },
  ];
  for (const [field, type] of Object.entries(options.entities ?? {})) {
    extraEntities[field] = Type.Optional(requestEntitySchema(type));
    slots.push({ field, type });
  }
  const requestSchema = Type.Object(
    {
      ...PaginationFields,
      request_id: Type.String({
        minLength: 1,
        maxLength: 1024,
        description: 'Chosen by the caller; joins events and feedback',
      }),
      include_events: Type.Optional(
        Type.Boolean({ default: false, description: 'Return the events of the request' }),
      ),
      ...ExplainRequestFields,
      query: Type.Optional(requestEntitySchema(QueryEntity)),
      candidates: Type.Array(requestEntitySchema(options.candidate), {
        maxItems: maxCandidates,
        description: `Items to rank, at most ${maxCandidates}; each needs only its id`,
      }),
      ...extraEntities,
      ...(options.fields ?? {}),
    },
    { title: `${options.name}Request`, additionalProperties: false },
  );
  const model = options.model;
  const steps = options.businessLogic ?? [];
  const { interleaving, shadow } = options;
  if (shadow !== undefined && !(Number.isFinite(shadow.share) && shadow.share >= 0 && shadow.share <= 1))
    throw new AppDefinitionError(`${options.name}: the shadow's share is ${shadow.share}; it is from 0 to 1`);
  // Started with the app and planned with the pipeline: their features are read with the request's.
  const extraModels = [
    ...(interleaving === undefined
      ? []
      : Object.values(interleaving.rankers).flatMap((r) => (r.kind === 'model' && r.model ? [r.model] : []))),
    ...(shadow === undefined ? [] : [shadow.model]),
  ];
  const extraExperiments = [
    ...(interleaving === undefined ? [] : [interleaving]),
    ...(interleaving?.rankers.control.kind === 'variant' ? [interleaving.rankers.control.experiment] : []),
  ];
  const models = swappableModels(model);
  const validate = (request: Record<string, unknown>) => {
    const ranking = request as RankingRequest;
    pageSlice(ranking.candidates.length, paginationOf(ranking));
    checkPipelineOverrides(overridesOf(request), steps as readonly BusinessLogicStep[], models);
  };
  addRequestExample(
    options.name,
    requestSchema,
    options.example,
    {
      request_id: 'example-request-1',
      candidates: ['example-1', 'example-2', 'example-3'].map((id) => ({ [options.candidate.idField]: id })),
    },
    validate,
  );
  const idField = options.candidate.idField;
  const entityType = options.candidate.name;
  // What the request's own entities (user, query) may give the model, through its features or
  // the real-time features computed from them: logged once per request for the training data.
  const requestFeatures = [
    ...new Set([
      ...(options.realtimeFeatures ?? []).flatMap((group) => group.requires),
      ...(model.features ?? []),
    ]),
  ];

  // The request's own fields (besides its entities): part of what it asked (requestContextKey).
  const contextFields = Object.keys(options.fields ?? {});

  return {
    kind: 'pipeline',
    name: options.name,
    path: options.path ?? '/ranking',
    summary: options.summary ?? `Rank ${options.candidate.name} candidates (${options.name})`,
    description:
      options.description ??
      'Candidates may carry only their id: they are hydrated from the index, features are fetched and computed, ' +
        'the model scores them, and one page is returned in descending `ranked_score`.',
    requestSchema,
    responseSchema: RankingResponseSchema,
    slots,
    components: [model, ...steps, ...new Set(extraModels)],
    realtimeFeatures: options.realtimeFeatures ?? [],
    experiments: [...(options.experiments ?? []), ...extraExperiments],
    models: [...models.keys()],
    validate,
    onUnreachableShard: options.onUnreachableShard,
    // A candidate not in the index is ranked with the fields it was sent (the spec), and a master
    // that cannot answer is, for ranking, the same as not found.
    unreachableShardDefault: 'degrade',
    async execute(context: RequestContext) {
      const request = context.request as RankingRequest;
      const pagination = paginationOf(request);
      const overrides = overridesOf(request);
      const scoring = overrides?.model === undefined ? model : (models.get(overrides.model) as Model<E>);
      const skipped = overrides?.skip_business_logic;
      const active = skipped === undefined ? steps : steps.filter((step) => !skipped.includes(step.name));
      if (
        interleaving !== undefined &&
        overrides?.model === undefined &&
        context.variants.get(interleaving.id)?.name === INTERLEAVED
      ) {
        const setup: InterleavedRanking<E> = {
          experiment: interleaving,
          model,
          steps: active,
          idField,
          entityType,
          requestFeatures,
        };
        return rankInterleaved(context, setup, pagination, request.explain === true, overrides);
      }
      const trace = request.explain === true ? new BusinessLogicTrace() : undefined;
      // An experiment's model names the variant's model, so events say which one scored.
      const used = selectedModel(scoring);
      // Read before scoring, in the same synchronous step: a file model takes its loaded file at
      // the start of score(), so a hot reload cannot slip in between and mislabel the events.
      const modelVersion = used.version ?? null;
      let clock = performance.now();
      let scored = await scoreCandidates(scoring, request.candidates as Array<EntityOf<E>>, request, idField);
      clock = context.stageEnded('model', clock);
      // Nothing is kept for a shadow unless this request runs one: the model's order, before business logic.
      const shadowed =
        shadow !== undefined && context.events.sends(SHADOW) && Math.random() < shadow.share
          ? { scored: [...scored], scores: Float64Array.from(scored, (c) => c.score) }
          : undefined;
      recordScores(
        context,
        { name: used.name, version: modelVersion, features: used.features ?? [] },
        scored,
        entityType,
      );
      scored = await applyBusinessLogic(context, active, scored, request, entityType, trace);
      clock = context.stageEnded('business_logic', clock);
      const page = takePage(context, scored, pagination, request.candidates.length, entityType);
      recordShownFeatures(context, used.features ?? [], requestFeatures, page, entityType, () =>
        requestContextKey(request, slots, contextFields),
      );
      context.stageEnded('paginate', clock);
      if (shadowed !== undefined) {
        const served = { model: used as Model, version: modelVersion };
        const { scored: all, scores } = shadowed;
        context.afterResponse = () =>
          runShadow(
            context,
            (shadow as ShadowOptions<E>).model,
            served,
            all,
            scores,
            request,
            idField,
            entityType,
            pagination.user_page_size,
          );
      }
      const response = rankingResponse(context, page);
      if (trace === undefined) return response;
      return explainedResponse(context, response, page, used as Model, trace, overrides);
    },
  };
}
