/** A location inside a request, FastAPI style: `["body", "entities", 3, "price"]`. */
export type ErrorLocation = ReadonlyArray<string | number>;

/** One problem found while validating input: where, what, and a stable machine-readable type. */
export interface FieldProblem {
  loc: ErrorLocation;
  msg: string;
  type: string;
}

/**
 * Base class of every error rankd raises on purpose. Each carries a stable `code` (never reused,
 * see `catalogue.ts`) and the HTTP status it maps to; `src/http/error-handler.ts` is the only place
 * that turns one into a response.
 */
export class RankdError extends Error {
  readonly code: string;
  readonly statusCode: number;
  /** Field-level problems, for validation errors; the response's `detail` is then this list. */
  readonly problems: readonly FieldProblem[] | undefined;
  /** Fields the response body carries beside `detail` and `error_code` (e.g. `written_ids`). */
  readonly extra: Readonly<Record<string, unknown>> | undefined;

  constructor(
    code: string,
    statusCode: number,
    message: string,
    options?: {
      cause?: unknown;
      problems?: readonly FieldProblem[];
      extra?: Readonly<Record<string, unknown>>;
    },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.statusCode = statusCode;
    this.problems = options?.problems;
    this.extra = options?.extra;
  }
}
