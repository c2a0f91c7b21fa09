import { hostsOf, redisAddressForResponse, redisReasonForResponse, withoutAddresses } from './addresses.js';
import { type FieldProblem, RankdError } from './rankd-error.js';

/**
 * The error catalogue: every code rankd answers with. Once released, a code keeps its meaning and is
 * never reused.
 *
 * @example
 * ```ts
 * import { ErrorCode } from 'rankd';
 * import { RankdClientError } from 'rankd/client';
 *
 * const isBadRequest = (error: unknown) =>
 *   error instanceof RankdClientError && error.error_code === ErrorCode.VALIDATION;
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
  /** Not valid HTTP/1.1 (bad framing, no `Host`): HTTP 400, the connection closed after the answer. */
  MALFORMED_REQUEST: 'RANKD_MALFORMED_REQUEST',
  /** Headers, request or next body piece came too late (HTTP 408); the connection is closed. */
  REQUEST_TIMEOUT: 'RANKD_REQUEST_TIMEOUT',
  /** Headers over Node's limit, 16 KiB by default (HTTP 431); the connection is closed. */
  HEADERS_TOO_LARGE: 'RANKD_HEADERS_TOO_LARGE',
  /** No API key, or an unknown one, on a protected route (HTTP 401). */
  UNAUTHORIZED: 'RANKD_UNAUTHORIZED',
  /** A valid key that lacks the admin right for an admin route (HTTP 403). */
  FORBIDDEN: 'RANKD_FORBIDDEN',
  /** No such route (HTTP 404). */
  NOT_FOUND: 'RANKD_NOT_FOUND',
  /** Redis cannot be reached or did not answer in time (HTTP 503). */
  REDIS_UNAVAILABLE: 'RANKD_REDIS_UNAVAILABLE',
  /** Redis refuses writes at its `maxmemory`: HTTP 503, as reads work and it clears by itself. */
  REDIS_OUT_OF_MEMORY: 'RANKD_REDIS_OUT_OF_MEMORY',
  /** On a Redis Cluster, a write reached some nodes only; the body lists the ids (HTTP 503). */
  PARTIAL_WRITE: 'RANKD_PARTIAL_WRITE',
  /** A value in the index rankd cannot decode (HTTP 500: the data in Redis is damaged). */
  INDEX_VALUE_CORRUPT: 'RANKD_INDEX_VALUE_CORRUPT',
  /** The event sink cannot take a synchronous write, e.g. feedback (HTTP 503). */
  EVENT_SINK_UNAVAILABLE: 'RANKD_EVENT_SINK_UNAVAILABLE',
  /** The admin model reload named no file-backed model of the app (HTTP 404). */
  MODEL_NOT_FOUND: 'RANKD_MODEL_NOT_FOUND',
  /** Configuration is invalid; raised at start-up, never over HTTP. */
  CONFIG_INVALID: 'RANKD_CONFIG_INVALID',
  /** The app cannot start: no rankd app, a refused definition, a failed initialize. Start-up only. */
  APP_INVALID: 'RANKD_APP_INVALID',
  /** App code read a feature this request cannot give (HTTP 500, an app bug); the detail says why. */
  FEATURE_LOOKUP: 'RANKD_FEATURE_LOOKUP',
  /** App code asked for the variant of an experiment not in the pipeline's scope (HTTP 500: an app bug). */
  EXPERIMENT_LOOKUP: 'RANKD_EXPERIMENT_LOOKUP',
  /** App code called a rankd function where it cannot work, e.g. getFeature outside a request (HTTP 500). */
  APP_MISUSE: 'RANKD_APP_MISUSE',
  /** A model file rankd cannot use: stops a start; a failed reload keeps the previous version (HTTP 500). */
  MODEL_INVALID: 'RANKD_MODEL_INVALID',
  /** A data file given to the CLI cannot be read or parsed, or data training cannot use. Never over HTTP. */
  INPUT_INVALID: 'RANKD_INPUT_INVALID',
  /** A CLI command given arguments it cannot act on. Never over HTTP. */
  CLI_USAGE: 'RANKD_CLI_USAGE',
  /** A CLI command failed for a reason outside its arguments. Never over HTTP. */
  CLI_FAILED: 'RANKD_CLI_FAILED',
  /** An unexpected failure: always a bug in rankd or the app (HTTP 500). */
  INTERNAL: 'RANKD_INTERNAL',
  /** Busy with expensive work or past `ADMISSION_BUDGET` (HTTP 503, `Retry-After`). Nothing was written. */
  OVERLOADED: 'RANKD_OVERLOADED',
  /** The API key holds its share (`ADMISSION_KEY_SHARE`) of the work in flight (HTTP 429, `Retry-After`). */
  KEY_SHARE_EXCEEDED: 'RANKD_KEY_SHARE_EXCEEDED',
  /** A write or admin route called from another machine while no API key is set (HTTP 403). */
  LOOPBACK_ONLY: 'RANKD_LOOPBACK_ONLY',
} as const;

