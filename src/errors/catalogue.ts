import { hostsOf, withoutAddresses } from './addresses.js';
import { type FieldProblem, RankdError } from './rankd-error.js';
import { redisAddressForResponse, redisReasonForResponse } from './redis-address.js';

/**
 * The error catalogue: every code rankd can answer with. Codes are part of the public contract:
 * once released, a code keeps its meaning and is never reused for something else.
 *
 * @example
 * ```ts
 * import { ErrorCode } from 'rankd';
 * import { RankdClientError } from 'rankd/client';
 *
 * // The stable codes a response's `error_code` holds.
 * function isBadRequest(error: unknown): boolean {
 *   return error instanceof RankdClientError && error.error_code === ErrorCode.VALIDATION;
 * }
 * console.log(isBadRequest(new Error('x')));
 * ```
 */
export const ErrorCode = {
  /** The body or parameters do not match the route's schema (HTTP 422). */
  VALIDATION: 'RANKD_VALIDATION',
  /** The body is not well-formed JSON (HTTP 400). */
  MALFORMED_JSON: 'RANKD_MALFORMED_JSON',
  /** The body is not `application/json` (HTTP 415). */
  UNSUPPORTED_MEDIA_TYPE: 'RANKD_UNSUPPORTED_MEDIA_TYPE',
  /** The body is larger than `BODY_LIMIT` (HTTP 413). */
  BODY_TOO_LARGE: 'RANKD_BODY_TOO_LARGE',
  /** Any other malformed request the HTTP layer rejects (HTTP 400). */
  BAD_REQUEST: 'RANKD_BAD_REQUEST',
  /**
   * Not a valid HTTP/1.1 request: Node's parser refused its framing (two different
   * `Content-Length`s, `Content-Length` with `Transfer-Encoding`, a bad chunk size, an obs-fold
   * header, ...) or it has no `Host` header (HTTP 400). The connection is closed after the answer.
   */
  MALFORMED_REQUEST: 'RANKD_MALFORMED_REQUEST',
  /**
   * The request (headers, or the whole request, or the next piece of its body) did not arrive in
   * time (HTTP 408). The connection is closed after the answer.
   */
  REQUEST_TIMEOUT: 'RANKD_REQUEST_TIMEOUT',
  /** The request's headers are larger than Node's limit, 16 KiB by default (HTTP 431). The connection is closed. */
  HEADERS_TOO_LARGE: 'RANKD_HEADERS_TOO_LARGE',
  /** No API key, or an unknown one, on a protected route (HTTP 401). */
  UNAUTHORIZED: 'RANKD_UNAUTHORIZED',
  /** A valid key that lacks the admin right for an admin route (HTTP 403). */
  FORBIDDEN: 'RANKD_FORBIDDEN',
  /** No such route (HTTP 404). */
  NOT_FOUND: 'RANKD_NOT_FOUND',
  /** Redis cannot be reached or did not answer in time (HTTP 503). */
  REDIS_UNAVAILABLE: 'RANKD_REDIS_UNAVAILABLE',
  /**
   * Redis refuses writes because it is out of memory (`maxmemory` reached with a policy that cannot
   * evict): HTTP 503, as reads still work and the condition clears without the caller changing anything.
   */
  REDIS_OUT_OF_MEMORY: 'RANKD_REDIS_OUT_OF_MEMORY',
  /**
   * On a Redis Cluster, a write reached some nodes but not others: the body lists which ids were
   * written and which were not confirmed (HTTP 503).
   */
  PARTIAL_WRITE: 'RANKD_PARTIAL_WRITE',
  /** A value in the index is not one rankd can decode (HTTP 500: the data in Redis is damaged). */
  INDEX_VALUE_CORRUPT: 'RANKD_INDEX_VALUE_CORRUPT',
  /** The event sink (its Redis stream or file) cannot take a synchronous write, e.g. feedback (HTTP 503). */
  EVENT_SINK_UNAVAILABLE: 'RANKD_EVENT_SINK_UNAVAILABLE',
  /** The admin model reload route was given a name that is no file-backed model of the app (HTTP 404). */
  MODEL_NOT_FOUND: 'RANKD_MODEL_NOT_FOUND',
  /** Configuration is invalid; raised at start-up, never over HTTP. */
  CONFIG_INVALID: 'RANKD_CONFIG_INVALID',
  /**
   * The app cannot start: its module cannot be loaded or is not a rankd app, a definition
   * (defineApp, defineFeatureView, a model's options, ...) is refused, or a component failed to
   * initialize. Raised at start-up, never over HTTP.
   */
  APP_INVALID: 'RANKD_APP_INVALID',
  /**
   * App code read a feature this request cannot give: a name no component declared, a stored
   * feature read before its rows arrived, an entity of the wrong type (HTTP 500: an app bug, not
   * the caller's; the detail names the feature and what to change).
   */
  FEATURE_LOOKUP: 'RANKD_FEATURE_LOOKUP',
  /** App code asked for the variant of an experiment not in the pipeline's scope (HTTP 500: an app bug). */
  EXPERIMENT_LOOKUP: 'RANKD_EXPERIMENT_LOOKUP',
  /**
   * App code called a rankd function in a way it cannot serve: getFeature or logEvent outside a
   * request, an invalid event type, a model scored before `initialize()`, a pin position that is
   * not a position (HTTP 500: an app bug).
   */
  APP_MISUSE: 'RANKD_APP_MISUSE',
  /**
   * A model file rankd cannot read, parse or use (damaged, an unsupported kind of model, features
   * that differ from the declared ones, a missing runtime such as onnxruntime-node), or a loaded
   * model whose output does not fit the batch. The message names the file when there is one.
   * At start-up it stops the start; a failed reload keeps the previous version (HTTP 500 if a
   * request meets it: not the caller's fault).
   */
  MODEL_INVALID: 'RANKD_MODEL_INVALID',
  /**
   * A data file given to the CLI (`rankd index load`, `rankd features load`, sample data) cannot
   * be read, decompressed or parsed past some line. Never over HTTP (400 if it were).
   */
  INPUT_INVALID: 'RANKD_INPUT_INVALID',
  /**
   * A CLI command was given arguments it cannot act on (a project name, a date, a file format, a
   * feature view or entity type the app lacks). Never over HTTP (400 if it were).
   */
  CLI_USAGE: 'RANKD_CLI_USAGE',
  /**
   * A CLI command could not finish for a reason outside its arguments: redis-server did not
   * start or stop, Redis could not be installed, a directory could not be created, a worker did
   * not start, a load's batch could not be written. Never over HTTP (500 if it were).
   */
  CLI_FAILED: 'RANKD_CLI_FAILED',
  /** An unexpected failure: always a bug in rankd or the app (HTTP 500). */
  INTERNAL: 'RANKD_INTERNAL',

  // Admission control and safe defaults.
  /**
   * The server is busy with expensive work (or its event loop lags) and did not start this
   * expensive request within a second; or the work in flight reached `ADMISSION_BUDGET` (HTTP 503,
   * with `Retry-After`). Nothing was written. docs/reference/configuration.md, "Admission control".
   */
  OVERLOADED: 'RANKD_OVERLOADED',
  /**
   * The API key of the request already holds its share (`ADMISSION_KEY_SHARE`) of the work in
   * flight (HTTP 429, with `Retry-After`). Nothing was written.
   */
  KEY_SHARE_EXCEEDED: 'RANKD_KEY_SHARE_EXCEEDED',
  /**
   * A route that changes data or the running server (uploads, deletes, admin routes), called from
   * another machine while no API key is set (HTTP 403): the message names `API_KEYS` and
   * `ADMIN_API_KEYS`. Nothing was written.
   */
  LOOPBACK_ONLY: 'RANKD_LOOPBACK_ONLY',
} as const;

