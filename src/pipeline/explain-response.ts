import type { ScoredCandidate } from '../business-logic/define-business-logic.js';
import type { EntityType } from '../entities/define-entity.js';
import type { Model } from '../models/define-model.js';
import { explainModel } from '../models/explain/explain-model.js';
import type { Explanation } from '../models/explain/explanation.js';
import type { FeatureSource } from '../request/feature-table.js';
import type { RequestContext } from '../request/request-context.js';
import type { BusinessLogicTrace } from './business-logic-trace.js';
import type { Overrides } from './overrides.js';

/** A model input as an explanation gives it: the number the model saw and where it came from. */
interface Input {
  readonly value: number | null;
  readonly source: FeatureSource;
}

/** The inputs of an explanation with their sources, as the request's feature table holds them. */
function inputsWithSources(
  context: RequestContext,
  entity: object,
  inputs: Readonly<Record<string, number | null>>,
): Record<string, Input> {
  const identifier = context.identify(entity);
  const result: Record<string, Input> = {};
  for (const [name, value] of Object.entries(inputs))
    result[name] = { value, source: context.features.sourceOf(identifier, name) };
  return result;
}

function modelPart(context: RequestContext, entity: object, name: string, e: Explanation) {
  return {
    name,
    score: e.score,
    margin: e.margin,
    bias: e.bias,
    available: e.available,
    ...(e.reason === undefined ? {} : { reason: e.reason }),
    contributions: e.contributions,
    inputs: inputsWithSources(context, entity, e.inputs),
    ...(e.fallback === undefined ? {} : { fallback: { ...e.fallback } }),
  };
}

/** What an explanation says of a candidate the index does not hold. */
export const NOT_IN_INDEX_NOTE = 'not in the index; ranked with the fields sent';

/** What of a candidate came from the read cache, when the cache is on: its stored value and rows. */
function readCachePart(context: RequestContext, entity: object) {
  const use = context.readCacheUse;
  if (use === undefined) return {};
  const { type, id } = context.identify(entity);
  return { read_cache: use.of(type, id) };
}

/** Milliseconds rounded to the microsecond: enough for a person, short in the JSON. */
const ms = (value: number) => Math.round(value * 1000) / 1000;

/**
 * The explained ranking response: `response` (what `rankingResponse` made of the page) with an
 * `explanation` on each ranked candidate (the model `used` explained on the page's candidates,
 * the steps' trace, the position by model score alone) and on the whole (variants, overrides,
 * stage times, dropped candidates).
 */
export async function explainedResponse(
  context: RequestContext,
  response: { ranked_candidates: Array<{ candidate_id: string; ranked_score: number }> },
  page: ReadonlyArray<ScoredCandidate<EntityType>>,
  used: Model,
  trace: BusinessLogicTrace,
  overrides: Overrides | undefined,
): Promise<Record<string, unknown>> {
  const start = performance.now();
  const entities = page.map((c) => c.entity);
  const explained = await explainModel(used, entities, context.request);
  const ranked = response.ranked_candidates.map((candidate, i) => {
    const entity = entities[i] as object;
    const e = explained[i] as Explanation;
    const model = modelPart(context, entity, used.name, e);
    const stages = e.stages?.map(({ model: name, ...stage }) => modelPart(context, entity, name, stage));
    return {
      ...candidate,
      explanation: {
        model: stages === undefined ? model : { ...model, stages },
        business_logic: trace.entriesFor(entity),
        model_position: trace.modelPositions.get(entity) ?? i + 1,
        ...(context.notInIndex?.includes(entity) ? { hydration: NOT_IN_INDEX_NOTE } : {}),
        ...readCachePart(context, entity),
      },
    };
  });
  const stageMs: Record<string, number> = {};
  for (const [stage, time] of Object.entries(context.stageTimes ?? {})) stageMs[stage] = ms(time);
  stageMs.explain = ms(performance.now() - start);
  return {
    ...response,
    ranked_candidates: ranked,
    explanation: {
      variants: Object.fromEntries([...context.variants].map(([id, variant]) => [id, variant.name])),
      overrides_applied: overrides ?? null,
      stage_ms: stageMs,
      dropped: trace.dropped,
    },
  };
}
