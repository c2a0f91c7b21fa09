import { ErrorCode, RankdError } from '../../errors/index.js';
/** A data row read from a file: the object, or why the line could not be read as one. */
export type SourceRecord =
  | { readonly line: number; readonly value: Record<string, unknown> }
  | { readonly line: number; readonly problem: string };

/**
 * The file cannot be read past `line` (a CSV quote never closed, a corrupt gzip stream, a read
 * error): the load stops there whatever `--on-error` says, since nothing after it can be trusted.
 */
export class InputError extends RankdError {
  /** The file line where reading failed. */
  readonly line: number;

  constructor(line: number, message: string) {
    super(ErrorCode.INPUT_INVALID, 400, message);
    this.line = line;
  }
}

/** Why reading failed, without the stack: what ends up after `line N:` in the report. */
export function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