/**
 * Any code of the catalogue.
 *
 * @example
 * ```ts
 * import { ErrorCode, type ErrorCodeValue } from 'rankd';
 *
 * const retryable: ErrorCodeValue[] = [ErrorCode.REDIS_UNAVAILABLE, ErrorCode.PARTIAL_WRITE];
 * console.log(retryable);
 * ```
 */
export type ErrorCodeValue = (typeof ErrorCode)[keyof typeof ErrorCode];

/**
 * Input that fails validation: HTTP 422 with one entry per problem in `detail`.
 *
 * @example
 * ```ts
 * import { defineApp, Type, ValidationError } from 'rankd';
 * import { Product } from './pipelines/product-ranking/schemas.js';
 *
 * export default defineApp({
 *   server: async (server, { index }) => {
 *     server.post(
 *       '/api/v1/shop/check',
 *       { schema: { body: Type.Object({ sku: Type.String() }, { title: 'CheckRequest' }) } },
 *       async (request) => {
 *         const { sku } = request.body as { sku: string };
 *         const found = await index.getMany(Product, [sku]);
 *         // Answered 422 RANKD_VALIDATION, with this problem in `detail`.
 *         if (found.size === 0) throw ValidationError.at(['body', 'sku'], 'no such product', 'not_found');
 *         return { ok: true };
 *       },
 *     );
 *   },
 * });
 * ```
 */
