import { ErrorCode, RankdError } from '../errors/index.js';

/** The catalogue codes a {@link CliError} may carry, with the HTTP status each would have. */
const CLI_STATUS = {
  [ErrorCode.CLI_USAGE]: 400,
  [ErrorCode.INPUT_INVALID]: 400,
  [ErrorCode.CLI_FAILED]: 500,
  [ErrorCode.REDIS_UNAVAILABLE]: 503,
} as const;

/** A code a {@link CliError} may carry: what kind of failure it is (see docs/reference/errors.md). */
type CliErrorCode = keyof typeof CLI_STATUS;

/**
 * A failure the user can act on: the CLI prints its message as one line, without a stack trace.
 * Anything else that escapes a command is printed the same way (see {@link oneLine}). A
 * catalogue error like any other: `code` says whether the arguments, a data file, Redis or the
 * environment is at fault.
 */
export class CliError extends RankdError {
  /** The process exit code. @defaultValue `1` */
  readonly exitCode: number;

  constructor(message: string, code: CliErrorCode = ErrorCode.CLI_FAILED, exitCode = 1) {
    super(code, CLI_STATUS[code], message);
    this.exitCode = exitCode;
  }
}

/**
 * Folds a possibly multi-line message (a {@link ConfigError} lists one problem per line) into
 * one line, so every failure stays a single line on stderr.
 */
export function oneLine(message: string): string {
  const lines = message
    .split('\n')
    .map((line) => line.trim().replace(/^- /, ''))
    .filter((line) => line.length > 0);
  const [first = 'unknown error', ...rest] = lines;
  return rest.length === 0 ? first : `${first} ${rest.join('; ')}`;
}

/** Where a command prints its progress; tests and scripts can pass their own. */
export type Log = (line: string) => void;
