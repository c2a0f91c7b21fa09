import { RankdClientError } from './errors.js';
import type {
  Entity,
  EntityDeleteResponse,
  EntityGetResponse,
  EntityId,
  EntityTypeName,
  EntityUploadResponse,
  FeatureDeleteResponse,
  FeatureGetResponse,
  FeatureRow,
  FeatureUploadResponse,
  FeatureViewName,
  FeedbackItem,
  FeedbackResponse,
  PipelineKey,
  PipelineRequest,
  PipelineResponse,
  RowId,
  UntypedPaths,
} from './types.js';

/** Where the server is and how to call it. */
export interface ClientOptions {
  /** The server's address, e.g. `http://localhost:5001` (a path prefix is kept: `https://host/rankd`). */
  baseUrl: string;
  /** An API key (sent as `x-api-key`), when the server has `API_KEYS` set. */
  apiKey?: string;
  /** Headers sent with every request. */
  headers?: Record<string, string>;
  /** The `fetch` to use (a wrapper that adds tracing or retries, say). @defaultValue the global `fetch` */
  fetch?: typeof fetch;
}

/** Options of one call. */
export interface CallOptions {
  /** Aborts the request (e.g. `AbortSignal.timeout(2000)`). */
  signal?: AbortSignal;
  /** Headers of this call, e.g. `x-request-id`, or `x-rankd-run-id` to tag an offline evaluation's events. */
  headers?: Record<string, string>;
}

/** The entity index: entities by type and id. */
export interface EntitiesApi<Paths> {
  /** Creates or completely replaces entities, all or none. `entityKey`: the field holding the id when not the type's. */
  upload(
    entityType: EntityTypeName<Paths>,
    entities: Entity[],
    options?: CallOptions & { entityKey?: string },
  ): Promise<EntityUploadResponse>;
  /** Reads entities; ids not in the index are left out of `entities`. */
  get<E = Entity>(
    entityType: EntityTypeName<Paths>,
    ids: EntityId[],
    options?: CallOptions,
  ): Promise<EntityGetResponse<E>>;
  /** Deletes entities; says which existed. */
  delete(
    entityType: EntityTypeName<Paths>,
    ids: EntityId[],
    options?: CallOptions,
  ): Promise<EntityDeleteResponse>;
}

/** The feature store: rows of the app's feature views. */
export interface FeaturesApi<Paths> {
  /** Writes rows of one view, all or none. */
  upload(
    featureView: FeatureViewName<Paths>,
    rows: FeatureRow[],
    options?: CallOptions,
  ): Promise<FeatureUploadResponse>;
  /**
   * Reads features as a pipeline would see them: every feature of a view, or the `view:feature`
   * names given as `{ features }`.
   */
  get(
    what: FeatureViewName<Paths> | { features: string[] },
    ids: RowId[],
    options?: CallOptions,
  ): Promise<FeatureGetResponse>;
  /** Deletes rows of one view. */
  delete(
    featureView: FeatureViewName<Paths>,
    ids: RowId[],
    options?: CallOptions,
  ): Promise<FeatureDeleteResponse>;
}

/**
 * A client of one rankd server. Typed by the app's generated `paths` (`rankd client types`):
 * `rank` then takes exactly a pipeline's request and returns its response type.
 */
export interface RankdClient<Paths extends object = UntypedPaths> {
  readonly entities: EntitiesApi<Paths>;
  readonly features: FeaturesApi<Paths>;
  /** Records users' reactions to ranked items (clicks, purchases), all or none. */
  feedback(
    events: Array<FeedbackItem<EntityTypeName<Paths>>>,
    options?: CallOptions,
  ): Promise<FeedbackResponse>;
  /**
   * Calls a pipeline: by its route (`/api/v1/ranking`) or its path (`ranking`). With generated
   * types, `body` is checked against the pipeline's request and the answer has its response type.
   */
  rank<Key extends PipelineKey<Paths>>(
    pipeline: Key,
    body: PipelineRequest<Paths, Key>,
    options?: CallOptions,
  ): Promise<PipelineResponse<Paths, Key>>;
  /** POSTs JSON to any route of the server (e.g. one the app added) and returns the JSON answer. */
  post<T = unknown>(path: string, body: unknown, options?: CallOptions): Promise<T>;
}

