import type { BusinessLogicStep, ScoredCandidate } from '../business-logic/define-business-logic.js';
import type { EntityOf, EntityType } from '../entities/define-entity.js';
import { INTERLEAVING } from '../events/recorder.js';
import type { InterleavingExperiment } from '../experiments/define-interleaving.js';
import { selectedModel } from '../experiments/experiment-model.js';
import { draftCoin, type InterleavingTeam, teamDraft } from '../experiments/team-draft.js';
import type { Model } from '../models/define-model.js';
import type { Pagination } from '../request/pagination.js';
import type { RequestContext } from '../request/request-context.js';
import { BusinessLogicTrace } from './business-logic-trace.js';
import { explainedResponse } from './explain-response.js';
import type { Overrides } from './overrides.js';
import {
  applyBusinessLogic,
  rankingResponse,
  recordScores,
  recordShownFeatures,
  scoreCandidates,
  takePage,
} from './ranking-stages.js';

/** What an interleaved request takes from its pipeline. */
export interface InterleavedRanking<E extends EntityType> {
  readonly experiment: InterleavingExperiment<E>;
  /** The pipeline's model: the control unless the experiment names one, and every ranker of a variant experiment. */
  readonly model: Model<E>;
  /** The business-logic steps the request runs. */
  readonly steps: ReadonlyArray<BusinessLogicStep<E>>;
  readonly idField: string;
  readonly entityType: string;
  /** The request's own entities' features, logged with the page (see `recordShownFeatures`). */
  readonly requestFeatures: readonly string[];
}

/** What the events and the explanation say of a ranker. */
interface RankerFacts {
  readonly model: string;
  readonly version: string | null;
  readonly variant?: string;
}

/** One ranker's list: its model's scores, then the pipeline's business logic. */
interface RankerRun<E extends EntityType> {
  readonly team: InterleavingTeam;
  readonly used: Model<E>;
  readonly facts: RankerFacts;
  readonly list: Array<ScoredCandidate<E>>;
  readonly trace: BusinessLogicTrace | undefined;
}

const TEAMS: readonly InterleavingTeam[] = ['control', 'challenger'];

/**
 * One ranker's list, as that ranker's page would be alone: its model scores (a variant ranker:
 * with its variant assigned for the time of the run), then every business-logic step. MODEL and
 * BUSINESS_LOGIC events are recorded for both rankers.
 */
async function runRanker<E extends EntityType>(
  context: RequestContext,
  setup: InterleavedRanking<E>,
  team: InterleavingTeam,
  candidates: Array<EntityOf<E>>,
  explain: boolean,
): Promise<RankerRun<E>> {
  const ranker = setup.experiment.rankers[team];
  const forced = ranker.kind === 'variant' ? ranker : undefined;
  const previous = forced === undefined ? undefined : context.variants.get(forced.experiment.id);
  if (forced !== undefined)
    context.variants.set(forced.experiment.id, { name: forced.variant.name, params: forced.variant.params });
  try {
    const model = ranker.kind === 'model' ? (ranker.model ?? setup.model) : setup.model;
    const used = selectedModel(model);
    const version = used.version ?? null;
    const request = context.request;
    let clock = performance.now();
    const scored = await scoreCandidates(model, candidates, request, setup.idField);
    clock = context.stageEnded('model', clock);
    recordScores(
      context,
      { name: used.name, version, features: used.features ?? [] },
      scored,
      setup.entityType,
    );
    const trace = explain ? new BusinessLogicTrace() : undefined;
    const list = await applyBusinessLogic(context, setup.steps, scored, request, setup.entityType, trace);
    context.stageEnded('business_logic', clock);
    const facts = {
      model: used.name,
      version,
      ...(forced === undefined ? {} : { variant: forced.variant.name }),
    };
    return { team, used, facts, list, trace };
  } finally {
    if (forced !== undefined) {
      if (previous === undefined) context.variants.delete(forced.experiment.id);
      else context.variants.set(forced.experiment.id, previous);
    }
  }
}

/**
 * Serves an interleaved page (docs/reference/experiments.md, "Interleaving"): each ranker's list
 * as its own page would be (model, then every business-logic step: filtered candidates are in
 * neither), merged by team draft with the request's own coin, then the positional steps (pin,
 * dedupe, diversity, filter) run again on the merged list, whose scores are its places
 * (count − position) so that the page stays in descending `ranked_score`. An INTERLEAVING event
 * names the ranker that placed each item shown.
 */