export class ValidationError extends RankdError {
  constructor(problems: readonly FieldProblem[], message = 'Request validation failed') {
    super(ErrorCode.VALIDATION, 422, message, { problems });
  }

  /** Shorthand for a single problem. */
  static at(loc: FieldProblem['loc'], msg: string, type: string): ValidationError {
    return new ValidationError([{ loc, msg, type }], msg);
  }
}

/** ` (<the cause's message>)`, with addresses left out when `hosts` is given; empty without a message. */
function reasonOf(cause: unknown, hosts?: readonly string[]): string {
  if (!(cause instanceof Error) || !cause.message) return '';
  return ` (${hosts === undefined ? cause.message : withoutAddresses(cause.message, hosts)})`;
}

/**
 * Redis is down, unreachable or too slow: HTTP 503, with what to do about it in the message. The
 * message names the address (for the log); {@link RankdError.publicMessage} does not, and says
 * the log does.
 *
 * @example
 * ```ts
 * import { defineApp } from 'rankd';
 * import { RedisUnavailableError } from 'rankd/server';
 *
 * export default defineApp({
 *   server: async (server, { redis }) => {
 *     server.get('/api/v1/shop/ready', async () => {
 *       // Answered 503 RANKD_REDIS_UNAVAILABLE, as rankd's own routes answer when Redis is down.
 *       if (!redis.isReady) throw new RedisUnavailableError('localhost:6379');
 *       return { ready: true };
 *     });
 *   },
 * });
 * ```
 */
export class RedisUnavailableError extends RankdError {
  /** `host:port` of Redis, or the seed nodes of a cluster, as configured. */
  readonly address: string;

  /** `cluster`: `address` is the seed nodes of a Redis Cluster, which `rankd redis` cannot start. */
  constructor(address: string, cause?: unknown, cluster = false) {
    const reason = reasonOf(cause);
    const hidden = reasonOf(cause, hostsOf(address));
    super(
      ErrorCode.REDIS_UNAVAILABLE,
      503,
      cluster
        ? `The Redis Cluster at ${address} is not available${reason}. rankd reconnects by itself and ` +
            'follows failovers; check REDIS_CLUSTER_NODES and the cluster (CLUSTER INFO on a node).'
        : `Redis at ${address} is not available${reason}. Start a local one with \`rankd redis\`, ` +
            'or point REDIS_URL (or REDIS_HOST/REDIS_PORT) at a running Redis. rankd reconnects by itself.',
      {
        cause,
        publicMessage: cluster
          ? `The Redis Cluster is not available${hidden}. rankd reconnects by itself and follows ` +
            'failovers; check REDIS_CLUSTER_NODES and the cluster (CLUSTER INFO on a node). The server ' +
            'log names the nodes.'
          : `Redis is not available${hidden}. Start a local one with \`rankd redis\`, or point ` +
            'REDIS_URL (or REDIS_HOST/REDIS_PORT) at a running Redis; the server log names the address ' +
            'it tries. rankd reconnects by itself.',
      },
    );
    this.address = address;
  }
}

/**
 * A Redis Cluster master that could not serve a request, as an error message names it.
 *
 * @example
 * ```ts
 * import { ClusterNodeUnavailableError, type UnavailableNode } from 'rankd/server';
 *
 * try {
 *   // ... a read on a Redis Cluster with a master out
 * } catch (error) {
 *   if (error instanceof ClusterNodeUnavailableError) {
 *     const nodes: readonly UnavailableNode[] = error.nodes;
 *     for (const { node, slots, reason } of nodes) console.warn(`${node} (${slots}): ${reason}`);
 *   }
 * }
 * ```
 */
