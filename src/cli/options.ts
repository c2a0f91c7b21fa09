import { availableParallelism } from 'node:os';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { ErrorCode } from '../errors/index.js';
import { CliError } from './cli-error.js';

function portParser(min: number) {
  return (value: string): number => {
    // Number() would accept '', '0x1f' and '1e3'; a port is plain digits.
    const port = /^\d{1,5}$/.test(value) ? Number(value) : Number.NaN;
    if (!(port >= min && port <= 65535)) {
      throw new InvalidArgumentError(`expected a port number from ${min} to 65535.`);
    }
    return port;
  };
}

/** Parses a Redis port (1–65535). */
const parseRedisPort = portParser(1);
/** Parses an HTTP port (0–65535; 0 picks a free one). */
export const parseHttpPort = portParser(0);

/**
 * Reads option `name` of `command`, falling back to its parent's value when only the parent got it
 * on the command line, so `rankd redis --port 7000 stop` means the same as `rankd redis stop --port 7000`.
 */
export function optionFromCommandOrParent<T>(command: Command, name: string): T {
  const parent = command.parent;
  if (parent && command.getOptionValueSource(name) !== 'cli' && parent.getOptionValueSource(name) === 'cli') {
    return parent.getOptionValue(name) as T;
  }
  return command.getOptionValue(name) as T;
}

/** `-p, --port <port>` for the redis commands. */
export function redisPortOption(): Option {
  return new Option('-p, --port <port>', 'port of the local Redis').default(6379).argParser(parseRedisPort);
}

/** `--dir <dir>` for the redis commands. */
export function redisDirOption(): Option {
  return new Option(
    '--dir <dir>',
    "Redis data directory, holding the AOF files, redis.log and redis.pid (default: rankd's data directory, redis-<port>)",
  );
}

/** The most workers `--workers` accepts: far past any machine's cores, short of a typo's `1000`. */
export const MAX_WORKERS = 256;

/** Parses `--workers`: a count from 1 to {@link MAX_WORKERS}, or `auto` for one per available core. */
export function parseWorkers(value: string): number {
  if (value === 'auto') return Math.min(availableParallelism(), MAX_WORKERS);
  const count = /^\d{1,3}$/.test(value) ? Number(value) : Number.NaN;
  if (!(count >= 1 && count <= MAX_WORKERS)) {
    throw new InvalidArgumentError(`expected a number of workers from 1 to ${MAX_WORKERS}, or auto.`);
  }
  return count;
}

/**
 * A number flag's value (undefined when not given), or a usage error naming the flag and what it
 * expects: `--confidence "2": expected a share between 0 and 1`.
 */
export function numberFlag(
  name: string,
  text: string | undefined,
  ok: (value: number) => boolean = Number.isFinite,
  expected = 'a number',
): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!ok(value))
    throw new CliError(`--${name} ${JSON.stringify(text)}: expected ${expected}`, ErrorCode.CLI_USAGE);
  return value;
}
