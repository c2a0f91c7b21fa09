import Type, { type Static } from 'typebox';

/**
 * Every setting rankd reads from the environment (or `.env`), with its default. Names follow the
 * predecessor where they mean the same (`REDIS_HOST`, `REDIS_PORT`, `PROJECT_NAME`, ...).
 * `docs/reference/configuration.md` is the user-facing table of these.
 */
export const ConfigSchema = Type.Object({
  /** Interface the HTTP server binds to. @defaultValue `0.0.0.0` */
  HOST: Type.String({ default: '0.0.0.0', minLength: 1 }),
  /** HTTP port. @defaultValue `5001` */
  PORT: Type.Integer({ default: 5001, minimum: 0, maximum: 65535 }),
  /**
   * On SIGTERM/SIGINT (or a worker being replaced), how long in-flight requests may take to finish
   * before their connections are cut, in ms. Also how long the event loop may go without running
   * (code stuck in a loop, a huge synchronous computation) before the process logs the requests in
   * flight and ends itself with SIGKILL: a stuck process cannot even see a SIGTERM, and so still
   * ends within the drain period (plus half a second), well before a liveness probe (3 failures
   * 10 s apart) would restart it without saying why. Watched from a thread once the server listens
   * (loading models is not watched). With `rankd run --workers N`, a worker that has not answered
   * the primary's heartbeat pings for three times this is killed and replaced: its own watchdog,
   * whose line names the requests in flight, acts first. 0 = no drain, no watchdog, no heartbeat.
   * @defaultValue `10000`
   */
  SHUTDOWN_TIMEOUT_MS: Type.Integer({ default: 10_000, minimum: 0 }),
  /**
   * Longest time a client may take to send a whole request, headers and body, in ms (the time rankd
   * takes to answer is not counted): past it the answer is a 408 and the connection is closed. 60 s
   * lets a `BODY_LIMIT` body (10 MB) arrive at 1.4 Mbit/s; a LAN sends it in under a second. A sixth
   * of it (10 s) bounds the headers, and each pause while the body arrives. 0 = none of these limits.
   * @defaultValue `60000`
   */
  REQUEST_TIMEOUT_MS: Type.Integer({ default: 60_000, minimum: 0 }),
  /**
   * How long a keep-alive connection may stay idle between requests before rankd closes it, in ms.
   * Behind a load balancer it must be longer than the balancer's own idle timeout (AWS ALB's and
   * nginx's are 60 s), so that the balancer, not rankd, closes idle connections. @defaultValue `72000`
   */
  KEEP_ALIVE_TIMEOUT_MS: Type.Integer({ default: 72_000, minimum: 1 }),
  /**
   * Most open connections per process (each worker with `--workers`); further connections are
   * closed as soon as they are accepted. An idle connection costs about 8 KB. 0 = no limit.
   * @defaultValue `10000`
   */
  MAX_CONNECTIONS: Type.Integer({ default: 10_000, minimum: 0 }),
  /** Full Redis URL; wins over `REDIS_HOST`/`REDIS_PORT` when set. */
  REDIS_URL: Type.Optional(Type.String({ pattern: '^rediss?://' })),
  /** Redis host, used when `REDIS_URL` is not set. @defaultValue `localhost` */
  REDIS_HOST: Type.String({ default: 'localhost', minLength: 1 }),
  /** Redis port, used when `REDIS_URL` is not set. @defaultValue `6379` */
  REDIS_PORT: Type.Integer({ default: 6379, minimum: 1, maximum: 65535 }),
  /**
   * Comma-separated `host:port` of some nodes of a Redis Cluster: when set, rankd runs on that
   * cluster (the rest of its nodes are discovered) and `REDIS_URL`/`REDIS_HOST`/`REDIS_PORT` are not used.
   */
  REDIS_CLUSTER_NODES: Type.Array(Type.String({ minLength: 1 }), { default: [] }),
  /**
   * Whether responses may name Redis's host and port (or a cluster's nodes): `/readyz` and the 503s
   * of an outage. Off, they say what to do without them, and only the server's log names them:
   * `/readyz` answers without a key, and the network's layout is no caller's business.
   * @defaultValue `false`
   */
  EXPOSE_REDIS_ADDRESS: Type.Boolean({ default: false }),
  /**
   * How long one Redis command may take before the request answers 503, in ms; also how long one
   * connection attempt may take. @defaultValue `2000`
   */
  REDIS_COMMAND_TIMEOUT_MS: Type.Integer({ default: 2000, minimum: 1 }),
  /**
   * What `entities/get` and `features/get` do on a Redis Cluster while some masters cannot answer:
   * `partial` answers 200 with what the others hold and lists the rest in `unavailable_ids` (and the
   * `x-rankd-degraded` header); `fail` answers 503 naming the nodes and their slots. Pipelines have
   * their own setting (`onUnreachableShard`). @defaultValue `partial`
   */
  GETS_ON_UNREACHABLE_SHARD: Type.Union([Type.Literal('partial'), Type.Literal('fail')], {
    default: 'partial',
  }),
  /** First segment of every Redis key. @defaultValue `default` */
  PROJECT_NAME: Type.String({ default: 'default', minLength: 1 }),
  /** Second segment of index keys; bump it to start a fresh index. @defaultValue `1` */
  INDEX_VERSION: Type.String({ default: '1', minLength: 1 }),
  /**
   * Size of each process's cache of entity and feature-row reads, in MiB; 0 turns it off. Kept
   * exact by Redis's invalidation messages (any writer's writes) and dropped whenever they may have
   * been missed (docs/reference/feature-store.md#read-cache, DR-020). @defaultValue `0`
   */
  READ_CACHE_MB: Type.Integer({ default: 0, minimum: 0, maximum: 1_048_576 }),
  /** How index values are written: compact JSON, or JSON in an LZ4 frame. Reads accept both. */
  INDEX_CODEC: Type.Union([Type.Literal('json'), Type.Literal('lz4')], { default: 'json' }),
  /** Most items (entities or ids) in one index call. @defaultValue `1000` */
  MAX_BATCH: Type.Integer({ default: 1000, minimum: 1, maximum: 100000 }),
  /** Largest accepted request body, in bytes. @defaultValue 10 MB */
  BODY_LIMIT: Type.Integer({ default: 10 * 1024 * 1024, minimum: 1024 }),
  /**
   * The JSON fast paths (src/fast-paths/README.md): upload and get bodies read from their bytes,
   * the get answer copied from the stored bytes, the pipeline's events written as text, JSON
   * bodies spared the prototype-key scan when they cannot hold one. Each gives the same answer as
   * the plain path or declines; `false` routes around a suspected fast-path bug in production at
   * the cost of CPU per call (DR-001..DR-005). @defaultValue `true`
   */
  FAST_PATHS: Type.Boolean({ default: true }),
  /**
   * How request bodies are read. `strict`: a value of the wrong type, or a field a body does not
   * declare, is a 422. `lenient`: as the predecessor (pydantic v1) read them: `"3"` for an integer
   * is 3, 7 for a string is `"7"`, `"true"` for a boolean is true, and unknown fields are dropped.
   * Either way an unknown field is named in the `x-rankd-unknown-fields` response header and in
   * a warning log line. docs/migrating.md says when to use which. @defaultValue `strict`
   */
  REQUEST_BODIES: Type.Union([Type.Literal('strict'), Type.Literal('lenient')], { default: 'strict' }),
  /** Comma-separated API keys; when set, every route but health and docs needs one. */
  API_KEYS: Type.Array(Type.String({ minLength: 1 }), { default: [] }),
  /** Comma-separated keys that may also call admin routes. */
  ADMIN_API_KEYS: Type.Array(Type.String({ minLength: 1 }), { default: [] }),
  /**
   * `development` logs pretty lines when stdout is a terminal; anything else (or output to a file
   * or pipe) logs JSON lines. @defaultValue `development`
   */
  ENVIRONMENT: Type.String({ default: 'development' }),
  /**
   * Where recorded events go: `redis` (a Redis Stream, `{PROJECT_NAME}:events`), `file` (JSON Lines
   * in `./events.jsonl`), `file:<path>` (JSON Lines in that file), or `off`. See
   * docs/reference/events.md. @defaultValue `redis`
   */
  EVENTS_SINK: Type.Union(
    [Type.Literal('redis'), Type.Literal('file'), Type.Literal('off'), Type.String({ pattern: '^file:.+' })],
    { default: 'redis' },
  ),
  /**
   * Event kinds sent to the sink (comma-separated). `CUSTOM` covers every app-defined type. FEATURE
   * events follow `EVENTS_FEATURES`. @defaultValue `MODEL,IMPRESSION,CANDIDATE,EXPERIMENTATION,BUSINESS_LOGIC,CUSTOM`
   */
  EVENTS_KINDS: Type.Array(
    Type.Union(
      ['MODEL', 'BUSINESS_LOGIC', 'CANDIDATE', 'IMPRESSION', 'EXPERIMENTATION', 'CUSTOM'].map((k) =>
        Type.Literal(k),
      ),
    ),
    { default: ['MODEL', 'IMPRESSION', 'CANDIDATE', 'EXPERIMENTATION', 'BUSINESS_LOGIC', 'CUSTOM'] },
  ),
  /**
   * Which feature values go to the sink. `shown`: each value the model read for every candidate
   * shown (the page) and for the request's own entities (its user, its query), in every request
   * (the training data of the next model), and those of every candidate in one request of a hundred
   * (they are large). `all`: every candidate's, in every request. `off`: none. @defaultValue `shown`
   */
  EVENTS_FEATURES: Type.Union([Type.Literal('shown'), Type.Literal('all'), Type.Literal('off')], {
    default: 'shown',
  }),
  /**
   * The export's label per feedback type (`type=grade`, comma-separated; a grade is a whole number
   * from 0 to 31, checked in load.ts); other types grade 0, a row's label is the highest grade of
   * its feedback. @defaultValue `purchase=3,add_to_cart=2,click=1`
   */
  EVENTS_LABEL_GRADES: Type.String({ default: 'purchase=3,add_to_cart=2,click=1', minLength: 1 }),
  /**
   * The event stream's budget: most bytes of Redis memory it may take (`MEMORY USAGE`, measured now
   * and then and converted to `MAXLEN ~` entries). Small by default because the stream shares the
   * index's Redis unless `EVENTS_REDIS_URL` is set: a full Redis refuses index writes. Beside the
   * index the stream also keeps to a quarter of `maxmemory` and a day of requests; in a Redis of its
   * own to all of `maxmemory`, for as long as the budget holds. Either way it gives memory back once
   * the rest of Redis passes 90% of `maxmemory`. 0 = no byte cap.
   * @defaultValue `67108864` (64 MiB)
   */
  EVENTS_STREAM_MAX_BYTES: Type.Integer({ default: 64 * 1024 * 1024, minimum: 0 }),
  /** Redis holding the event stream, when not the main one (`REDIS_URL` / `REDIS_HOST`). */
  EVENTS_REDIS_URL: Type.Optional(Type.String({ pattern: '^rediss?://' })),
  /** pino log level. @defaultValue `info` */
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
    { default: 'info' },
  ),
  /**
   * Who may read `GET /metrics` (Prometheus): `key` (on the main port, as the API routes: a key once
   * `API_KEYS` is set, so that turning keys on leaves nothing open by mistake), `public` (on the main
   * port, no key), a port number (a port of its own, without any key, for a scraper inside the
   * network: `rankd run` serves it on `HOST`, and with `--workers` the primary serves it, summing
   * every worker's metrics), or `off` (no metrics served or kept). @defaultValue `key`
   */
  METRICS_ACCESS: Type.Union(
    [
      Type.Literal('public'),
      Type.Literal('key'),
      Type.Literal('off'),
      Type.String({ pattern: '^[0-9]{1,5}$' }),
    ],
    { default: 'key' },
  ),
  /**
   * OpenTelemetry spans per request and per pipeline stage, and where they go: `otlp` (OTLP over
   * HTTP to `http://localhost:4318`), the base URL of another OTLP/HTTP receiver (spans are POSTed
   * to `<it>/v1/traces`), `console`, or `off`. Off: no OpenTelemetry package is even loaded. On:
   * needs `@opentelemetry/sdk-trace` and `@opentelemetry/resources` installed (and
   * `@opentelemetry/exporter-trace-otlp-http` for OTLP). @defaultValue `off`
   */
  OTEL_EXPORTER: Type.Union(
    [
      Type.Literal('off'),
      Type.Literal('otlp'),
      Type.Literal('console'),
      Type.String({ pattern: '^https?://' }),
    ],
    { default: 'off' },
  ),

  // Admission control (src/http/admission-control.ts; docs/reference/configuration.md, "Admission control").
  /**
   * The most work in flight at once, per process, in cost units of about 10 µs of one core (a
   * request's cost: 100, plus one per candidate, ten more per candidate with `include_events`,
   * more with `explain`, one per KiB of body). Expensive requests (cost ≥ 2,000) may hold a fifth
   * of it together; the rest is kept for the others. A request that finds no room is refused with
   * 503 `RANKD_OVERLOADED` and `Retry-After` (an expensive one after waiting up to a second).
   * 0 = no admission control. @defaultValue `100000` (about a second of work)
   */
  ADMISSION_BUDGET: Type.Integer({ default: 100_000, minimum: 0 }),
  /**
   * With API keys: the share of `ADMISSION_BUDGET`, and of its expensive part, one key's requests
   * may hold at once; past it the key gets 429 `RANKD_KEY_SHARE_EXCEEDED` (a key with nothing in
   * flight is always let in). 1 = no per-key limit. @defaultValue `1`
   */
  ADMISSION_KEY_SHARE: Type.Number({ default: 1, exclusiveMinimum: 0, maximum: 1 }),
});

/**
 * The validated, frozen configuration every part of rankd reads.
 *
 * @example
 * ```ts
 * import { type Config, loadConfig } from 'rankd/server';
 *
 * const config: Config = loadConfig({ REDIS_URL: 'redis://localhost:6379', PORT: '5002' });
 * console.log(config.PORT, config.PROJECT_NAME); // 5002 'default'
 * ```
 */
export type Config = Readonly<Static<typeof ConfigSchema>>;
