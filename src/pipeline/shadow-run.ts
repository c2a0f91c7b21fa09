import type { ScoredCandidate } from '../business-logic/define-business-logic.js';
import type { EntityType } from '../entities/define-entity.js';
import { SHADOW } from '../events/recorder.js';
import type { Model } from '../models/define-model.js';
import { explainModel } from '../models/explain/explain-model.js';
import type { Explanation } from '../models/explain/explanation.js';
import type { RankdRequest } from '../request/component.js';
import type { RequestContext } from '../request/request-context.js';
import { scoreCandidates } from './ranking-stages.js';

/**
 * A ranking pipeline's shadow model: scored after the response is sent, on a share of requests,
 * and logged beside the served ranking (SHADOW events; `rankd evaluate --shadow`).
 */
export interface ShadowOptions<E extends EntityType> {
  /** The model tried in the shadow of the served one. */
  model: Model<E>;
  /** Share of requests (from 0 to 1) it runs on. */
  share: number;
}

/** How many of each ranking a SHADOW event keeps: the page, and at least this many. */
const MIN_DEPTH = 20;
/** The items the two rankings disagree on most, explained in each SHADOW event. */
const MOVERS = 3;
/** The largest contributions kept per explanation. */
const CONTRIBUTIONS = 5;

/** The model that served a request, as its events name it. */
export interface ServedModel {
  readonly model: Model;
  readonly version: string | null;
}

/** Indices of `scores` by descending score; ties keep their order, as the pipeline's sort does. */
function orderOf(scores: ArrayLike<number>): number[] {
  return Array.from({ length: scores.length }, (_, i) => i).sort(
    (a, b) => (scores[b] as number) - (scores[a] as number) || a - b,
  );
}

function positionsOf(order: readonly number[]): Int32Array {
  const positions = new Int32Array(order.length);
  order.forEach((index, position) => {
    positions[index] = position;
  });
  return positions;
}

/** An explanation as a SHADOW event keeps it: the score, and the largest contributions. */
function briefly(e: Explanation | undefined) {
  if (e === undefined) return null;
  const contributions =
    e.contributions === null
      ? null
      : Object.fromEntries(
          Object.entries(e.contributions)
            .sort((a, b) => Math.abs(b[1]) - Math.abs(a[1]))
            .slice(0, CONTRIBUTIONS),
        );
  return { score: e.score, contributions, ...(e.reason === undefined ? {} : { reason: e.reason }) };
}

/**
 * Scores the request's candidates with the shadow model, from the feature table the served model
 * read, and records a SHADOW event: the first `max(page size, 20)` of both rankings (ids and
 * scores, by model score alone: business logic is the same for both), and the items of either
 * first page whose positions differ most, each explained by both models. Runs after the response
 * is sent (`RequestContext.afterResponse`); a failing shadow model is recorded, not thrown.
 */
export async function runShadow<E extends EntityType>(
  context: RequestContext,
  shadow: Model<E>,
  served: ServedModel,
  scored: ReadonlyArray<ScoredCandidate<E>>,
  servedScores: Float64Array,
  request: RankdRequest,
  idField: string,
  entityType: string,
  pageSize: number,
): Promise<void> {
  const base = {
    entity_identifier_type: entityType,
    served_model: { name: served.model.name, version: served.version },
    shadow_model: { name: shadow.name, version: shadow.version ?? null },
    candidates: scored.length,
    k: pageSize,
  };
  const entities = scored.map((c) => c.entity);
  try {
    const shadowScored = await scoreCandidates(shadow, entities, request, idField);
    const shadowScores = Float64Array.from(shadowScored, (c) => c.score);
    const servedOrder = orderOf(servedScores);
    const shadowOrder = orderOf(shadowScores);
    const depth = Math.min(scored.length, Math.max(pageSize, MIN_DEPTH));
    const top = (order: readonly number[], scores: Float64Array) =>
      order.slice(0, depth).map((i) => [(scored[i] as ScoredCandidate<E>).id, scores[i]]);
    const servedAt = positionsOf(servedOrder);
    const shadowAt = positionsOf(shadowOrder);
    const onAPage = new Set([...servedOrder.slice(0, pageSize), ...shadowOrder.slice(0, pageSize)]);
    const movers = [...onAPage]
      .map((i) => ({ i, moved: Math.abs((servedAt[i] as number) - (shadowAt[i] as number)) }))
      .filter((m) => m.moved > 0)
      .sort((a, b) => b.moved - a.moved || (servedAt[a.i] as number) - (servedAt[b.i] as number))
      .slice(0, MOVERS)
      .map((m) => m.i);
    const moved = movers.map((i) => entities[i] as object);
    const [servedWhy, shadowWhy] =
      moved.length === 0
        ? [[], []]
        : [
            await explainModel(served.model, moved, request),
            await explainModel(shadow as Model, moved, request),
          ];
    context.events.addForSink(SHADOW, {
      ...base,
      served: top(servedOrder, servedScores),
      shadow: top(shadowOrder, shadowScores),
      movers: movers.map((i, m) => ({
        entity_identifier: (scored[i] as ScoredCandidate<E>).id,
        served_position: servedAt[i],
        shadow_position: shadowAt[i],
        served: briefly(servedWhy[m]),
        shadow: briefly(shadowWhy[m]),
      })),
    });
  } catch (error) {
    context.events.addForSink(SHADOW, {
      ...base,
      error: error instanceof Error ? error.message : String(error),
    });
  }
}