/** Any code of the catalogue. */
export type ErrorCodeValue = (typeof ErrorCode)[keyof typeof ErrorCode];

/**
 * Input that fails validation: HTTP 422 with one entry per problem in `detail`.
 *
 * @example
 * import { ValidationError } from 'rankd';
 * throw ValidationError.at(['body', 'sku'], 'no such product', 'not_found'); // 422, the problem in `detail`
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

/** ` (<the cause's message>)`, addresses left out when `hosts` is given. */
function reasonOf(cause: unknown, hosts?: readonly string[]): string {
  if (!(cause instanceof Error) || !cause.message) return '';
  return ` (${hosts === undefined ? cause.message : withoutAddresses(cause.message, hosts)})`;
}

/**
 * Redis is down, unreachable or too slow: HTTP 503, with what to do in the message. The message
 * names the address for the log; {@link RankdError.publicMessage} does not.
 *
 * @example
 * import { RedisUnavailableError } from 'rankd/server';
 * throw new RedisUnavailableError('localhost:6379'); // in an app's route: 503, as rankd's routes
 */
export class RedisUnavailableError extends RankdError {
  /** `host:port` of Redis, or the seed nodes of a cluster, as configured. */
  readonly address: string;

  /** `cluster`: `address` is a cluster's seed nodes, which `rankd redis` cannot start. */
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

/** A Redis Cluster master that could not serve a request. */
export interface UnavailableNode {
  /** `host:port` of the master. */
  readonly node: string;
  /** Its slots as ranges (`0-5460`), or '' when the slot map does not say. */
  readonly slots: string;
  /** What the client said: `The client is offline`, `no answer within 1000 ms`, `CLUSTERDOWN ...`. */
  readonly reason: string;
}

/** `node (master of slots ...: reason)`, its address shown for the log or as response bodies may show it. */
function describeNode({ node, slots, reason }: UnavailableNode, shown: boolean): string {
  const where = slots === '' ? '' : `master of slots ${slots}: `;
  return `${redisAddressForResponse(node, shown)} (${where}${redisReasonForResponse(reason, node, shown)})`;
}

/** What a cluster node's outage means and what to do, for reads and writes alike. */
export const CLUSTER_FAILOVER_ADVICE = clusterFailoverAdvice(undefined);

/**
 * Some masters of a Redis Cluster cannot serve the request's slots: HTTP 503
 * `RANKD_REDIS_UNAVAILABLE`, the message naming the nodes and their slots instead of the seed nodes.
 *
 * @example
 * import { ClusterNodeUnavailableError } from 'rankd/server';
 * const slotsOut = (error: unknown) =>
 *   error instanceof ClusterNodeUnavailableError ? error.nodes.map((n) => n.slots) : [];
 */
export class ClusterNodeUnavailableError extends RedisUnavailableError {
  /** The masters that failed, each once. */
  readonly nodes: readonly UnavailableNode[];
  /** The message with the addresses as responses may show them. */
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
 * Redis refused a write for memory, or reports itself past its `maxmemory` (`/readyz`): HTTP 503.
 * Not a {@link RedisUnavailableError}: reads work and reconnecting changes nothing; room must be
 * made in Redis. The message names no host.
 *
 * @example
 * import { RedisOutOfMemoryError } from 'rankd/server';
 * console.log(new RedisOutOfMemoryError().code); // RANKD_REDIS_OUT_OF_MEMORY
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
 * import { EventSinkUnavailableError } from 'rankd/server';
 * new EventSinkUnavailableError('the event stream', new Error('connection refused')); // 503
 */
export class EventSinkUnavailableError extends RankdError {
  constructor(target: string, cause?: unknown) {
    const reason = cause instanceof Error && cause.message ? ` (${cause.message})` : '';
    super(ErrorCode.EVENT_SINK_UNAVAILABLE, 503, `Cannot write to ${target}${reason}`, { cause });
  }
}

/** An id as a write names it: an entity id, or `[first, second]` for a row of a pair view. */
export type WrittenId = string | readonly [string, string];

/**
 * A write on a Redis Cluster that reached some nodes and not others (HTTP 503). Each entity is
 * written atomically, so every id is in `written_ids` or `failed_ids` (not confirmed: it may or may
 * not have been applied). Writes replace whole values, so sending the failed ids again is safe.
 *
 * @example
 * import { PartialWriteError } from 'rankd/server';
 * const toRetry = (error: unknown) => (error instanceof PartialWriteError ? error.failedIds : []);
 */
export class PartialWriteError extends RankdError {
  /** Ids whose write (or delete) Redis confirmed, each once, in request order. */
  readonly writtenIds: readonly WrittenId[];
  /** Ids whose write (or delete) was not confirmed, each once, in request order. */
  readonly failedIds: readonly WrittenId[];

