/**
 * The bodies of rankd's own routes, and the types read from an app's generated `paths` (`rankd
 * client types`). Written out rather than imported from the server: the client must compile in a
 * browser project that has none of the server's dependencies.
 * @module
 */

/**
 * An entity as stored: its id field and any fields.
 *
 * @example
 * ```ts
 * import type { Entity } from 'rankd/client';
 * const product: Entity = { product_id: 'p1', title: 'Blue candle', price: 12 };
 * ```
 */
export type Entity = Record<string, unknown>;

/**
 * An entity id: numbers are read as their decimal string.
 *
 * @example
 * ```ts
 * import type { EntityId } from 'rankd/client';
 * const ids: EntityId[] = ['p1', 42];
 * ```
 */
export type EntityId = string | number;

/**
 * A feature row's id: an entity id, or `[first, second]` for a pair view.
 *
 * @example
 * ```ts
 * import type { RowId } from 'rankd/client';
 * const rows: RowId[] = ['p1', ['p1', 'u1']];
 * ```
 */
export type RowId = EntityId | [EntityId, EntityId];

/**
 * The answer to an upload of entities.
 *
 * @example
 * ```ts
 * import type { EntityUploadResponse } from 'rankd/client';
 * const answer: EntityUploadResponse = { entity_type: 'product', entity_ids: ['p1'] };
 * ```
 */
export interface EntityUploadResponse {
  entity_type: string;
  /** The ids written, in order. */
  entity_ids: string[];
}

/**
 * The answer to a read of entities: those found, by id (ids not in the index are left out).
 *
 * @example
 * ```ts
 * import type { EntityGetResponse } from 'rankd/client';
 * const answer: EntityGetResponse = { entity_type: 'product', entities: { p1: { product_id: 'p1' } } };
 * ```
 */
export interface EntityGetResponse<E = Entity> {
  entity_type: string;
  entities: Record<string, E>;
}

/**
 * The answer to a delete of entities.
 *
 * @example
 * ```ts
 * import type { EntityDeleteResponse } from 'rankd/client';
 * const deleted = (answer: EntityDeleteResponse) => answer.deleted_ids; // those that existed
 * ```
 */
export interface EntityDeleteResponse {
  entity_type: string;
  /** The ids asked for. */
  entity_ids: string[];
  /** The ids that existed and are now deleted. */
  deleted_ids: string[];
  deleted_count: number;
}

/**
 * A row of a feature view: its id, one field per feature, and optionally when the values were true.
 *
 * @example
 * ```ts
 * import type { FeatureRow } from 'rankd/client';
 * const row: FeatureRow = { entity_id: 'p2', ctr_7d: 0.012, event_timestamp: '2026-01-31T12:00:00Z' };
 * ```
 */
export interface FeatureRow {
  entity_id: RowId;
  /** ISO 8601 or ms since the epoch; default: now. */
  event_timestamp?: string | number | null;
  [feature: string]: unknown;
}

/**
 * The answer to an upload of feature rows.
 *
 * @example
 * ```ts
 * import type { FeatureUploadResponse } from 'rankd/client';
 * const answer: FeatureUploadResponse = { feature_view: 'product_stats', written: 1, expired: 0 };
 * ```
 */
export interface FeatureUploadResponse {
  feature_view: string;
  /** Rows written. */
  written: number;
  /** Rows not written because their event time is already past the view's TTL. */
  expired: number;
}

/**
 * How fresh one view's row of an entity was.
 *
 * @example
 * ```ts
 * import type { FeatureViewState } from 'rankd/client';
 * const state: FeatureViewState = { state: 'expired', event_timestamp: '2026-01-01T00:00:00.000Z' };
 * ```
 */
export interface FeatureViewState {
  state: 'fresh' | 'missing' | 'expired' | 'unknown_layout' | 'unreadable';
  event_timestamp?: string;
  reason?: string;
  /** True when the row came from the server's read cache (`READ_CACHE_MB`), not from Redis. */
  from_cache?: boolean;
}

/**
 * The features of one entity, as a pipeline would see them.
 *
 * @example
 * ```ts
 * import type { FeatureGetResult } from 'rankd/client';
 * const freshness = (result: FeatureGetResult) => result.views.product_stats?.state; // fresh, missing, ...
 * ```
 */
