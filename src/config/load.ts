import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseDotenv } from 'dotenv';
import { Compile } from 'typebox/compile';
import { Value } from 'typebox/value';
import { ConfigError, problemsFromSchemaErrors } from '../errors/index.js';
import { parseLabelGrades } from './label-grades.js';
import { PREDECESSOR_ONLY_SETTINGS } from './predecessor-settings.js';
import { type Config, ConfigSchema } from './schema.js';

const validator = Compile(ConfigSchema);

/** Environment variables accepted under the predecessor's name, mapped to ours. */
const ALIASES: Record<string, keyof Config> = {
  WYVERN_INDEX_VERSION: 'INDEX_VERSION',
};

/**
 * Settings that existed and were removed, with what to do instead: set, they stop the start with
 * that message rather than being ignored as unknown variables are.
 */
const REMOVED: Record<string, string> = {
  MODEL_THREADS:
    "removed: GBDT batches are scored on the request's thread (splitting them cost more CPU than it saved under load); unset it",
};

const LIST_KEYS = new Set<string>(['API_KEYS', 'ADMIN_API_KEYS', 'EVENTS_KINDS', 'REDIS_CLUSTER_NODES']);
const keysOfType = (type: string) =>
  new Set<string>(
    Object.entries(ConfigSchema.properties)
      .filter(([, s]) => (s as { type?: unknown }).type === type)
      .map(([k]) => k),
  );
const INTEGER_KEYS = keysOfType('integer');
const NUMBER_KEYS = keysOfType('number');
const BOOLEAN_KEYS = keysOfType('boolean');
/** Spellings of a boolean setting: the usual ones of environment files. */
const BOOLEAN_WORDS: Record<string, boolean> = {
  true: true,
  '1': true,
  yes: true,
  false: false,
  '0': false,
  no: false,
};

/** The boolean a setting's text spells, or undefined (own words only: `constructor` is no boolean). */
function booleanWord(text: string): boolean | undefined {
  const word = text.trim().toLowerCase();
  return Object.hasOwn(BOOLEAN_WORDS, word) ? BOOLEAN_WORDS[word] : undefined;
}

/**
 * The predecessor's switch for event logging: `false` means `EVENTS_SINK=off` unless `EVENTS_SINK`
 * is set too (the explicit sink wins; see docs/configuration.md).
 */
const EVENT_LOGGING_ENABLED = 'EVENT_LOGGING_ENABLED';

/** Every name rankd recognises in the environment, upper case: its settings and the predecessor's. */
const KNOWN_NAMES = new Set<string>([
  ...Object.keys(ConfigSchema.properties),
  ...Object.keys(ALIASES),
  ...Object.keys(REMOVED),
  ...Object.keys(PREDECESSOR_ONLY_SETTINGS),
  EVENT_LOGGING_ENABLED,
]);

/**
 * Settings that, once set, make others unused: `REDIS_URL` wins over `REDIS_HOST`/`REDIS_PORT`,
 * and so on. Across sources this decides what "the process environment wins" means: a value
 * from a lower source (`.env`) is dropped when it would override one from a higher source
 * (`REDIS_PORT=6391 rankd run` beats the `.env`'s `REDIS_URL`).
 */
const OVERRIDING: ReadonlyArray<readonly [string, readonly string[]]> = [
  ['REDIS_CLUSTER_NODES', ['REDIS_URL', 'REDIS_HOST', 'REDIS_PORT']],
  ['REDIS_URL', ['REDIS_HOST', 'REDIS_PORT']],
  ['EVENTS_SINK', [EVENT_LOGGING_ENABLED]],
  ['INDEX_VERSION', ['WYVERN_INDEX_VERSION']],
];

/**
 * `source` with the names rankd knows in upper case: the predecessor matched names without regard
 * to case (`redis_port` set `REDIS_PORT`). Within one source the upper-case spelling wins; other
 * variables are left as they are.
 */
export function withSettingNamesInUpperCase(
  source: Record<string, string | undefined>,
): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = { ...source };
  for (const [name, value] of Object.entries(source)) {
    const upper = name.toUpperCase();
    if (upper === name || !KNOWN_NAMES.has(upper)) continue;
    delete out[name];
    if (source[upper] === undefined) out[upper] = value;
  }
  return out;
}

/**
 * Reads `.env` then `.env.prod` from `dir` (the later file wins, as in the predecessor); the
 * process environment wins over both, as a whole: names match without regard to case, and a
 * lower source's setting that would override a higher source's is dropped (see `OVERRIDING`).
 */