export interface UnavailableNode {
  /** `host:port` of the master the slots were routed to. */
  readonly node: string;
  /** The slots it serves, as ranges (`0-5460`), or '' when the slot map does not say. */
  readonly slots: string;
  /** What the client said: `The client is offline`, `no answer within 1000 ms`, `CLUSTERDOWN ...`. */
  readonly reason: string;
}

/**
 * `node (master of slots ...: reason)`: with its address for the log (`shown`), else as response
 * bodies may show it.
 */
function describeNode({ node, slots, reason }: UnavailableNode, shown: boolean): string {
  const where = slots === '' ? '' : `master of slots ${slots}: `;
  return `${redisAddressForResponse(node, shown)} (${where}${redisReasonForResponse(reason, node, shown)})`;
}

/**
 * What a cluster node's outage means and what to do: the same advice for reads and writes.
 */
export const CLUSTER_FAILOVER_ADVICE = clusterFailoverAdvice(undefined);

/**
 * Some masters of a Redis Cluster (not the whole cluster) cannot serve the request's slots: HTTP 503,
 * `RANKD_REDIS_UNAVAILABLE` like any outage, but the message names the nodes and their slots and
 * gives cluster advice instead of listing the seed nodes.
 *
 * @example
 * ```ts
 * import { ClusterNodeUnavailableError } from 'rankd/server';
 *
 * try {
 *   // ... a write on a Redis Cluster
 * } catch (error) {
 *   // A 503 naming the masters that failed and their slots.
 *   if (error instanceof ClusterNodeUnavailableError) console.warn(error.nodes.map((n) => n.slots));
 *   else throw error;
 * }
 * ```
 */
export class ClusterNodeUnavailableError extends RedisUnavailableError {
  /** The masters that failed, each once. */
  readonly nodes: readonly UnavailableNode[];
  /** The message with the nodes' addresses as responses may show them. */
  override readonly publicMessage: string;

  /** `advice`: the failover advice with the cluster's own `cluster-node-timeout`, when known. */
  constructor(
    seeds: string,
    nodes: readonly UnavailableNode[],
    cause?: unknown,
    advice = CLUSTER_FAILOVER_ADVICE,
  ) {
    super(seeds, cause, true);
    // Replaces the parent's messages (which list the seeds, healthy ones included) rather than
    // changing the parent's constructor, which every other Redis outage still goes through.
    const message = (shown: boolean): string => {
      const described = nodes.map((node) => describeNode(node, shown));
      const subject =
        described.length === 1
          ? `node ${described[0]} is`
          : `nodes ${described.slice(0, -1).join(', ')} and ${described[described.length - 1]} are`;
      return `The Redis Cluster ${subject} not available. ${advice}`;
    };
    this.message = message(true);
    this.publicMessage = message(false);
    this.nodes = nodes;
  }
}

/**
 * Redis refused a write for memory (`OOM command not allowed when used memory > 'maxmemory'`), or
 * reports itself past its `maxmemory` (`/readyz`): HTTP 503 with what to do. Not a
 * {@link RedisUnavailableError}: Redis answers, reads work, and restarting or reconnecting rankd
 * changes nothing; room must be made in Redis. The message names no host.
 *
 * @example
 * ```ts
 * import { RedisOutOfMemoryError } from 'rankd/server';
 *
 * try {
 *   // ... a write to a Redis at its maxmemory (noeviction)
 * } catch (error) {
 *   if (error instanceof RedisOutOfMemoryError) console.error(error.statusCode, error.code); // 503 RANKD_REDIS_OUT_OF_MEMORY
 * }
 * ```
 */
export class RedisOutOfMemoryError extends RankdError {
  constructor(cause?: unknown) {
    const advice =
      '. Raise its maxmemory, move the event stream to a Redis of its own (EVENTS_REDIS_URL), or ' +
      'lower the event budget (EVENTS_STREAM_MAX_BYTES); see docs/guides/deploy.md. Reads still work.';
    // Redis's OOM reply names no node; the public message makes sure of it all the same.
    super(
      ErrorCode.REDIS_OUT_OF_MEMORY,
      503,
      `Redis is out of memory and refuses writes${reasonOf(cause)}${advice}`,
      {
        cause,
        publicMessage: `Redis is out of memory and refuses writes${reasonOf(cause, [])}${advice}`,
      },
    );
  }
}