/** A route's path as `rank` received it: `/api/v1/ranking` from `ranking`, `/ranking` or itself. */
function pipelineRoute(pipeline: string): string {
  if (pipeline.startsWith('/api/v1/')) return pipeline;
  return `/api/v1/${pipeline.replace(/^\/+/, '')}`;
}

/**
 * Makes a client of the rankd server at `baseUrl`. It needs only `fetch` (Node 18+, browsers,
 * Deno, Bun). Every error status is thrown as a {@link RankdClientError}; a request that gets no
 * answer at all (refused connection, DNS, abort) rejects with `fetch`'s own error.
 *
 * @example
 * ```ts
 * import { createClient } from 'rankd/client';
 *
 * const rankd = createClient({ baseUrl: 'http://localhost:5001', apiKey: process.env.RANKD_KEY });
 * await rankd.entities.upload('product', [{ product_id: 'p1', title: 'Blue candle', price: 12 }]);
 * const page = await rankd.rank('ranking', {
 *   request_id: 'r1',
 *   query: { query: 'candle' },
 *   candidates: [{ product_id: 'p1' }, { product_id: 'p2' }],
 * });
 * for (const { candidate_id, ranked_score } of page.ranked_candidates) console.log(candidate_id, ranked_score);
 * await rankd.feedback([{ request_id: 'r1', entity_id: 'p1', feedback_type: 'click' }]);
 * ```
 */
export function createClient<Paths extends object = UntypedPaths>(
  options: ClientOptions,
): RankdClient<Paths> {
  const base = options.baseUrl.replace(/\/+$/, '');
  // Looked up at each call, not bound once: a fetch installed later (a polyfill, a test) is used.
  const send = options.fetch ?? ((...args: Parameters<typeof fetch>) => fetch(...args));
  const common: Record<string, string> = {
    accept: 'application/json',
    'content-type': 'application/json',
    ...(options.apiKey === undefined ? {} : { 'x-api-key': options.apiKey }),
    ...options.headers,
  };

  async function post<T>(path: string, body: unknown, call: CallOptions = {}): Promise<T> {
    const response = await send(`${base}${path}`, {
      method: 'POST',
      headers: { ...common, ...call.headers },
      body: JSON.stringify(body),
      ...(call.signal === undefined ? {} : { signal: call.signal }),
    });
    const text = await response.text();
    let json: unknown;
    try {
      json = text.length > 0 ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    if (!response.ok) throw new RankdClientError(response.status, json, text);
    if (json === undefined)
      throw new RankdClientError(response.status, undefined, `not a JSON answer: ${text.slice(0, 200)}`);
    return json as T;
  }

  return {
    entities: {
      upload: (entityType, entities, call) =>
        post(
          '/api/v1/entities/upload',
          {
            entity_type: entityType,
            entities,
            ...(call?.entityKey === undefined ? {} : { entity_key: call.entityKey }),
          },
          call,
        ),
      get: (entityType, ids, call) =>
        post('/api/v1/entities/get', { entity_type: entityType, entity_ids: ids }, call),
      delete: (entityType, ids, call) =>
        post('/api/v1/entities/delete', { entity_type: entityType, entity_ids: ids }, call),
    },
    features: {
      upload: (featureView, rows, call) =>
        post('/api/v1/features/upload', { feature_view: featureView, rows }, call),
      get: (what, ids, call) =>
        post(
          '/api/v1/features/get',
          typeof what === 'string'
            ? { feature_view: what, entity_ids: ids }
            : { features: what.features, entity_ids: ids },
          call,
        ),
      delete: (featureView, ids, call) =>
        post('/api/v1/features/delete', { feature_view: featureView, entity_ids: ids }, call),
    },
    feedback: (events, call) => post('/api/v1/events/feedback', { events }, call),
    rank: (pipeline, body, call) => post(pipelineRoute(pipeline), body, call),
    post,
  };
}
