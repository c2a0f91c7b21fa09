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
   * On SIGTERM/SIGINT, how long in-flight requests may take to finish, in ms. Also how long the
   * event loop may stall before the process logs the requests in flight and ends itself (a stuck
   * process cannot see SIGTERM), and a third of a silent worker's heartbeat limit
   * (docs/reference/configuration.md). 0 = no drain, no watchdog, no heartbeat. @defaultValue `10000`
   */
  SHUTDOWN_TIMEOUT_MS: Type.Integer({ default: 10_000, minimum: 0 }),
  /**
   * Longest time a client may take to send a whole request, in ms; a sixth of it bounds the headers
   * and each pause in the body. Past it: 408, connection closed. 60 s lets a `BODY_LIMIT` body
   * (10 MB) arrive at 1.4 Mbit/s. 0 = none of these limits. @defaultValue `60000`
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
   * The JSON fast paths (src/fast-paths/README.md, DR-001..DR-005): each answers as the plain path or
   * declines; `false` routes around a suspected fast-path bug at the cost of CPU. @defaultValue `true`
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
   * The event stream's budget in bytes of Redis memory (`MEMORY USAGE`, turned into `MAXLEN ~`).
   * Small by default because the stream shares the index's Redis unless `EVENTS_REDIS_URL` is set,
   * and a full Redis refuses index writes (docs/reference/configuration.md: the other caps).
   * 0 = no byte cap. @defaultValue `67108864` (64 MiB)
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
   * Who may read `GET /metrics`: `key` (as the API routes, so that turning keys on leaves nothing
   * open by mistake), `public`, a port of its own without any key (with `--workers`, the primary's,
   * summing every worker's), or `off` (no metrics kept). @defaultValue `key`
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
   * Where OpenTelemetry spans go: `otlp` (`http://localhost:4318`), another OTLP/HTTP receiver's base
   * URL, `console`, or `off` (no OpenTelemetry package loaded; on, the app installs them). @defaultValue `off`
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
   * The most work in flight per process, in cost units of about 10 µs of one core; expensive requests
   * (cost ≥ 2,000) may hold a fifth of it. No room: 503 `RANKD_OVERLOADED` with `Retry-After`.
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

/** The validated, frozen configuration every part of rankd reads. */
export type Config = Readonly<Static<typeof ConfigSchema>>;