/**
 * The event file cannot be written (feedback answers 503; background batches count their events as
 * dropped). An unreachable event Redis is a {@link RedisUnavailableError}.
 *
 * @example
 * ```ts
 * import { EventSinkUnavailableError } from 'rankd/server';
 *
 * const error = new EventSinkUnavailableError('the event stream', new Error('connection refused'));
 * console.log(error.statusCode, error.message); // 503 Cannot write to the event stream (connection refused)
 * ```
 */
export class EventSinkUnavailableError extends RankdError {
  constructor(target: string, cause?: unknown) {
    const reason = cause instanceof Error && cause.message ? ` (${cause.message})` : '';
    super(ErrorCode.EVENT_SINK_UNAVAILABLE, 503, `Cannot write to ${target}${reason}`, { cause });
  }
}

/**
 * An id as a write names it: an entity id, or `[first, second]` for a row of a pair view.
 *
 * @example
 * ```ts
 * import { PartialWriteError, type WrittenId } from 'rankd/server';
 *
 * function retryList(error: unknown): WrittenId[] {
 *   return error instanceof PartialWriteError ? [...error.failedIds] : [];
 * }
 * console.log(retryList(new Error('other')));
 * ```
 */
export type WrittenId = string | readonly [string, string];

/**
 * A write on a Redis Cluster that reached some nodes and not others (HTTP 503): each entity is
 * written atomically, so every id is either in `written_ids` (done) or in `failed_ids` (not
 * confirmed: its node failed or did not answer in time, so it may or may not have been applied).
 * Writes replace whole values, so sending the failed ids again is safe.
 *
 * @example
 * ```ts
 * import { PartialWriteError } from 'rankd/server';
 *
 * try {
 *   // ... an upload to a Redis Cluster while a master fails
 * } catch (error) {
 *   // A 503 RANKD_PARTIAL_WRITE: send the failed ids again.
 *   if (error instanceof PartialWriteError) console.warn('written', error.writtenIds, 'failed', error.failedIds);
 * }
 * ```
 */
export class PartialWriteError extends RankdError {
  /** Ids whose write (or delete) Redis confirmed, each once, in request order. */
  readonly writtenIds: readonly WrittenId[];
  /** Ids whose write (or delete) was not confirmed, each once, in request order. */
  readonly failedIds: readonly WrittenId[];

  /**
   * `address`: the cluster's seed nodes, left out of the public message with any other address.
   * `nodes`: the masters whose writes failed, when known (the message then names them and their
   * slots; the public message names their slots, and their addresses only as responses may show them).
   * `advice`: the failover advice with the cluster's own `cluster-node-timeout`, when known.
   */
  constructor(
    writtenIds: readonly WrittenId[],
    failedIds: readonly WrittenId[],
    cause?: unknown,
    address = '',
    nodes: readonly UnavailableNode[] = [],
    advice = CLUSTER_FAILOVER_ADVICE,
  ) {
    const counts =
      `: ${writtenIds.length} written (written_ids), ${failedIds.length} not confirmed (failed_ids). ` +
      'Send the failed ones again once the cluster is back.' +
      (nodes.length === 0 ? '' : ` ${advice}`);
    const hosts = [...hostsOf(address), ...nodes.flatMap((node) => hostsOf(node.node))];
    const failed = (shown: boolean): string =>
      nodes.length === 0
        ? `A Redis Cluster node failed during the write${reasonOf(cause, shown ? undefined : hosts)}`
        : `The Redis Cluster ${nodes.length === 1 ? 'node' : 'nodes'} ` +
          `${nodes.map((node) => describeNode(node, shown)).join(', ')} failed during the write`;
    super(ErrorCode.PARTIAL_WRITE, 503, `${failed(true)}${counts}`, {
      cause,
      extra: { written_ids: writtenIds, failed_ids: failedIds },
      publicMessage: `${failed(false)}${counts}`,
    });
    this.writtenIds = writtenIds;
    this.failedIds = failedIds;
  }
}

/**
 * A stored index value that cannot be decoded.
 *
 * @example
 * ```ts
 * import { IndexValueCorruptError } from 'rankd/server';
 *
 * const error = new IndexValueCorruptError('default:1:product:p1');
 * console.log(error.code, error.statusCode); // RANKD_INDEX_VALUE_CORRUPT 500
 * ```
 */
