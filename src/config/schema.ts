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
   * before their connections are cut, in ms. @defaultValue `10000`
   */
  SHUTDOWN_TIMEOUT_MS: Type.Integer({ default: 10_000, minimum: 0 }),
  /**
   * Longest time a client may take to send a request's headers, in ms: past it the answer is a 408
   * and the connection is closed. Headers fit in one packet (Node refuses more than 16 KiB), so a
   * live client sends them at once; 10 s still allows for several lost packets. 0 = no limit. Not
   * more than `REQUEST_TIMEOUT_MS`. @defaultValue `10000`
   */
  HEADERS_TIMEOUT_MS: Type.Integer({ default: 10_000, minimum: 0 }),
  /**
   * Longest time a client may take to send a whole request, headers and body, in ms (the time rankd
   * takes to answer is not counted): past it the answer is a 408 and the connection is closed. 60 s
   * lets a `BODY_LIMIT` body (10 MB) arrive at 1.4 Mbit/s; a LAN sends it in under a second.
   * 0 = no limit. @defaultValue `60000`
   */
  REQUEST_TIMEOUT_MS: Type.Integer({ default: 60_000, minimum: 0 }),
  /**
   * Longest pause while a request's body arrives (from the headers to the first byte of the body,
   * and between two pieces of it), in ms: past it the answer is a 408 and the connection is closed,
   * long before `REQUEST_TIMEOUT_MS` for a client that stopped sending. 0 = no limit. @defaultValue `10000`
   */
  BODY_IDLE_TIMEOUT_MS: Type.Integer({ default: 10_000, minimum: 0 }),
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
  /**
   * How long the event loop may go without running (code stuck in a loop, a huge synchronous
   * computation) before the process logs the requests in flight and ends itself with SIGKILL, in
   * ms; 0 = never. Watched from a thread from the moment the server listens (loading models before
   * that is not watched). The default equals the `SHUTDOWN_TIMEOUT_MS` default: a stuck process,
   * which cannot even see a SIGTERM, then ends within that drain period (plus half a second), and
   * well before a liveness probe (3 failures 10 s apart) would restart it without saying why.
   * Healthy requests never keep the loop for anything near it. @defaultValue `10000`
   */
  LOOP_BLOCK_TIMEOUT_MS: Type.Integer({ default: 10_000, minimum: 0 }),
  /**
   * With `rankd run --workers N`: a worker that has not answered the primary's heartbeat pings for
   * this long is killed (SIGKILL) and replaced, in ms; 0 = never. Workers are pinged once they
   * listen, and not while they drain. Longer than `LOOP_BLOCK_TIMEOUT_MS`, so that a stuck worker's own watchdog, whose line names the
   * requests in flight, acts first; this catches what that cannot (the watchdog off, a stopped
   * process). @defaultValue `30000`
   */
  WORKER_HEARTBEAT_TIMEOUT_MS: Type.Integer({ default: 30_000, minimum: 0 }),
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
  /** How long one connection attempt to Redis may take, in ms. @defaultValue `2000` */
  REDIS_CONNECT_TIMEOUT_MS: Type.Integer({ default: 2000, minimum: 1 }),
  /** How long one Redis command may take before the request answers 503, in ms. @defaultValue `2000` */
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
   * Where recorded events go: a Redis Stream (`{PROJECT_NAME}:events`), a JSON Lines file, or
   * nowhere. See docs/reference/events.md. @defaultValue `redis`
   */
  EVENTS_SINK: Type.Union([Type.Literal('redis'), Type.Literal('file'), Type.Literal('off')], {
    default: 'redis',
  }),
  /**
   * Event kinds sent to the sink (comma-separated). `CUSTOM` covers every app-defined type. FEATURE
   * events follow `EVENTS_FEATURE_SAMPLE_RATE`; listing FEATURE here logs them for every request.
   * @defaultValue `MODEL,IMPRESSION,CANDIDATE,EXPERIMENTATION,BUSINESS_LOGIC,CUSTOM`
   */
  EVENTS_KINDS: Type.Array(
    Type.Union(
      ['FEATURE', 'MODEL', 'BUSINESS_LOGIC', 'CANDIDATE', 'IMPRESSION', 'EXPERIMENTATION', 'CUSTOM'].map(
        (k) => Type.Literal(k),
      ),
    ),
    { default: ['MODEL', 'IMPRESSION', 'CANDIDATE', 'EXPERIMENTATION', 'BUSINESS_LOGIC', 'CUSTOM'] },
  ),
  /**
   * Share of requests whose FEATURE events of every candidate (the model's inputs, shown or not)
   * go to the sink: they are large, so only a sample is logged. 0 = never, 1 = every request.
   * The shown candidates' are logged anyway with `EVENTS_SHOWN_FEATURES`. @defaultValue `0.01`
   */
  EVENTS_FEATURE_SAMPLE_RATE: Type.Number({ default: 0.01, minimum: 0, maximum: 1 }),
  /**
   * FEATURE events for every candidate shown (the page) and for the request's own entities (its
   * user, its query) in every request: each value the model read, the training data of the next
   * model. `false`: only sampled requests log features. @defaultValue `true`
   */
  EVENTS_SHOWN_FEATURES: Type.Boolean({ default: true }),
  /**
   * The export's label per feedback type (`type=grade`, comma-separated; a grade is a whole number
   * from 0 to 31, checked in load.ts); other types grade 0, a row's label is the highest grade of
   * its feedback. @defaultValue `purchase=3,add_to_cart=2,click=1`
   */
  EVENTS_LABEL_GRADES: Type.String({ default: 'purchase=3,add_to_cart=2,click=1', minLength: 1 }),
  /**
   * About how many events the event stream keeps (`XADD MAXLEN ~`, converted to entries, one per
   * request, by the mean events per entry). @defaultValue `1000000`
   */
  EVENTS_STREAM_MAXLEN: Type.Integer({ default: 1_000_000, minimum: 1 }),
  /**
   * Most bytes of Redis memory the event stream may take (`MEMORY USAGE`, measured now and then and
   * converted to `MAXLEN ~` entries). Small by default because the stream shares the index's Redis
   * unless `EVENTS_REDIS_URL` is set: a full Redis refuses index writes. 0 = no byte cap.
   * @defaultValue `67108864` (64 MiB)
   */
  EVENTS_STREAM_MAX_BYTES: Type.Integer({ default: 64 * 1024 * 1024, minimum: 0 }),
  /**
   * Entries older than this (by their id, the time they reached the stream) are trimmed
   * (`XTRIM MINID ~`, Redis ≥ 6.2), in ms. 0 = no age cap. @defaultValue `86400000` (24 h)
   */
  EVENTS_STREAM_MAX_AGE_MS: Type.Integer({ default: 24 * 60 * 60 * 1000, minimum: 0 }),
  /**
   * Most events waiting to be written; past it a request's events are dropped (and counted), so a
   * slow or unreachable sink never grows memory. @defaultValue `100000`
   */
  EVENTS_BUFFER_MAX: Type.Integer({ default: 100_000, minimum: 1 }),
  /** Most events in one write to the sink (whole requests); this many waiting are written at once. @defaultValue `1000` */
  EVENTS_BATCH_SIZE: Type.Integer({ default: 1000, minimum: 1, maximum: 100_000 }),
  /** How often waiting events are written, in ms. @defaultValue `50` */
  EVENTS_FLUSH_INTERVAL_MS: Type.Integer({ default: 50, minimum: 1, maximum: 60_000 }),
  /** Longest wait, on server close, for waiting events to be written, in ms. @defaultValue `2000` */
  EVENTS_CLOSE_TIMEOUT_MS: Type.Integer({ default: 2000, minimum: 0 }),
  /** The file `EVENTS_SINK=file` appends to. @defaultValue `./events.jsonl` */
  EVENTS_FILE: Type.String({ default: './events.jsonl', minLength: 1 }),
  /** Redis holding the event stream, when not the main one (`REDIS_URL` / `REDIS_HOST`). */
  EVENTS_REDIS_URL: Type.Optional(Type.String({ pattern: '^rediss?://' })),
  /** pino log level. @defaultValue `info` */
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
    { default: 'info' },
  ),
  /** Serve `GET /metrics` (Prometheus) and keep the metrics behind it. @defaultValue `true` */
  METRICS_ENABLED: Type.Boolean({ default: true }),
  /**
   * Who may read `/metrics` on the main port: `key` (as the API routes: a key once `API_KEYS` is
   * set, so that turning keys on leaves nothing open by mistake) or `public`. A scraper that holds
   * no key reads `METRICS_PORT` instead. @defaultValue `key`
   */
  METRICS_ACCESS: Type.Union([Type.Literal('public'), Type.Literal('key')], { default: 'key' }),
  /**
   * A port of its own for `GET /metrics`, without any key, for a scraper inside the network (a
   * port the Service or load balancer does not expose): `rankd run` serves it on `HOST`, and the
   * main port then has no `/metrics`. With `--workers`, the primary serves it, summing every
   * worker's metrics. Unset: `/metrics` is on the main port.
   */
  METRICS_PORT: Type.Optional(Type.Integer({ minimum: 1, maximum: 65535 })),
  /**
   * OpenTelemetry spans per request and per pipeline stage. Off: no OpenTelemetry package is even
   * loaded. On: needs `@opentelemetry/sdk-trace` and `@opentelemetry/resources` installed (and
   * `@opentelemetry/exporter-trace-otlp-http` for OTLP). @defaultValue `false`
   */
  OTEL_ENABLED: Type.Boolean({ default: false }),
  /** Where spans go when tracing is on: OTLP over HTTP, or the console. @defaultValue `otlp` */
  OTEL_EXPORTER: Type.Union([Type.Literal('otlp'), Type.Literal('console')], { default: 'otlp' }),
  /** Base URL of the OTLP/HTTP receiver; spans are POSTed to `<it>/v1/traces`. @defaultValue `http://localhost:4318` */
  OTEL_EXPORTER_OTLP_ENDPOINT: Type.String({ default: 'http://localhost:4318', pattern: '^https?://' }),
  /** `service.name` of the spans. @defaultValue `rankd` */
  OTEL_SERVICE_NAME: Type.String({ default: 'rankd', minLength: 1 }),
  /**
   * Most of its Redis's `maxmemory` the event stream may take, as a share (read with `INFO memory`
   * at start and every 10 s of writes; no limit when Redis has no `maxmemory`). Whatever the share,
   * the stream gives memory back when the rest of Redis passes 90% of `maxmemory`: past its budget
   * it is trimmed, then events are dropped, never an index or feature write refused. Unset: `0.25`
   * while the stream shares the index's Redis, `1` in a Redis of its own (`EVENTS_REDIS_URL`).
   */
  EVENTS_MAXMEMORY_SHARE: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 1 })),
  /**
   * How often the server checks that the index holds entities of each entity type the app declares
   * (a SCAN until one key matches): an empty one is logged, shown by `/readyz` (`empty_entity_types`)
   * and `rankd_index_empty`. Checked once Redis answers, then at this interval; `0` turns it off.
   * @defaultValue `60000`
   */
  INDEX_EMPTY_CHECK_INTERVAL_MS: Type.Integer({ default: 60_000, minimum: 0 }),

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
 * import { type Config, loadConfig } from 'rankd';
 *
 * const config: Config = loadConfig({ REDIS_URL: 'redis://localhost:6379', PORT: '5002' });
 * console.log(config.PORT, config.PROJECT_NAME); // 5002 'default'
 * ```
 */
export type Config = Readonly<Static<typeof ConfigSchema>>;
