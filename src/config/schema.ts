import Type, { type Static } from 'typebox';

/**
 * Every setting rankd reads from the environment (or `.env`), with its default. Names follow the
 * predecessor where they mean the same (`REDIS_HOST`, `REDIS_PORT`, `PROJECT_NAME`, ...).
 * `docs/configuration.md` is the user-facing table of these.
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
  /** How long one connection attempt to Redis may take, in ms. @defaultValue `2000` */
  REDIS_CONNECT_TIMEOUT_MS: Type.Integer({ default: 2000, minimum: 1 }),
  /** How long one Redis command may take before the request answers 503, in ms. @defaultValue `2000` */
  REDIS_COMMAND_TIMEOUT_MS: Type.Integer({ default: 2000, minimum: 1 }),
  /** First segment of every Redis key. @defaultValue `default` */
  PROJECT_NAME: Type.String({ default: 'default', minLength: 1 }),
  /** Second segment of index keys; bump it to start a fresh index. @defaultValue `1` */
  INDEX_VERSION: Type.String({ default: '1', minLength: 1 }),
  /** How index values are written: compact JSON, or JSON in an LZ4 frame as the predecessor wrote. Reads accept both. */
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
   * nowhere. See docs/events.md. @defaultValue `redis`
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
   * Share of requests whose FEATURE events (every candidate's model features) go to the sink:
   * they are large, so only a sample is logged. 0 = never, 1 = every request. @defaultValue `0.01`
   */
  EVENTS_FEATURE_SAMPLE_RATE: Type.Number({ default: 0.01, minimum: 0, maximum: 1 }),
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
   * Who may read `/metrics`: `public` (scrapers rarely hold app keys; keep the port private
   * instead) or `key` (an API key, like the API routes). @defaultValue `public`
   */
  METRICS_ACCESS: Type.Union([Type.Literal('public'), Type.Literal('key')], { default: 'public' }),
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
});

/** The validated, frozen configuration every part of rankd reads. */
export type Config = Readonly<Static<typeof ConfigSchema>>;
