import type { FeatureStore } from '../features/feature-store.js';
import type { EntityIndex } from '../index/entity-index.js';
import type { Pipeline } from './define-pipeline.js';
import type { FeaturePlan } from './feature-plan.js';
import { computeRealtimeFeatures, StoredFeatureFetch } from './features-phase.js';
import { discoverEntities, hydrate } from './hydrate.js';
import { RequestContext, runInContext } from './request-context.js';
import type { StageObserver } from './stage-timing.js';

/** The stores a pipeline reads. */
export interface PipelineStores {
  readonly index: EntityIndex;
  readonly features: FeatureStore;
}

/** What the server adds to a request. All optional. */
export interface RunOptions {
  /** Told when each stage ends (metrics, spans). */
  readonly stages?: StageObserver | undefined;
}

/**
 * Serves one request of a pipeline: checks it, hydrates its entities while reading the stored
 * features it needs (the two first MGETs go out together), computes real-time features, then
 * runs the pipeline — all inside a fresh {@link RequestContext}.
 */
export function runPipeline(
  pipeline: Pipeline,
  plan: FeaturePlan,
  request: Record<string, unknown>,
  stores: PipelineStores,
  options: RunOptions = {},
): Promise<unknown> {
  pipeline.validate(request);
  const context = new RequestContext(pipeline.name, request);
  context.stageObserver = options.stages;
  return runInContext(context, async () => {
    const start = performance.now();
    const firstLevel = discoverEntities(request, pipeline.slots);
    const idsByType = new Map<string, string[]>();
    for (const { type, id } of firstLevel) {
      const ids = idsByType.get(type.name);
      if (ids) ids.push(id);
      else idsByType.set(type.name, [id]);
    }
    const entityRead = stores.index.readMany(firstLevel.map(({ type, id }) => ({ type: type.name, id })));
    const featureFetch = new StoredFeatureFetch(context, stores.features, plan, idsByType);
    await hydrate(context, stores.index, firstLevel, entityRead);
    context.stageEnded('hydrate', start);
    await featureFetch.complete();
    // From the start too: the stored-feature read began with hydration, not after it.
    const fetched = context.stageEnded('features', start);
    await computeRealtimeFeatures(context, plan);
    context.stageEnded('realtime_features', fetched);
    return pipeline.execute(context, plan);
  });
}
