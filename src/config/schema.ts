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
  /** Comma-separated API keys; when set, every route but health and docs needs one. */
  API_KEYS: Type.Array(Type.String({ minLength: 1 }), { default: [] }),
  /** Comma-separated keys that may also call admin routes. */
  ADMIN_API_KEYS: Type.Array(Type.String({ minLength: 1 }), { default: [] }),
  /**
   * `development` logs pretty lines when stdout is a terminal; anything else (or output to a file
   * or pipe) logs JSON lines. @defaultValue `development`
   */
  ENVIRONMENT: Type.String({ default: 'development' }),
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