  /**
   * `address`: the seed nodes, kept out of the public message. `nodes`: the masters whose writes
   * failed, when known. `advice`: with the cluster's own `cluster-node-timeout`, when known.
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
 * A stored index value that cannot be decoded (HTTP 500).
 *
 * @example
 * import { IndexValueCorruptError } from 'rankd/server';
 * new IndexValueCorruptError('default:1:product:p1').statusCode; // 500
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
 * A request Node's parser lets through but that is not valid HTTP/1.1 (no `Host`): refused like
 * those the parser refuses.
 *
 * @example
 * import { MalformedRequestError } from 'rankd/server';
 * throw new MalformedRequestError('give ?q=...'); // 400 RANKD_MALFORMED_REQUEST
 */
export class MalformedRequestError extends RankdError {
  constructor(message: string) {
    super(ErrorCode.MALFORMED_REQUEST, 400, message);
  }
}

/**
 * Missing or unknown API key (HTTP 401).
 *
 * @example
 * import { UnauthorizedError } from 'rankd/server';
 * throw new UnauthorizedError(); // in an app's hook: 401, in rankd's error shape
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
 * A key without the admin right on an admin route (HTTP 403).
 *
 * @example
 * import { ForbiddenError } from 'rankd/server';
 * throw new ForbiddenError('Only ops may clear the cache');
 */
export class ForbiddenError extends RankdError {
  constructor(message = 'This route needs an admin API key (one listed in ADMIN_API_KEYS)') {
    super(ErrorCode.FORBIDDEN, 403, message);
  }
}

/**
 * A model reload named a model the app does not have as a file model; lists the ones it has.
 *
 * @example
 * import { ModelNotFoundError } from 'rankd/server';
 * new ModelNotFoundError('rankr', ['ranker', 'ctr']).message; // No file-backed model is named "rankr"; ...
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
 * import { loadConfig } from 'rankd/server';
 * loadConfig({ PORT: 'x' }); // throws a ConfigError: every problem, one per line
 */
export class ConfigError extends RankdError {
  constructor(problems: readonly string[]) {
    super(ErrorCode.CONFIG_INVALID, 500, `Invalid configuration:\n  - ${problems.join('\n  - ')}`);
  }
}

/**
 * Data or options training cannot use (rows and groups that do not add up, a label that is not a
 * grade), or logs `rankd train` and `rankd evaluate` cannot learn or judge from. Code
 * `RANKD_INPUT_INVALID` (never over HTTP; 400 if it were).
 *
 * @example
 * import { datasetFromRows } from 'rankd/training';
 * datasetFromRows(['price'], [{ group: 1, label: 1, values: [1, 2] }]); // throws: two values, one feature
 */
export class TrainingInputError extends RankdError {
  constructor(message: string) {
    super(ErrorCode.INPUT_INVALID, 400, message);
  }
}

/**
 * The app module is missing or exports no rankd app, or a component failed to initialize.
 *
 * @example
 * import { AppLoadError } from 'rankd/server';
 * throw new AppLoadError('app.ts exports no rankd app');
 */
export class AppLoadError extends RankdError {
  constructor(message: string, cause?: unknown) {
    super(ErrorCode.APP_INVALID, 500, message, { cause });
  }
}

/**
 * An app definition refused at start-up (options that cannot work): the message names the
 * declaration and what to change. The app never starts, so no request meets it.
 *
 * @example
 * import { defineExperiment } from 'rankd';
 * defineExperiment({ id: 'x', variants: [{ name: 'a', share: 0.4 }] }); // throws: shares must sum to 1
 */
export class AppDefinitionError extends RankdError {
  constructor(message: string, cause?: unknown) {
    super(ErrorCode.APP_INVALID, 500, message, { cause });
  }
}

/**
 * A feature that cannot be read in this request: an app bug (HTTP 500), answered with the feature
 * and what to change, since the app's author reads it first.
 *
 * @example
 * import { FeatureLookupError } from 'rankd';
 * throw new FeatureLookupError('ranker read product_stats:ctr_7d without listing it in `features`');
 */
export class FeatureLookupError extends RankdError {
  constructor(message: string) {
    super(ErrorCode.FEATURE_LOOKUP, 500, message);
  }
}

/**
 * An experiment not in the pipeline's scope: an app bug (HTTP 500), reported with what to change.
 *
 * @example
 * import { ExperimentLookupError } from 'rankd';
 * throw new ExperimentLookupError('Experiment "boost" is not assigned in pipeline Search');
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
 * import { getFeature } from 'rankd';
 * getFeature('product::p1', 'product_stats:ctr_7d'); // throws outside a request
 */
export class AppMisuseError extends RankdError {
  constructor(message: string) {
    super(ErrorCode.APP_MISUSE, 500, message);
  }
}

/**
 * A model file that cannot be read or used, or a loaded model whose output does not fit.
 *
 * @example
 * import { ModelInvalidError } from 'rankd';
 * throw new ModelInvalidError('not a model file', { file: 'models/ranker.json' });
 */
export class ModelInvalidError extends RankdError {
  /** The model file (absolute, or as given to the loader), when the problem is one file's. */
  readonly file: string | undefined;

