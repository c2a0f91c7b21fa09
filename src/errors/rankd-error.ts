/** A location inside a request, FastAPI style: `["body", "entities", 3, "price"]`. */
export type ErrorLocation = ReadonlyArray<string | number>;

/** One problem found in input: where, what, and a stable machine-readable type. */
export interface FieldProblem {
  loc: ErrorLocation;
  msg: string;
  type: string;
}

/**
 * Base class of every error rankd raises on purpose: a stable `code` (never reused) and the HTTP
 * status it maps to. `src/http/error-handler.ts` is the only place that turns one into a response.
 *
 * @example
 * import { RankdError } from 'rankd';
 * const describe = (error: unknown) =>
 *   error instanceof RankdError ? `${error.statusCode} ${error.code}` : 'not rankd\'s';
 */
export class RankdError extends Error {
  readonly code: string;
  readonly statusCode: number;
  /** Field-level problems of a validation error: the response's `detail`. */
  readonly problems: readonly FieldProblem[] | undefined;
  /** Fields the response body carries beside `detail` and `error_code` (e.g. `written_ids`). */
  readonly extra: Readonly<Record<string, unknown>> | undefined;
  /**
   * The message without internal addresses (Redis hosts), what a response says unless
   * `EXPOSE_REDIS_ADDRESS` is on; the log keeps `message`. Undefined when `message` names none.
   */
  readonly publicMessage: string | undefined;
  /** Response headers of the answer (e.g. `retry-after`), lower-case. */
  readonly headers: Readonly<Record<string, string>> | undefined;

  constructor(
    code: string,
    statusCode: number,
    message: string,
    options?: {
      cause?: unknown;
      problems?: readonly FieldProblem[];
      extra?: Readonly<Record<string, unknown>>;
      publicMessage?: string;
      headers?: Readonly<Record<string, string>>;
    },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.statusCode = statusCode;
    this.problems = options?.problems;
    this.extra = options?.extra;
    this.publicMessage = options?.publicMessage;
    this.headers = options?.headers;
  }
}