export class IndexValueCorruptError extends RankdError {
  constructor(key: string, cause?: unknown) {
    super(
      ErrorCode.INDEX_VALUE_CORRUPT,
      500,
      `The value stored at Redis key ${JSON.stringify(key)} is not a rankd entity`,
      {
        cause,
      },
    );
  }
}

/**
 * A request that is not valid HTTP/1.1 but that Node's parser lets through (an HTTP/1.1 request
 * without `Host`): refused as the parser refuses the others, with {@link ErrorCode.MALFORMED_REQUEST}.
 *
 * @example
 * ```ts
 * import { defineApp } from 'rankd';
 * import { MalformedRequestError } from 'rankd/server';
 *
 * export default defineApp({
 *   server: async (server) => {
 *     server.get('/api/v1/shop/echo', async (request) => {
 *       const { q } = request.query as { q?: string };
 *       if (q === undefined) throw new MalformedRequestError('give ?q=...'); // 400 RANKD_MALFORMED_REQUEST
 *       return { q };
 *     });
 *   },
 * });
 * ```
 */
export class MalformedRequestError extends RankdError {
  constructor(message: string) {
    super(ErrorCode.MALFORMED_REQUEST, 400, message);
  }
}

/**
 * Missing or unknown API key.
 *
 * @example
 * ```ts
 * import { defineApp } from 'rankd';
 * import { UnauthorizedError } from 'rankd/server';
 *
 * export default defineApp({
 *   server: async (server) => {
 *     server.addHook('onRequest', async (request) => {
 *       // 401 RANKD_UNAUTHORIZED, in rankd's error shape.
 *       if (request.url.startsWith('/api/v1/shop/') && !request.headers.cookie) throw new UnauthorizedError();
 *     });
 *   },
 * });
 * ```
 */
export class UnauthorizedError extends RankdError {
  constructor() {
    super(
      ErrorCode.UNAUTHORIZED,
      401,
      'A valid API key is required: send it as `x-api-key: <key>` or `Authorization: Bearer <key>`',
    );
  }
}

/**
 * A key without the admin right on an admin route.
 *
 * @example
 * ```ts
 * import { defineApp } from 'rankd';
 * import { ForbiddenError } from 'rankd/server';
 *
 * export default defineApp({
 *   server: async (server) => {
 *     server.delete('/api/v1/shop/cache', async (request) => {
 *       if (request.headers['x-role'] !== 'ops') throw new ForbiddenError('Only ops may clear the cache'); // 403
 *       return { cleared: true };
 *     });
 *   },
 * });
 * ```
 */
export class ForbiddenError extends RankdError {
  constructor(message = 'This route needs an admin API key (one listed in ADMIN_API_KEYS)') {
    super(ErrorCode.FORBIDDEN, 403, message);
  }
}

/**
 * A model reload asked for a model the app does not have as a file model; lists the ones it has.
 *
 * @example
 * ```ts
 * import { ModelNotFoundError } from 'rankd/server';
 *
 * const error = new ModelNotFoundError('rankr', ['ranker', 'ctr']);
 * console.log(error.statusCode, error.message); // 404 No file-backed model is named "rankr"; ...
 * ```
 */
export class ModelNotFoundError extends RankdError {
  constructor(name: string, known: readonly string[]) {
    super(
      ErrorCode.MODEL_NOT_FOUND,
      404,
      `No file-backed model is named ${JSON.stringify(name)}; the app's are: ${known.join(', ') || 'none'}`,
    );
  }
}

/**
 * Invalid configuration found at start-up; lists every problem at once.
 *
 * @example
 * ```ts
 * import { ConfigError, loadConfig } from 'rankd/server';
 *
 * try {
 *   loadConfig({ PORT: 'x' });
 * } catch (error) {
 *   if (error instanceof ConfigError) console.error(error.message); // every problem, one per line
 * }
 * ```
 */
export class ConfigError extends RankdError {
  constructor(problems: readonly string[]) {
    super(ErrorCode.CONFIG_INVALID, 500, `Invalid configuration:\n  - ${problems.join('\n  - ')}`);
  }
}

/**
 * The app module is missing or does not export a rankd app.
 *
 * @example
 * ```ts
 * import { AppLoadError } from 'rankd/server';
 * import app from './pipelines/main.js';
 *
 * try {
 *   await app.initialize(); // loads model files
 * } catch (error) {
 *   // A component that failed to initialize, named in the message.
 *   if (error instanceof AppLoadError) console.error(error.message);
 * }
 * ```
 */