export interface FeatureGetResult {
  entity_id: RowId;
  /** `view:feature` → value (the declared default when not stored). */
  values: Record<string, unknown>;
  /** The features whose value is the declared default (or null). */
  defaulted: string[];
  views: Record<string, FeatureViewState>;
}

/**
 * The answer to a read of features.
 *
 * @example
 * ```ts
 * import type { FeatureGetResponse } from 'rankd/client';
 * const values = (answer: FeatureGetResponse) => answer.results.map((result) => result.values);
 * ```
 */
export interface FeatureGetResponse {
  results: FeatureGetResult[];
}

/**
 * The answer to a delete of feature rows.
 *
 * @example
 * ```ts
 * import type { FeatureDeleteResponse } from 'rankd/client';
 * const answer: FeatureDeleteResponse = { feature_view: 'product_stats', deleted_count: 1 };
 * ```
 */
export interface FeatureDeleteResponse {
  feature_view: string;
  /** Rows that existed and are deleted. */
  deleted_count: number;
}

/**
 * A user's reaction to an item a ranking request served.
 *
 * @example
 * ```ts
 * import type { FeedbackItem } from 'rankd/client';
 * const purchase: FeedbackItem = { request_id: 'r1', entity_id: 'p1', feedback_type: 'purchase', value: 19.9 };
 * ```
 */
export interface FeedbackItem<EntityType extends string = string> {
  /** The `request_id` of the ranking request that showed the entity. */
  request_id: string;
  entity_id: EntityId;
  /** Default: `product`. */
  entity_type?: EntityType;
  /** `click`, `add_to_cart`, `purchase`, or a type of your own (`^[a-z][a-z0-9_]{0,63}$`). */
  feedback_type: string;
  /** When the user reacted: ISO 8601 or ms since the epoch; default: when received. */
  timestamp?: string | number;
  /** A quantity (an amount paid, a rating). */
  value?: number;
}

/**
 * The answer to feedback.
 *
 * @example
 * ```ts
 * import type { FeedbackResponse } from 'rankd/client';
 * const answer: FeedbackResponse = { written: 1 };
 * ```
 */
export interface FeedbackResponse {
  /** Events written: all of them, or 0 when the server's event sink is off. */
  written: number;
}

/**
 * One ranked candidate.
 *
 * @example
 * ```ts
 * import type { RankedCandidate } from 'rankd/client';
 * const first: RankedCandidate = { candidate_id: 'p1', ranked_score: 0.93 };
 * ```
 */
export interface RankedCandidate {
  candidate_id: string;
  ranked_score: number;
}

/**
 * What a ranking pipeline answers.
 *
 * @example
 * ```ts
 * import type { RankingResponse } from 'rankd/client';
 * const ids = (page: RankingResponse) => page.ranked_candidates.map((c) => c.candidate_id);
 * ```
 */
export interface RankingResponse {
  ranked_candidates: RankedCandidate[];
  /** The request's events, when it asked for them (`include_events`). */
  events?: Array<Record<string, unknown>>;
}

/**
 * The `paths` of a client made without generated types: any route, any JSON.
 *
 * @example
 * ```ts
 * import { createClient, type RankdClient, type UntypedPaths } from 'rankd/client';
 * export const rankd: RankdClient<UntypedPaths> = createClient({ baseUrl: 'http://localhost:5001' });
 * ```
 */
export interface UntypedPaths {
  [route: string]: unknown;
}

/** Whether `Paths` is not an app's generated type (the client is untyped then). */
type IsUntyped<Paths> = string extends keyof Paths ? true : false;

/** The JSON body of an operation's request. */
type RequestBodyOf<Operation> = Operation extends { requestBody?: infer Body }
  ? NonNullable<Body> extends { content: { 'application/json': infer Json } }
    ? Json
    : never
  : never;

/** The JSON body of an operation's 200 answer. */
type ResponseBodyOf<Operation> = Operation extends {
  responses: { 200: { content: { 'application/json': infer Json } } };
}
  ? Json
  : unknown;

/** The POST operation at `route` of `Paths`. */
type PostAt<Paths, Route> = Route extends keyof Paths
  ? Paths[Route] extends { post: infer Operation }
    ? Operation
    : never
  : never;