export function readEnvFiles(
  dir: string,
  env: NodeJS.ProcessEnv = process.env,
): Record<string, string | undefined> {
  const sources: Array<Record<string, string | undefined>> = [];
  for (const name of ['.env', '.env.prod']) {
    const path = join(dir, name);
    if (existsSync(path)) sources.push(parseDotenv(readFileSync(path)));
  }
  sources.push(env);
  const merged: Record<string, string | undefined> = {};
  const rank: Record<string, number> = {};
  sources.forEach((source, i) => {
    for (const [name, value] of Object.entries(withSettingNamesInUpperCase(source))) {
      if (value === undefined) continue;
      merged[name] = value;
      rank[name] = i;
    }
  });
  for (const [winner, others] of OVERRIDING) {
    const own = rank[winner];
    if (own === undefined || merged[winner] === '') continue;
    if (others.some((other) => (rank[other] ?? -1) > own && merged[other] !== '')) delete merged[winner];
  }
  return merged;
}

/**
 * One line per setting of the predecessor's that `source` sets and rankd does not read, saying
 * what to use instead: `rankd run` prints them once at start.
 */
export function predecessorSettingWarnings(source: Record<string, string | undefined>): string[] {
  const named = withSettingNamesInUpperCase(source);
  return Object.entries(PREDECESSOR_ONLY_SETTINGS)
    .filter(([name]) => named[name] !== undefined && named[name] !== '')
    .map(([name, instead]) => `rankd: ${name} is a setting of Wyvern that rankd does not read: ${instead}`);
}

/**
 * Validates settings once and returns them frozen. `source` is a map of environment variables
 * (strings, as the environment has them); `overrides` are already-typed values (CLI flags) that win.
 * Names match without regard to case. Unknown variables are ignored (`rankd run` names those an
 * earlier system read, with what to use instead), removed ones are not (see `REMOVED`); every invalid one
 * is reported at once in a {@link ConfigError}.
 *
 * @example
 * ```ts
 * import { buildServer, loadConfig } from 'rankd/server';
 * import app from './pipelines/main.js';
 *
 * // Settings from the environment (as `rankd run` reads them), some given in code.
 * const config = loadConfig(process.env, { PORT: 5002 });
 * const server = await buildServer({ app, config });
 * await server.listen({ port: config.PORT, host: config.HOST });
 * ```
 */
export function loadConfig(
  source: Record<string, string | undefined> = process.env,
  overrides: Partial<Config> = {},
): Config {
  const named = withSettingNamesInUpperCase(source);
  const raw: Record<string, unknown> = {};
  const problems: string[] = [];
  problems.push(...eventLoggingSwitch(named, raw));
  for (const [name, why] of Object.entries(REMOVED)) {
    if (named[name] !== undefined && named[name] !== '') problems.push(`${name}: ${why}`);
  }
  for (const [alias, name] of Object.entries(ALIASES)) {
    const value = named[alias];
    if (value !== undefined && named[name] === undefined) raw[name] = value;
  }
  for (const name of Object.keys(ConfigSchema.properties)) {
    const value = named[name];
    if (value === undefined || value === '') continue;
    if (LIST_KEYS.has(name)) {
      raw[name] = value
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s.length > 0);
    } else if (INTEGER_KEYS.has(name)) {
      // Number('') and Number(' 12 ') are too lenient for a port; accept plain digits only.
      if (/^\d+$/.test(value.trim())) raw[name] = Number(value.trim());
      else problems.push(`${name}=${JSON.stringify(value)}: expected a whole number`);
    } else if (NUMBER_KEYS.has(name)) {
      // Plain decimals only, for the same reason: Number('') is 0 and Number('0x1') is 1.
      if (/^\d+(\.\d+)?$|^\.\d+$/.test(value.trim())) raw[name] = Number(value.trim());
      else problems.push(`${name}=${JSON.stringify(value)}: expected a number`);
    } else if (BOOLEAN_KEYS.has(name)) {
      const flag = booleanWord(value);
      if (flag === undefined) problems.push(`${name}=${JSON.stringify(value)}: expected true or false`);
      else raw[name] = flag;
    } else {
      raw[name] = value;
    }
  }
  Object.assign(raw, overrides);
  const withDefaults = Value.Default(ConfigSchema, raw) as Record<string, unknown>;
  if (!validator.Check(withDefaults)) {
    const seen = new Set<string>();
    const errors = [...validator.Errors(withDefaults)];
    // In rankd's words (`expected at least 1`), not the validator's.
    const described = problemsFromSchemaErrors(errors, [], { schema: ConfigSchema, value: withDefaults });
    for (const error of errors) {
      const name = error.instancePath.split('/')[1] ?? '(config)';
      if (seen.has(name)) continue;
      seen.add(name);
      const choices = allowedValues(name);
      const wording = described.find((p) => p.loc[0] === name)?.msg.replace(/^[^:]*: /, '');
      const why = choices ? `expected one of ${choices.join(', ')}` : (wording ?? 'invalid');
      problems.push(`${name}=${JSON.stringify(withDefaults[name])}: ${why}`);
    }
  }
  problems.push(...clusterProblems(withDefaults), ...metricsPortProblems(withDefaults));
  problems.push(...timeoutProblems(withDefaults));
  problems.push(...labelGradeProblems(withDefaults));
  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze(withDefaults as Config);
}

