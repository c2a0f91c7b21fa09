/**
 * The stages of a ranking request after its features are ready, in the order
 * `defineRankingPipeline`'s `execute` runs them: score, record the scores, business logic, page.
 * Each stage records its own events on the request's recorder.
 */
import {
  type BusinessLogicStep,
  type ScoredCandidate,
  sortByScore,
} from '../business-logic/define-business-logic.js';
import type { EntityOf, EntityType } from '../entities/define-entity.js';
import { idOf } from '../entities/identifier.js';
import { recordFeatures } from '../events/feature-events.js';
import { FEATURE_ROWS } from '../events/recorder.js';
import type { FeatureValue } from '../features/feature-kind.js';
import type { Model } from '../models/define-model.js';
import type { RankdRequest } from '../request/component.js';
import { type Pagination, pageSlice } from '../request/pagination.js';
import type { RequestContext } from '../request/request-context.js';
import type { BusinessLogicTrace } from './business-logic-trace.js';

/** The model that scored a request, as its events name it. */
export interface ScoringModel {
  readonly name: string;
  readonly version: string | null;
  /** The features it declared: recorded as FEATURE events. */
  readonly features: readonly string[];
}

function finiteOrZero(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
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

/** Stage 1: the model scores the candidates; any score that is not a finite number counts as 0. */
export async function scoreCandidates<E extends EntityType>(
  model: Model<E>,
  candidates: Array<EntityOf<E>>,
  request: RankdRequest,
  idField: string,
): Promise<Array<ScoredCandidate<E>>> {
  const scores = await model.score(candidates, request);
  return candidates.map((entity, i) => ({
    entity,
    id: idOf(idField, entity) ?? '',
    score: finiteOrZero(scores[i]),
  }));
}

/** Stage 2: FEATURE events (the values the model read) and MODEL events (its scores), as the sink wants them. */
export function recordScores<E extends EntityType>(
  context: RequestContext,
  model: ScoringModel,
  scored: ReadonlyArray<ScoredCandidate<E>>,
  entityType: string,
): void {
  const events = context.events;
  if (events.wants('FEATURE'))
    recordFeatures(
      events,
      (entity, name) => context.getFeature(entity, name),
      scored,
      entityType,
      model.features,
    );
  if (events.wants('MODEL')) {
    const data = events.json.modelEventData(model.name, model.version, entityType);
    for (const c of scored) events.addJson('MODEL', data(c.id, c.score));
  }
}

/** A feature value as JSON takes it: a vector (typed array) as a list of numbers. */
function jsonValue(value: FeatureValue | null): unknown {
  return ArrayBuffer.isView(value) ? Array.from(value as unknown as ArrayLike<number>) : value;
}

/**
 * The training data's event (`EVENTS_SHOWN_FEATURES`), one per request: each value the model read
 * for each candidate shown, as a row under the model's feature names, and the features of the
 * request's own entities (its user, its query) that the model or the real-time features read
 * (`requestFeatures`, e.g. `user_profile:price_sensitivity` of the request's user). One event
 * whose names are written once: per-value FEATURE events of a page cost several times more.
 * `requestContext` (`requestContextKey`): what the request asked, for the position-bias estimate.
 */
export function recordShownFeatures<E extends EntityType>(
  context: RequestContext,
  modelFeatures: readonly string[],
  requestFeatures: readonly string[],
  page: ReadonlyArray<ScoredCandidate<E>>,
  entityType: string,
  requestContext?: () => string,
): void {
  const events = context.events;
  if (!events.sends(FEATURE_ROWS) || page.length === 0) return;
  const read = context.featureReader(page.map((c) => c.entity));
  const names: string[] = [];
  const columns: Array<ReadonlyArray<FeatureValue | null>> = [];
  for (const name of modelFeatures) {
    try {
      columns.push(read(name));
      names.push(name);
    } catch {
      // A feature the candidate alone cannot name (a pair with several partners): left out.
    }
  }
  const rows = page.map((c, i) => [c.id, columns.map((column) => jsonValue(column[i] ?? null))]);
  const shared: Record<string, unknown> = {};
  for (const name of requestFeatures) {
    const types = context.features.entityTypesOf(name.slice(0, name.indexOf(':')));
    const type = types?.length === 1 ? types[0] : undefined;
    if (type === undefined || type === entityType) continue;
    const entities = context.entitiesByType.get(type);
    if (entities === undefined || entities.size !== 1) continue;
    const [entity] = entities.values();
    try {
      shared[name] = jsonValue(context.getFeature(entity as object, name));
    } catch {}
  }
  events.addForSink(FEATURE_ROWS, {
    entity_identifier_type: entityType,
    feature_names: names,
    rows,
    request_features: shared,
    ...(requestContext === undefined ? {} : { request_context: requestContext() }),
  });
}

/**
 * Stage 3: sorts by descending score, then runs each business-logic step in order on the sorted
 * candidates, sorting again after each; a BUSINESS_LOGIC event per score a step changed. With a
 * `trace` (an explained request), records what each step did to each candidate.
 */
export async function applyBusinessLogic<E extends EntityType>(
  context: RequestContext,
  steps: ReadonlyArray<BusinessLogicStep<E>>,
  scored: Array<ScoredCandidate<E>>,
  request: RankdRequest,
  entityType: string,
  trace?: BusinessLogicTrace,
): Promise<Array<ScoredCandidate<E>>> {
  const events = context.events;
  sortByScore(scored);
  trace?.start(scored);
  const logChanges = events.wants('BUSINESS_LOGIC');
  for (const [order, step] of steps.entries()) {
    const before = logChanges ? new Map(scored.map((c) => [c.entity, c.score])) : undefined;
    const standing = trace?.before(scored);
    scored = sortByScore(withFiniteScores(await step.apply(scored, request, trace?.stepTrace)));
    if (standing !== undefined) trace?.after(step as BusinessLogicStep, standing, scored, request);
    if (before) {
      const data = events.json.businessLogicEventData(entityType, order, step.name);
      for (const c of scored) {
        const old = before.get(c.entity);
        if (old !== undefined && old !== c.score) events.addJson('BUSINESS_LOGIC', data(c.id, old, c.score));
      }
    }
  }
  return scored;
}

/**
 * Stage 4: the user page of the candidate page the request asked for; CANDIDATE events place every
 * ranked candidate, IMPRESSION events the ones shown. Pages are counted over the candidates the
 * request sent (`sent`), not over those a filter left: a page is where the caller asked for it.
 */
export function takePage<E extends EntityType>(
  context: RequestContext,
  scored: ReadonlyArray<ScoredCandidate<E>>,
  pagination: Pagination,
  sent: number,
  entityType: string,
): Array<ScoredCandidate<E>> {
  const events = context.events;
  const [start] = pageSlice(sent, pagination);
  const page = scored.slice(start, start + pagination.user_page_size);
  if (events.wants('CANDIDATE')) {
    const data = events.json.placementEventData('candidate', entityType);
    for (const [order, c] of scored.entries()) events.addJson('CANDIDATE', data(c.id, c.score, order));
  }
  if (events.wants('IMPRESSION')) {
    const data = events.json.placementEventData('impression', entityType);
    for (const [order, c] of page.entries()) events.addJson('IMPRESSION', data(c.id, c.score, order));
  }
  return page;
}

/**
 * The response: the page as `{candidate_id, ranked_score}`, and the events when the request asked
 * for them — with, then, what it could not read when it was served degraded.
 */
export function rankingResponse(context: RequestContext, page: ReadonlyArray<ScoredCandidate<EntityType>>) {
  const ranked = page.map((c) => ({ candidate_id: c.id, ranked_score: c.score }));
  const events = context.events;
  if (!events.respond) return { ranked_candidates: ranked };
  const degradation = context.degradation;
  return degradation === undefined
    ? { ranked_candidates: ranked, events: events.events }
    : {
        ranked_candidates: ranked,
        events: events.events,
        degraded: degradation.body(context.exposeRedisAddress),
      };
}