export class AppLoadError extends RankdError {
  constructor(message: string, cause?: unknown) {
    super(ErrorCode.APP_INVALID, 500, message, { cause });
  }
}

/**
 * An app definition refused at start-up (a `defineApp`, `defineFeatureView`, `defineEntity`,
 * model or business-logic step whose options cannot work): the message names the declaration and
 * what to change. The app never starts, so no request meets it.
 *
 * @example
 * ```ts
 * import { AppDefinitionError, defineExperiment } from 'rankd';
 *
 * try {
 *   defineExperiment({ id: 'x', variants: [{ name: 'a', share: 0.4 }] }); // shares must sum to 1
 * } catch (error) {
 *   if (error instanceof AppDefinitionError) console.error(error.code, error.message); // RANKD_APP_INVALID ...
 * }
 * ```
 */
export class AppDefinitionError extends RankdError {
  constructor(message: string, cause?: unknown) {
    super(ErrorCode.APP_INVALID, 500, message, { cause });
  }
}

/**
 * A feature name that cannot be read in this request: an app bug (HTTP 500, not the caller's
 * fault), answered with the feature and what to change, since the app's author reads it first.
 *
 * @example
 * ```ts
 * import { FeatureLookupError } from 'rankd';
 *
 * // What a request gets when pipeline code reads a feature its component did not declare: a 500
 * // RANKD_FEATURE_LOOKUP whose message says what to change.
 * const error = new FeatureLookupError('ranker read product_stats:ctr_7d without listing it in `features`');
 * console.log(error.code);
 * ```
 */
export class FeatureLookupError extends RankdError {
  constructor(message: string) {
    super(ErrorCode.FEATURE_LOOKUP, 500, message);
  }
}

/**
 * An experiment that is not in scope of the pipeline: an app bug, reported with what to change.
 *
 * @example
 * ```ts
 * import { ExperimentLookupError } from 'rankd';
 *
 * // getExperimentVariant for an experiment the pipeline does not assign.
 * const error = new ExperimentLookupError('Experiment "boost" is not assigned in pipeline Search');
 * console.log(error.code, error.statusCode); // RANKD_EXPERIMENT_LOOKUP 500
 * ```
 */
export class ExperimentLookupError extends RankdError {
  constructor(message: string) {
    super(ErrorCode.EXPERIMENT_LOOKUP, 500, message);
  }
}

/**
 * App code that called a rankd function where or how it cannot work (HTTP 500: an app bug).
 *
 * @example
 * ```ts
 * import { AppMisuseError } from 'rankd/server';
 * import { getFeature } from 'rankd';
 *
 * try {
 *   getFeature('product::p1', 'product_stats:ctr_7d'); // outside a request
 * } catch (error) {
 *   if (error instanceof AppMisuseError) console.error(error.message);
 * }
 * ```
 */
export class AppMisuseError extends RankdError {
  constructor(message: string) {
    super(ErrorCode.APP_MISUSE, 500, message);
  }
}

/**
 * A model file that cannot be read or used, or a loaded model whose output does not fit. `file`
 * is the file, when the problem is one file's; the message names it then.
 *
 * @example
 * ```ts
 * import { gbdtModel, ModelInvalidError } from 'rankd';
 *
 * const Ranker = gbdtModel({ name: 'ranker', file: 'models/ranker.json', features: ['product_stats:ctr_7d'] });
 * const result = await Ranker.reload();
 * if (result.status === 'failed') console.error(result.error);
 * // At start, a broken file stops it: the error names the file.
 * const error = new ModelInvalidError('not a model file', { file: 'models/ranker.json' });
 * console.log(error.file);
 * ```
 */
export class ModelInvalidError extends RankdError {
  /** The model file (absolute, or as given to the loader), when the problem is one file's. */
  readonly file: string | undefined;

  constructor(message: string, options?: { file?: string; cause?: unknown }) {
    super(ErrorCode.MODEL_INVALID, 500, message, { cause: options?.cause });
    this.file = options?.file;
  }
}

// --- A Redis Cluster's own cluster-node-timeout in the advice; no master serving ---

