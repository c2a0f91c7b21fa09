import type { TSchema } from 'typebox';
import type { Experiment } from '../experiments/define-experiment.js';
import type { Component } from '../request/component.js';
import type { RealtimeFeatures } from '../request/define-realtime-features.js';
import type { RequestContext } from '../request/request-context.js';
import type { FeaturePlan } from './feature-plan.js';
import type { EntitySlot } from './hydrate.js';

/**
 * What a pipeline does when some masters of a Redis Cluster cannot answer (a failover under way):
 * `degrade` serves the request without what they hold (their entities are ranked with the fields
 * the request sent, their feature rows read as defaults, and the answer says so); `fail` answers
 * 503, naming the nodes and their slots. On a single Redis an outage is always a 503.
 */
export type UnreachableShardPolicy = 'degrade' | 'fail';

/**
 * What every pipeline kind provides to the server, which runs the shared warm-up (hydration, features) first.
 */
export interface Pipeline {
  readonly kind: 'pipeline';
  readonly name: string;
  /** Path under `/api/v1`, e.g. `/ranking`. */
  readonly path: string;
  readonly summary: string;
  readonly description: string | undefined;
  readonly requestSchema: TSchema;
  readonly responseSchema: TSchema;
  /** Where the request's entities are, for hydration. */
  readonly slots: readonly EntitySlot[];
  readonly components: readonly Component[];
  readonly realtimeFeatures: readonly RealtimeFeatures[];
  /** Experiments assigned on this pipeline's requests, besides the app's (docs/reference/experiments.md). */
  readonly experiments?: readonly Experiment[];
  /** The pipeline's own {@link UnreachableShardPolicy}, when it sets one: wins over the app's. */
  readonly onUnreachableShard?: UnreachableShardPolicy | undefined;
  /**
   * The policy when neither the pipeline nor the app sets one: `degrade` for ranking (candidates
   * not found are ranked anyway), else `fail`. @defaultValue `fail`
   */
  readonly unreachableShardDefault?: UnreachableShardPolicy;
  /** The model names its requests' `overrides.model` accepts (a ranking pipeline's); absent when it takes none. */
  readonly models?: readonly string[];
  /** Checks the request before any Redis call (e.g. pagination); throws a 4xx RankdError. */
  validate(request: Record<string, unknown>): void;
  /** Runs the pipeline on a hydrated request whose features are in the context. */
  execute(context: RequestContext, plan: FeaturePlan): Promise<unknown>;
}

/** The route of a pipeline: `/api/v1` + its path, with one leading slash and no trailing one. */
export function routeOf(pipeline: Pick<Pipeline, 'path'>): string {
  const path = `/api/v1/${pipeline.path}`.replace(/\/{2,}/g, '/');
  return path.length > 1 ? path.replace(/\/$/, '') : path;
}

/** The OpenAPI operationId, as the predecessor made it: `MyRankingPipeline_api_v1_ranking_post`. */
export function operationIdOf(pipeline: Pick<Pipeline, 'name' | 'path'>): string {
  return `${`${pipeline.name}${routeOf(pipeline)}`.replace(/\W/g, '_')}_post`;
}
