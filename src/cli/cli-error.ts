/**
 * A failure the user can act on: the CLI prints its message as one line, without a stack trace.
 * Anything else that escapes a command is printed the same way (see {@link oneLine}).
 */
export class CliError extends Error {
  /** The process exit code. @defaultValue `1` */
  readonly exitCode: number;

  constructor(message: string, exitCode = 1) {
    super(message);
    this.name = 'CliError';
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