  constructor(message: string, options?: { file?: string; cause?: unknown }) {
    super(ErrorCode.MODEL_INVALID, 500, message, { cause: options?.cause });
    this.file = options?.file;
  }
}

/**
 * The failover advice, quoting the cluster's `cluster-node-timeout` when rankd could read it, else
 * Redis's default ({@link CLUSTER_FAILOVER_ADVICE}).
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
 * No master of a Redis Cluster serves keys (`CLUSTERDOWN` everywhere, e.g. between a master's failure
 * and its replica's promotion with `cluster-require-full-coverage yes`, or none answers): HTTP 503
 * `RANKD_REDIS_UNAVAILABLE`, rather than a 200 built from nothing.
 *
 * @example
 * import { ClusterDownError } from 'rankd/server';
 * new ClusterDownError('10.0.0.1:7000', 'every master refuses queries'); // 503 RANKD_REDIS_UNAVAILABLE
 */
export class ClusterDownError extends RedisUnavailableError {
  /** The message without addresses, for responses. */
  override readonly publicMessage: string;

  /** `reason`: why no master serves, as a clause; `seeds` are named in the log only. */
  constructor(seeds: string, reason: string, advice = CLUSTER_FAILOVER_ADVICE, cause?: unknown) {
    super(seeds, cause, true);
    const message = (why: string) =>
      `No master of the Redis Cluster serves keys now: ${why}; nothing can be read or written until one does. ${advice}`;
    this.message = message(reason);
    this.publicMessage = message(withoutAddresses(reason, hostsOf(seeds)));
  }
}

/**
 * Refused by admission control: the server is busy (503) or the key holds its share of the work in
 * flight (429). The response carries `Retry-After` (whole seconds).
 *
 * @example
 * import { OverloadedError } from 'rankd/server';
 * new OverloadedError('The server is busy with expensive requests', 2).headers; // { 'retry-after': '2' }
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
 * A route that changes data or the server, called from another machine while no API key is set:
 * out of the box only this machine may write (HTTP 403).
 *
 * @example
 * import { LoopbackOnlyError } from 'rankd/server';
 * console.log(new LoopbackOnlyError().message); // names API_KEYS and ADMIN_API_KEYS
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