/**
 * What a cluster node's outage means and what to do, quoting the cluster's `cluster-node-timeout`
 * (`CONFIG GET cluster-node-timeout` on a node) when rankd could read it, else Redis's default.
 * {@link CLUSTER_FAILOVER_ADVICE} is the latter.
 */
export function clusterFailoverAdvice(nodeTimeoutMs: number | undefined): string {
  const timeout =
    nodeTimeoutMs === undefined
      ? "cluster-node-timeout (Redis's default: 15 s)"
      : `cluster-node-timeout (${nodeTimeoutMs} ms on this cluster)`;
  return (
    `A failover is probably in progress: a replica takes over once the other masters have seen the node ` +
    `down for ${timeout} and elected it, and rankd follows the new master by itself. If it lasts, run ` +
    'CLUSTER INFO and CLUSTER NODES on a live node.'
  );
}

/**
 * No master of a Redis Cluster serves keys now: every master refuses queries (`CLUSTERDOWN`: some
 * slots have no master that answers, e.g. between a master's failure and its replica's promotion,
 * and with `cluster-require-full-coverage yes` every node refuses meanwhile), or none answers.
 * HTTP 503 `RANKD_REDIS_UNAVAILABLE`, like any outage: a ranking or a get that could read nothing
 * answers it rather than a 200 built from nothing, and so does `/readyz`.
 *
 * @example
 * ```ts
 * import { ClusterDownError } from 'rankd/server';
 *
 * const error = new ClusterDownError('10.0.0.1:7000', 'every master refuses queries (CLUSTERDOWN The cluster is down)');
 * console.log(error.statusCode, error.code); // 503 RANKD_REDIS_UNAVAILABLE
 * ```
 */
export class ClusterDownError extends RedisUnavailableError {
  /** The message without addresses, for responses. */
  override readonly publicMessage: string;

  /**
   * `seeds`: the cluster's seed nodes (named in the log only); `reason`: why no master serves, as a
   * clause; `advice`: the failover advice with the cluster's own node timeout, when known.
   */
  constructor(seeds: string, reason: string, advice = CLUSTER_FAILOVER_ADVICE, cause?: unknown) {
    super(seeds, cause, true);
    const message = (why: string) =>
      `No master of the Redis Cluster serves keys now: ${why}; nothing can be read or written until one does. ${advice}`;
    this.message = message(reason);
    this.publicMessage = message(withoutAddresses(reason, hostsOf(seeds)));
  }
}

/**
 * Refused by admission control: the server is busy (503) or the request's key holds its share of
 * the work in flight (429). The response carries `Retry-After` (whole seconds).
 *
 * @example
 * ```ts
 * import { OverloadedError } from 'rankd/server';
 *
 * const error = new OverloadedError('The server is busy with expensive requests', 2);
 * console.log(error.statusCode, error.headers); // 503 { 'retry-after': '2' }
 * ```
 */
export class OverloadedError extends RankdError {
  /** Seconds after which a retry may succeed (the `Retry-After` header). */
  readonly retryAfterSeconds: number;

  constructor(message: string, retryAfterSeconds: number, perKey = false) {
    const seconds = Math.max(1, Math.ceil(retryAfterSeconds));
    super(
      perKey ? ErrorCode.KEY_SHARE_EXCEEDED : ErrorCode.OVERLOADED,
      perKey ? 429 : 503,
      `${message}; nothing was written. Retry after ${seconds} s (Retry-After).`,
      { headers: { 'retry-after': String(seconds) } },
    );
    this.retryAfterSeconds = seconds;
  }
}

/**
 * A route that changes data or the running server, called from another machine while no API key
 * is set: out of the box only this machine may write (HTTP 403).
 *
 * @example
 * ```ts
 * import { LoopbackOnlyError } from 'rankd/server';
 *
 * console.log(new LoopbackOnlyError().message); // names API_KEYS and ADMIN_API_KEYS
 * ```
 */
export class LoopbackOnlyError extends RankdError {
  constructor() {
    super(
      ErrorCode.LOOPBACK_ONLY,
      403,
      'This route changes data or the running server, and while no API key is set only clients on the ' +
        "server's own machine (loopback) may call it. To call it from other machines, set ADMIN_API_KEYS " +
        '(and API_KEYS) and send a key as `x-api-key: <key>` or `Authorization: Bearer <key>`.',
    );
  }
}