/** `EVENT_LOGGING_ENABLED=false` → `EVENTS_SINK=off`, unless `EVENTS_SINK` is set; returns its problem, if any. */
function eventLoggingSwitch(
  source: Record<string, string | undefined>,
  raw: Record<string, unknown>,
): string[] {
  const value = source[EVENT_LOGGING_ENABLED];
  if (value === undefined || value === '') return [];
  const flag = booleanWord(value);
  if (flag === undefined)
    return [`${EVENT_LOGGING_ENABLED}=${JSON.stringify(value)}: expected true or false`];
  if (!flag && (source.EVENTS_SINK === undefined || source.EVENTS_SINK === '')) raw.EVENTS_SINK = 'off';
  return [];
}

/** `host:port`, the host a name, an IPv4 address or a bracketed IPv6 address. */
const CLUSTER_NODE = /^(\[[0-9A-Fa-f:.]+\]|[^\s:[\],/]+):(\d{1,5})$/;

/**
 * Checks `REDIS_CLUSTER_NODES` entries, and on a cluster the key prefixes: every key carries a
 * hash tag, `{type:id}`, and a brace in a prefix before it would open the tag early and put every
 * key in one slot.
 */
function clusterProblems(settings: Record<string, unknown>): string[] {
  const nodes = settings.REDIS_CLUSTER_NODES;
  if (!Array.isArray(nodes) || nodes.length === 0) return [];
  const problems = nodes
    .filter((node) => {
      const port = Number(CLUSTER_NODE.exec(String(node))?.[2] ?? 0);
      return !(port >= 1 && port <= 65535);
    })
    .map((node) => `REDIS_CLUSTER_NODES: ${JSON.stringify(node)} is not host:port (e.g. 10.0.0.1:6379)`);
  for (const name of ['PROJECT_NAME', 'INDEX_VERSION']) {
    if (/[{}]/.test(String(settings[name])))
      problems.push(
        `${name}=${JSON.stringify(settings[name])}: must not contain { or } with REDIS_CLUSTER_NODES`,
      );
  }
  return problems;
}

/** Node's HTTP server refuses to start with a headers timeout longer than its request timeout. */
function timeoutProblems(settings: Record<string, unknown>): string[] {
  const headers = settings.HEADERS_TIMEOUT_MS;
  const request = settings.REQUEST_TIMEOUT_MS;
  if (typeof headers !== 'number' || typeof request !== 'number') return [];
  if (headers > 0 && request > 0 && headers > request)
    return [`HEADERS_TIMEOUT_MS=${headers}: must not be more than REQUEST_TIMEOUT_MS (${request})`];
  return [];
}

/** `METRICS_PORT` must be a port of its own, and have metrics to serve. */
function metricsPortProblems(settings: Record<string, unknown>): string[] {
  const port = settings.METRICS_PORT;
  if (port === undefined) return [];
  if (port === settings.PORT)
    return [`METRICS_PORT=${port}: must differ from PORT (the metrics get a port of their own)`];
  if (settings.METRICS_ENABLED === false) return [`METRICS_PORT=${port}: set, but METRICS_ENABLED=false`];
  return [];
}

function allowedValues(name: string): string[] | undefined {
  type Choices = { anyOf?: { const?: unknown }[] };
  const schema = (ConfigSchema.properties as Record<string, Choices & { items?: Choices }>)[name];
  // A list setting (EVENTS_KINDS) has its choices on the items.
  return (schema?.anyOf ?? schema?.items?.anyOf)?.map((s) => String(s.const));
}

/** The Redis URL the configuration points at: `REDIS_URL`, else `redis://REDIS_HOST:REDIS_PORT`. */
export function redisUrlOf(config: Config): string {
  return config.REDIS_URL ?? `redis://${config.REDIS_HOST}:${config.REDIS_PORT}`;
}

/** `EVENTS_LABEL_GRADES` as `type=grade,...` with whole grades: `click=1.5` says why it is refused. */
function labelGradeProblems(settings: Record<string, unknown>): string[] {
  const text = settings.EVENTS_LABEL_GRADES;
  if (typeof text !== 'string') return [];
  const { problem } = parseLabelGrades(text);
  return problem === undefined ? [] : [`EVENTS_LABEL_GRADES=${JSON.stringify(text)}: ${problem}`];
}
