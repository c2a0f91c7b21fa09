/**
 * Settings of earlier rankd versions, folded into fewer ones, each with what to use instead:
 * `rankd run` names each one set once at start (a project's `.env` outlives an upgrade). Where the
 * old value says exactly what a current setting says, {@link withRetiredSettingsRead} reads it so.
 */
export const RETIRED_SETTINGS: Readonly<Record<string, string>> = {
  HEADERS_TIMEOUT_MS: 'REQUEST_TIMEOUT_MS sets it (a sixth of it: 10 s by default)',
  BODY_IDLE_TIMEOUT_MS: 'REQUEST_TIMEOUT_MS sets it (a sixth of it: 10 s by default)',
  LOOP_BLOCK_TIMEOUT_MS:
    'a stuck event loop ends the process after SHUTDOWN_TIMEOUT_MS (10 s by default, as before); SHUTDOWN_TIMEOUT_MS=0 turns the watchdog off',
  WORKER_HEARTBEAT_TIMEOUT_MS: 'a worker is replaced after three times SHUTDOWN_TIMEOUT_MS (30 s by default)',
  REDIS_CONNECT_TIMEOUT_MS: 'REDIS_COMMAND_TIMEOUT_MS bounds a connection attempt too',
  EVENTS_SHOWN_FEATURES: 'use EVENTS_FEATURES (shown, all or off)',
  EVENTS_FEATURE_SAMPLE_RATE:
    "use EVENTS_FEATURES: shown logs every candidate's features in one request of a hundred, all in every request",
  EVENTS_STREAM_MAXLEN: 'the stream keeps to one budget, EVENTS_STREAM_MAX_BYTES',
  EVENTS_STREAM_MAX_AGE_MS:
    'beside the index the stream keeps a day of requests; in a Redis of its own (EVENTS_REDIS_URL), what EVENTS_STREAM_MAX_BYTES holds',
  EVENTS_MAXMEMORY_SHARE:
    "the stream takes at most a quarter of its Redis's maxmemory beside the index, all of it in a Redis of its own (EVENTS_REDIS_URL); EVENTS_STREAM_MAX_BYTES is its budget",
  EVENTS_BUFFER_MAX: 'fixed at 100000 waiting events; unset it',
  EVENTS_BATCH_SIZE: 'fixed at 1000 events per write; unset it',
  EVENTS_FLUSH_INTERVAL_MS: 'waiting events are written every 50 ms; unset it',
  EVENTS_CLOSE_TIMEOUT_MS: 'on close, waiting events get 2 s to be written; unset it',
  EVENTS_FILE: 'use EVENTS_SINK=file:<path>',
  INDEX_EMPTY_CHECK_INTERVAL_MS: 'the index is checked for empty entity types every 60 s; unset it',
  OTEL_ENABLED:
    "use OTEL_EXPORTER: otlp, console or an OTLP receiver's URL turn tracing on; off (the default) turns it off",
  OTEL_EXPORTER_OTLP_ENDPOINT: "use OTEL_EXPORTER=<the OTLP receiver's base URL>",
  METRICS_ENABLED: 'use METRICS_ACCESS=off',
  METRICS_PORT: 'use METRICS_ACCESS=<port>',
  OTEL_SERVICE_NAME: 'spans carry service.name rankd and service.namespace PROJECT_NAME',
};

/** The event kind that became a setting of its own. */
const FEATURE_KIND = 'FEATURE';

const isSet = (value: string | undefined): value is string => value !== undefined && value !== '';
const isFalse = (value: string | undefined) => isSet(value) && /^(false|0|no)$/i.test(value.trim());
const isTrue = (value: string | undefined) => isSet(value) && /^(true|1|yes)$/i.test(value.trim());

/**
 * `named` (names in upper case) with the retired settings that have an exact current equivalent
 * read as it, when the current setting is not set itself: `METRICS_ENABLED=false` is
 * `METRICS_ACCESS=off`, `METRICS_PORT=9464` is `METRICS_ACCESS=9464`, `OTEL_ENABLED=true` is
 * `OTEL_EXPORTER` (its old value, or `OTEL_EXPORTER_OTLP_ENDPOINT`), `EVENTS_FILE` with
 * `EVENTS_SINK=file` is `EVENTS_SINK=file:<path>`, and the FEATURE switches are `EVENTS_FEATURES`
 * (FEATURE in `EVENTS_KINDS` or a sample rate of 1: `all`; `EVENTS_SHOWN_FEATURES=false`: `off`).
 */
export function withRetiredSettingsRead(
  named: Record<string, string | undefined>,
): Record<string, string | undefined> {
  const out = { ...named };
  // `key` and `public` were METRICS_ACCESS's only values: with them, the old settings still decide.
  if (!isSet(named.METRICS_ACCESS) || /^(key|public)$/.test(named.METRICS_ACCESS.trim())) {
    if (isFalse(named.METRICS_ENABLED)) out.METRICS_ACCESS = 'off';
    else if (isSet(named.METRICS_PORT)) out.METRICS_ACCESS = named.METRICS_PORT.trim();
  }
  // OTEL_ENABLED says the old OTEL_EXPORTER was only where spans go.
  if (isSet(named.OTEL_ENABLED)) {
    const endpoint = isSet(named.OTEL_EXPORTER_OTLP_ENDPOINT) ? named.OTEL_EXPORTER_OTLP_ENDPOINT : 'otlp';
    if (!isTrue(named.OTEL_ENABLED)) out.OTEL_EXPORTER = 'off';
    else out.OTEL_EXPORTER = named.OTEL_EXPORTER?.trim() === 'console' ? 'console' : endpoint;
  } else if (isSet(named.OTEL_EXPORTER_OTLP_ENDPOINT) && named.OTEL_EXPORTER?.trim() === 'otlp') {
    out.OTEL_EXPORTER = named.OTEL_EXPORTER_OTLP_ENDPOINT;
  }
  if (isSet(named.EVENTS_FILE) && named.EVENTS_SINK?.trim() === 'file')
    out.EVENTS_SINK = `file:${named.EVENTS_FILE}`;
  const kinds = named.EVENTS_KINDS?.split(',').map((kind) => kind.trim());
  const featureKind = kinds?.includes(FEATURE_KIND) === true;
  if (featureKind) out.EVENTS_KINDS = kinds?.filter((kind) => kind !== FEATURE_KIND).join(',');
  if (!isSet(named.EVENTS_FEATURES)) {
    const rate = Number(named.EVENTS_FEATURE_SAMPLE_RATE);
    if (featureKind || (isSet(named.EVENTS_FEATURE_SAMPLE_RATE) && rate >= 1)) out.EVENTS_FEATURES = 'all';
    else if (isFalse(named.EVENTS_SHOWN_FEATURES)) out.EVENTS_FEATURES = 'off';
  }
  return out;
}

/** One line per retired setting `named` sets (and for FEATURE in `EVENTS_KINDS`), with what to use instead. */
export function retiredSettingLines(named: Record<string, string | undefined>): string[] {
  const lines = Object.entries(RETIRED_SETTINGS)
    .filter(([name]) => isSet(named[name]))
    .map(([name, instead]) => `rankd: ${name} is no longer a setting: ${instead}`);
  if (named.EVENTS_KINDS?.split(',').some((kind) => kind.trim() === FEATURE_KIND))
    lines.push('rankd: FEATURE in EVENTS_KINDS is no longer read: use EVENTS_FEATURES=all');
  return lines;
}
