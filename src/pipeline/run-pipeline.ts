import type { EntityIndex } from '../entity-index/entity-index.js';
import { ValidationError } from '../errors/index.js';
import { EventPolicy, EventRecorder, type RequestEvents } from '../events/recorder.js';
import { assignExperiments, type ExperimentScope } from '../experiments/assign.js';
import type { FeatureStore } from '../features/feature-store.js';
import type { UnreadKeys } from '../redis/outages.js';
import type { Degradation } from '../request/degradation.js';
import { ReadCacheUse } from '../request/read-cache-use.js';
import { RequestContext, runInContext } from '../request/request-context.js';
import type { StageObserver } from '../request/stage-timing.js';
import { type Pipeline, routeOf, type UnreachableShardPolicy } from './define-pipeline.js';
import type { FeaturePlan } from './feature-plan.js';
import { computeRealtimeFeatures, StoredFeatureFetch } from './features-phase.js';
import { candidatesNotFound, discoverEntities, hydrate, readLevel } from './hydrate.js';
import { checkVariantOverrides, overridesOf, variantOverrideProblems } from './overrides.js';

/** The stores a pipeline reads. */
export interface PipelineStores {
  readonly index: EntityIndex;
  readonly features: FeatureStore;
}

/** What the server adds to a request: its event settings and experiments. All optional. */
export interface RunOptions {
  /** Which events go to the sink. @defaultValue none (events only for `include_events`) */
  readonly events?: EventPolicy;
  /** The request's `x-rankd-run-id` header, recorded in every event. */
  readonly runId?: string | null;
  /** Experiments to assign the request to, after hydration. */
  readonly experiments?: ExperimentScope | undefined;
  /** Given the events for the sink once the pipeline has its result (not called when there are none). */
  readonly onEvents?: (events: RequestEvents) => void;
  /**
   * Given, instead of a call to `onEvents`, the work a request left for after its response (a
   * shadow model's run: `RequestContext.afterResponse`), to start once the response is sent; it
   * resolves with the request's events for the sink. Without it that work is not done.
   */
  readonly afterResponse?: (task: () => Promise<RequestEvents | undefined>) => void;
  /** Told when each stage ends (metrics, spans). */
  readonly stages?: StageObserver | undefined;
  /**
   * What to do when some Redis Cluster masters cannot answer (see {@link UnreachableShardPolicy}),
   * as the app resolved it for this pipeline. @defaultValue `fail`
   */
  readonly onUnreachableShard?: UnreachableShardPolicy;
  /** Given what the request could not read, once it has its result, when it was served degraded. */
  readonly onDegraded?: (degradation: Degradation) => void;
  /** Given how many of the request's candidates the index does not hold, once it has its result, when some. */
  readonly onNotInIndex?: (candidates: number) => void;
  /**
   * The pipeline's route, which every event names, as the app worked it out once.
   * @defaultValue `routeOf(pipeline)`, worked out again (two regular expressions) for this request
   */
  readonly route?: string;
  /** Whether response bodies may name Redis nodes (`EXPOSE_REDIS_ADDRESS`). @defaultValue `false` */
  readonly exposeRedisAddress?: boolean;
}

/**
 * Serves one request of a pipeline: checks it, hydrates its entities while reading the stored
 * features it needs (the two first MGETs go out together), assigns its experiments, computes
 * real-time features, then runs the pipeline — all inside a fresh {@link RequestContext}.
 */
export function runPipeline(
  pipeline: Pipeline,
  plan: FeaturePlan,
  request: Record<string, unknown>,
  stores: PipelineStores,
  options: RunOptions = {},
): Promise<unknown> {
  const overrides = overridesOf(request);
  try {
    pipeline.validate(request);
  } catch (error) {
    // Its unknown steps or model refused: the unknown variants of the same overrides go in that 422 too.
    if (error instanceof ValidationError && overrides?.variants !== undefined) {
      const unknown = variantOverrideProblems(overrides, options.experiments);
      if (unknown.length > 0)
        throw new ValidationError([...(error.problems ?? []), ...unknown], error.message);
    }
    throw error;
  }
  checkVariantOverrides(overrides, options.experiments);
  const policy = options.events ?? EventPolicy.NONE;
  const events = new EventRecorder(
    {
      requestId: String(request.request_id ?? ''),
      apiSource: options.route ?? routeOf(pipeline),
      runId: options.runId ?? null,
    },
    {
      respond: request.include_events === true,
      sinkKinds: policy.kindsForRequest(),
      json: policy.json,
    },
  );
  const context = new RequestContext(pipeline.name, request, {
    events,
    exposeRedisAddress: options.exposeRedisAddress ?? false,
  });
  context.stageObserver = options.stages;
  // Only a request that asks for an explanation times its stages for it.
  if (request.explain === true) context.stageTimes = {};
  if (request.explain === true && stores.index.cachesReads) context.readCacheUse = new ReadCacheUse();
  return runInContext(context, async () => {
    const start = performance.now();
    const firstLevel = discoverEntities(request, pipeline.slots);
    const idsByType = new Map<string, string[]>();
    for (const { type, id } of firstLevel.entries) {
      const ids = idsByType.get(type.name);
      if (ids) ids.push(id);
      else idsByType.set(type.name, [id]);
    }
    // Three closures per request, and only for a degrading pipeline; nothing per entity.
    const degrade = options.onUnreachableShard === 'degrade';
    const onUnreadEntities = degrade
      ? (unread: UnreadKeys) => context.degraded().addEntities(unread.outages)
      : undefined;
    const onUnreadRows = degrade
      ? (unread: UnreadKeys) => context.degraded().addFeatureRows(unread.outages)
      : undefined;
    // Candidates a master could not answer for are degraded, not missing: their positions are kept apart.
    let unreadFirst: readonly number[] | undefined;
    const onUnreadFirst = degrade
      ? (unread: UnreadKeys) => {
          unreadFirst = unread.indexes;
          context.degraded().addEntities(unread.outages);
        }
      : undefined;
    const entityRead = readLevel(context, stores.index, firstLevel.entries, onUnreadFirst);
    const featureFetch = new StoredFeatureFetch(context, stores.features, plan, idsByType, onUnreadRows);
    const foundReferenced = await hydrate(context, stores.index, firstLevel, entityRead, onUnreadEntities);
    context.notInIndex = candidatesNotFound(request, firstLevel, await entityRead, unreadFirst);
    context.stageEnded('hydrate', start);
    await assignExperiments(context, options.experiments, overrides?.variants);
    // Groups that need only entities run while the stored rows are still on their way: on a
    // large request Redis is still answering the feature read when hydration is done.
    const realtimeStart = performance.now();
    await computeRealtimeFeatures(context, plan.realtimeBeforeStored);
    // From the start too: the stored-feature read began with hydration, not after it.
    context.stageEnded('features', start, await featureFetch.complete(foundReferenced));
    await computeRealtimeFeatures(context, plan.realtimeAfterStored);
    context.stageEnded('realtime_features', realtimeStart);
    const result = await pipeline.execute(context, plan);
    if (context.degradation !== undefined) options.onDegraded?.(context.degradation);
    if (context.notInIndex !== undefined) options.onNotInIndex?.(context.notInIndex.length);
    const later = context.afterResponse;
    if (later !== undefined && options.afterResponse !== undefined) {
      options.afterResponse(async () => {
        await runInContext(context, later);
        return events.forSink();
      });
      return result;
    }
    const forSink = events.forSink();
    if (forSink !== undefined) options.onEvents?.(forSink);
    return result;
  });
}
