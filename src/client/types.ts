/**
 * The bodies of rankd's own routes, and the types read from an app's generated `paths` (`rankd
 * client types`). Written out rather than imported from the server: the client must compile in a
 * browser project that has none of the server's dependencies.
 * @module
 */

/** An entity as stored: its id field and any fields. */
export type Entity = Record<string, unknown>;

/** An entity id: numbers are read as their decimal string. */
export type EntityId = string | number;

/** A feature row's id: an entity id, or `[first, second]` for a pair view. */
export type RowId = EntityId | [EntityId, EntityId];

/** The answer to an upload of entities. */
export interface EntityUploadResponse {
  entity_type: string;
  /** The ids written, in order. */
  entity_ids: string[];
}

/** The answer to a read of entities: those found, by id (ids not in the index are left out). */
export interface EntityGetResponse<E = Entity> {
  entity_type: string;
  entities: Record<string, E>;
}

/** The answer to a delete of entities. */
export interface EntityDeleteResponse {
  entity_type: string;
  /** The ids asked for. */
  entity_ids: string[];
  /** The ids that existed and are now deleted. */
  deleted_ids: string[];
  deleted_count: number;
}

/** A row of a feature view: its id, one field per feature, and optionally when the values were true. */
export interface FeatureRow {
  entity_id: RowId;
  /** ISO 8601 or ms since the epoch; default: now. */
  event_timestamp?: string | number | null;
  [feature: string]: unknown;
}

/** The answer to an upload of feature rows. */
export interface FeatureUploadResponse {
  feature_view: string;
  /** Rows written. */
  written: number;
  /** Rows not written because their event time is already past the view's TTL. */
  expired: number;
}

/** How fresh one view's row of an entity was. */
export interface FeatureViewState {
  state: 'fresh' | 'missing' | 'expired' | 'unknown_layout' | 'unreadable';
  event_timestamp?: string;
  reason?: string;
  /** True when the row came from the server's read cache (`READ_CACHE_MB`), not from Redis. */
  from_cache?: boolean;
}

/** The features of one entity, as a pipeline would see them. */
export interface FeatureGetResult {
  entity_id: RowId;
  /** `view:feature` → value (the declared default when not stored). */
  values: Record<string, unknown>;
  /** The features whose value is the declared default (or null). */
  defaulted: string[];
  views: Record<string, FeatureViewState>;
}

/** The answer to a read of features. */
export interface FeatureGetResponse {
  results: FeatureGetResult[];
}

/** The answer to a delete of feature rows. */
export interface FeatureDeleteResponse {
  feature_view: string;
  /** Rows that existed and are deleted. */
  deleted_count: number;
}

/** A user's reaction to an item a ranking request served. */
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

/** The answer to feedback. */
export interface FeedbackResponse {
  /** Events written: all of them, or 0 when the server's event sink is off. */
  written: number;
}

/** One ranked candidate. */
export interface RankedCandidate {
  candidate_id: string;
  ranked_score: number;
}

/** What a ranking pipeline answers. */
export interface RankingResponse {
  ranked_candidates: RankedCandidate[];
  /** The request's events, when it asked for them (`include_events`). */
  events?: Array<Record<string, unknown>>;
}

/** The `paths` of a client made without generated types: any route, any JSON. */
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

/** The app's pipeline routes (and its own POST routes) under /api/v1. */
export type PipelineRoute<Paths> = {
  [Route in keyof Paths & string]: Route extends RankdRoute
    ? never
    : Route extends `/api/v1/${string}`
      ? Paths[Route] extends { post: object }
        ? Route
        : never
      : never;
}[keyof Paths & string];

/** A pipeline as `rank` takes it: its route (`/api/v1/ranking`), or its path (`ranking` or `/ranking`). */
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

/** The request body of a pipeline: from the generated types, else any JSON object. */
export type PipelineRequest<Paths, Key> =
  IsUntyped<Paths> extends true ? Record<string, unknown> : RequestBodyOf<PostAt<Paths, RouteOfKey<Key>>>;

/** The answer of a pipeline: from the generated types, else a ranking answer. */
export type PipelineResponse<Paths, Key> =
  IsUntyped<Paths> extends true ? RankingResponse : ResponseBodyOf<PostAt<Paths, RouteOfKey<Key>>>;

/** A field of the JSON request body at `route`, or `Otherwise` for an untyped client. */
type BodyField<Paths, Route, Field extends string, Otherwise> =
  IsUntyped<Paths> extends true
    ? Otherwise
    : RequestBodyOf<PostAt<Paths, Route>> extends { [K in Field]?: infer Value }
      ? Exclude<Value, undefined>
      : Otherwise;

/** The app's entity type names (`product`, ...); any string for an untyped client. */
export type EntityTypeName<Paths> = BodyField<Paths, '/api/v1/entities/upload', 'entity_type', string> &
  string;

/** The app's feature view names; any string for an untyped client or an app without views. */
export type FeatureViewName<Paths> = BodyField<Paths, '/api/v1/features/upload', 'feature_view', string> &
  string;
