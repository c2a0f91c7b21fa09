import Type, { type TProperties, type TSchema } from 'typebox';
import {
  type BusinessLogicStep,
  type ScoredCandidate,
  sortByScore,
} from '../business-logic/define-business-logic.js';
import { QueryEntity } from '../entities/built-in.js';
import type { EntityOf, EntityType } from '../entities/define-entity.js';
import { idOf } from '../entities/identifier.js';
import { recordFeatures } from '../events/feature-events.js';
import type { Experiment } from '../experiments/define-experiment.js';
import { selectedModel } from '../experiments/experiment-model.js';
import type { RealtimeFeatures } from '../features/define-realtime-features.js';
import type { Model } from '../models/define-model.js';
import type { RequestContext } from '../request/request-context.js';
import type { Pipeline } from './define-pipeline.js';
import type { EntitySlot } from './hydrate.js';
import { type Pagination, pageSlice } from './pagination.js';
import { PaginationFields, RankingResponseSchema, requestEntitySchema } from './request-schema.js';

/** Most candidates in one ranking request unless the pipeline says otherwise. */
export const DEFAULT_MAX_CANDIDATES = 1000;

/** How a ranking pipeline is declared. */
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
  /** Experiments assigned on this pipeline's requests, besides the app's (docs/experiments.md). */
  experiments?: readonly Experiment[];
  /** @defaultValue 1000 */
  maxCandidates?: number;
  summary?: string;
  description?: string;
}

/** The ranking request as the pipeline reads it. */
interface RankingRequest extends Partial<Pagination> {
  request_id: string;
  candidates: Array<Record<string, unknown>>;
  include_events?: boolean;
  [field: string]: unknown;
}

function paginationOf(request: RankingRequest): Pagination {
  return {
    user_page_size: request.user_page_size ?? 10,
    user_page: request.user_page ?? 0,
    // Default: the candidates sent form one page (at least a user page, so the default sizes never clash).
    candidate_page_size:
      request.candidate_page_size ?? Math.max(request.candidates.length, request.user_page_size ?? 10),
    candidate_page: request.candidate_page ?? 0,
  };
}

/**
 * `candidates` with every score a finite number (0 otherwise). Only candidates that need it are
 * copied (a step may hand back objects it does not own): copying all of them after every step
 * was a tenth of a 1000-candidate request's garbage.
 */
function withFiniteScores<T extends { score: number }>(candidates: T[]): T[] {
  for (let i = 0; i < candidates.length; i++) {
    const c = candidates[i] as T;
    // NaN !== NaN too, so every score that is not a finite number is replaced.
    if (finiteOrZero(c.score) !== c.score) candidates[i] = { ...c, score: 0 };
  }
  return candidates;
}

function finiteOrZero(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

/**
 * Declares a ranking pipeline: hydrated candidates → model scores → business logic → stable sort
 * by descending score → one page. See docs/ranking.md.
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
  const idField = options.candidate.idField;
  const entityType = options.candidate.name;

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
    components: [model, ...steps],
    realtimeFeatures: options.realtimeFeatures ?? [],
    experiments: options.experiments ?? [],
    validate(request) {
      const ranking = request as RankingRequest;
      pageSlice(ranking.candidates.length, paginationOf(ranking));
    },
    async execute(context: RequestContext) {
      const request = context.request as RankingRequest;
      const events = context.events;
      const candidates = request.candidates as Array<EntityOf<E>>;
      // An experiment's model names the variant's model, so events say which one scored.
      const used = selectedModel(model);
      // Read before scoring, in the same synchronous step: a file model takes its loaded file at
      // the start of score(), so a hot reload cannot slip in between and mislabel the events.
      const modelVersion = used.version ?? null;
      let clock = performance.now();
      const scores = await model.score(candidates, request);
      clock = context.stageEnded('model', clock);
      let scored: Array<ScoredCandidate<E>> = candidates.map((entity, i) => ({
        entity,
        id: idOf(idField, entity) ?? '',
        score: finiteOrZero(scores[i]),
      }));
      if (events.wants('FEATURE'))
        recordFeatures(
          context.events,
          (entity, name) => context.getFeature(entity, name),
          scored,
          entityType,
          used.features ?? [],
        );
      if (events.wants('MODEL')) {
        const data = events.json.modelEventData(used.name, modelVersion, entityType);
        for (const c of scored) events.addJson('MODEL', data(c.id, c.score));
      }
      sortByScore(scored);
      const logChanges = events.wants('BUSINESS_LOGIC');
      for (const [order, step] of steps.entries()) {
        const before = logChanges ? new Map(scored.map((c) => [c.entity, c.score])) : undefined;
        scored = sortByScore(withFiniteScores(await step.apply(scored, request)));
        if (before) {
          const data = events.json.businessLogicEventData(entityType, order, step.name);
          for (const c of scored) {
            const old = before.get(c.entity);
            if (old !== undefined && old !== c.score)
              events.addJson('BUSINESS_LOGIC', data(c.id, old, c.score));
          }
        }
      }
      clock = context.stageEnded('business_logic', clock);
      const [start] = pageSlice(request.candidates.length, paginationOf(request));
      const page = scored.slice(start, start + paginationOf(request).user_page_size);
      if (events.wants('CANDIDATE')) {
        const data = events.json.placementEventData('candidate', entityType);
        for (const [order, c] of scored.entries()) events.addJson('CANDIDATE', data(c.id, c.score, order));
      }
      if (events.wants('IMPRESSION')) {
        const data = events.json.placementEventData('impression', entityType);
        for (const [order, c] of page.entries()) events.addJson('IMPRESSION', data(c.id, c.score, order));
      }
      const ranked = page.map((c) => ({ candidate_id: c.id, ranked_score: c.score }));
      context.stageEnded('paginate', clock);
      return events.respond
        ? { ranked_candidates: ranked, events: events.events }
        : { ranked_candidates: ranked };
    },
  };
}