/** rankd's own routes under /api/v1: not pipelines. */
type RankdRoute =
  | '/api/v1/entities/upload'
  | '/api/v1/entities/get'
  | '/api/v1/entities/delete'
  | '/api/v1/features/upload'
  | '/api/v1/features/get'
  | '/api/v1/features/delete'
  | '/api/v1/events/feedback'
  | '/api/v1/admin/models/reload';

/**
 * The app's pipeline routes (and its own POST routes) under /api/v1.
 *
 * @example
 * ```ts
 * import type { PipelineRoute } from 'rankd/client';
 *
 * interface Paths {
 *   '/api/v1/ranking': { post: object };
 *   '/healthcheck': { get: object };
 * }
 * const route: PipelineRoute<Paths> = '/api/v1/ranking'; // the only one
 * ```
 */
export type PipelineRoute<Paths> = {
  [Route in keyof Paths & string]: Route extends RankdRoute
    ? never
    : Route extends `/api/v1/${string}`
      ? Paths[Route] extends { post: object }
        ? Route
        : never
      : never;
}[keyof Paths & string];

/**
 * A pipeline as `rank` takes it: its route (`/api/v1/ranking`), or its path (`ranking` or `/ranking`).
 *
 * @example
 * ```ts
 * import type { PipelineKey, UntypedPaths } from 'rankd/client';
 * const keys: Array<PipelineKey<UntypedPaths>> = ['/api/v1/ranking', 'ranking', '/ranking'];
 * ```
 */
export type PipelineKey<Paths> =
  IsUntyped<Paths> extends true
    ? string
    :
        | PipelineRoute<Paths>
        | (PipelineRoute<Paths> extends `/api/v1/${infer Path}` ? Path | `/${Path}` : never);

/** The route of a {@link PipelineKey}. */
type RouteOfKey<Key> = Key extends `/api/v1/${string}`
  ? Key
  : Key extends `/${infer Path}`
    ? `/api/v1/${Path}`
    : `/api/v1/${Key & string}`;

/**
 * The request body of a pipeline: from the generated types, else any JSON object.
 *
 * @example
 * ```ts
 * import type { PipelineRequest, UntypedPaths } from 'rankd/client';
 * const body: PipelineRequest<UntypedPaths, 'ranking'> = { request_id: 'r1', candidates: [] };
 * ```
 */
export type PipelineRequest<Paths, Key> =
  IsUntyped<Paths> extends true ? Record<string, unknown> : RequestBodyOf<PostAt<Paths, RouteOfKey<Key>>>;

/**
 * The answer of a pipeline: from the generated types, else a ranking answer.
 *
 * @example
 * ```ts
 * import type { PipelineResponse, UntypedPaths } from 'rankd/client';
 * const page: PipelineResponse<UntypedPaths, 'ranking'> = { ranked_candidates: [] };
 * ```
 */
export type PipelineResponse<Paths, Key> =
  IsUntyped<Paths> extends true ? RankingResponse : ResponseBodyOf<PostAt<Paths, RouteOfKey<Key>>>;

/** A field of the JSON request body at `route`, or `Otherwise` for an untyped client. */
type BodyField<Paths, Route, Field extends string, Otherwise> =
  IsUntyped<Paths> extends true
    ? Otherwise
    : RequestBodyOf<PostAt<Paths, Route>> extends { [K in Field]?: infer Value }
      ? Exclude<Value, undefined>
      : Otherwise;

/**
 * The app's entity type names (`product`, ...); any string for an untyped client.
 *
 * @example
 * ```ts
 * import type { EntityTypeName, UntypedPaths } from 'rankd/client';
 * const type: EntityTypeName<UntypedPaths> = 'product';
 * ```
 */
export type EntityTypeName<Paths> = BodyField<Paths, '/api/v1/entities/upload', 'entity_type', string> &
  string;

/**
 * The app's feature view names; any string for an untyped client or an app without views.
 *
 * @example
 * ```ts
 * import type { FeatureViewName, UntypedPaths } from 'rankd/client';
 * const view: FeatureViewName<UntypedPaths> = 'product_stats';
 * ```
 */
export type FeatureViewName<Paths> = BodyField<Paths, '/api/v1/features/upload', 'feature_view', string> &
  string;