export async function rankInterleaved<E extends EntityType>(
  context: RequestContext,
  setup: InterleavedRanking<E>,
  pagination: Pagination,
  explain: boolean,
  overrides: Overrides | undefined,
): Promise<unknown> {
  const request = context.request;
  const candidates = request.candidates as Array<EntityOf<E>>;
  const runs: Array<RankerRun<E>> = [];
  for (const team of TEAMS) runs.push(await runRanker(context, setup, team, candidates, explain));
  const [control, challenger] = runs as [RankerRun<E>, RankerRun<E>];
  const { experiment } = setup;
  const coin = draftCoin(experiment.id, experiment.salt, String(request.request_id ?? ''));
  const merged = teamDraft(control.list, challenger.list, (c) => c.entity, coin);
  const teamOf = new Map<object, InterleavingTeam>(merged.map((p) => [p.item.entity, p.team]));
  const clock = performance.now();
  const placed = merged.map(
    (p, i): ScoredCandidate<E> => ({ entity: p.item.entity, id: p.item.id, score: merged.length - i }),
  );
  const positional = setup.steps.filter((step) => step.positional === true);
  const final = await applyBusinessLogic(context, positional, placed, request, setup.entityType);
  const page = takePage(context, final, pagination, candidates.length, setup.entityType);
  const features = [...new Set([...(control.used.features ?? []), ...(challenger.used.features ?? [])])];
  recordShownFeatures(context, features, setup.requestFeatures, page, setup.entityType);
  const rankers = { control: control.facts, challenger: challenger.facts };
  context.events.add(INTERLEAVING, {
    experiment_id: experiment.id,
    entity_identifier_type: setup.entityType,
    rankers,
    page: page.map((c) => [c.id, teamOf.get(c.entity) as InterleavingTeam]),
  });
  context.stageEnded('paginate', clock);
  const response = rankingResponse(context, page);
  if (!explain) return response;
  return explainInterleaved(context, response, page, runs, teamOf, overrides, experiment.id);
}

/**
 * The explained interleaved page: each item explained by the ranker that placed it (its model,
 * its business logic, its model position) and its place in each ranker's list; the request's
 * explanation names the experiment and its rankers.
 */
async function explainInterleaved<E extends EntityType>(
  context: RequestContext,
  response: { ranked_candidates: Array<{ candidate_id: string; ranked_score: number }> },
  page: ReadonlyArray<ScoredCandidate<E>>,
  runs: ReadonlyArray<RankerRun<E>>,
  teamOf: ReadonlyMap<object, InterleavingTeam>,
  overrides: Overrides | undefined,
  experimentId: string,
): Promise<Record<string, unknown>> {
  const ranked: Array<Record<string, unknown>> = [];
  const positions = runs.map((run) => new Map(run.list.map((c, i) => [c.entity, i + 1])));
  const dropped = new Map<string, unknown>();
  let whole: Record<string, unknown> = {};
  for (const run of runs) {
    const mine = page.flatMap((c, i) => (teamOf.get(c.entity) === run.team ? [i] : []));
    const explained = await explainedResponse(
      context,
      { ranked_candidates: mine.map((i) => response.ranked_candidates[i] as never) },
      mine.map((i) => page[i] as ScoredCandidate<E>),
      run.used as Model,
      run.trace as BusinessLogicTrace,
      overrides,
    );
    const candidates = explained.ranked_candidates as Array<{ explanation: Record<string, unknown> }>;
    mine.forEach((i, j) => {
      const candidate = candidates[j] as { explanation: Record<string, unknown> };
      const entity = (page[i] as ScoredCandidate<E>).entity;
      ranked[i] = {
        ...candidate,
        explanation: {
          ...candidate.explanation,
          interleaving: {
            ranker: run.team,
            control_position: positions[0]?.get(entity) ?? null,
            challenger_position: positions[1]?.get(entity) ?? null,
          },
        },
      };
    });
    whole = explained.explanation as Record<string, unknown>;
    for (const d of run.trace?.dropped ?? []) dropped.set(`${d.id}\u0000${d.step}`, d);
  }
  return {
    ...response,
    ranked_candidates: ranked,
    explanation: {
      ...whole,
      dropped: [...dropped.values()],
      interleaving: {
        experiment_id: experimentId,
        rankers: Object.fromEntries(runs.map((run) => [run.team, run.facts])),
      },
    },
  };
}
