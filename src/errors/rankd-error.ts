/**
 * A location inside a request, FastAPI style: `["body", "entities", 3, "price"]`.
 *
 * @example
 * ```ts
 * import { type ErrorLocation } from 'rankd/server';
 * import { ValidationError } from 'rankd';
 *
 * const where: ErrorLocation = ['body', 'candidates', 3, 'product_id'];
 * throw ValidationError.at(where, 'must be a string', 'type');
 * ```
 */
export type ErrorLocation = ReadonlyArray<string | number>;

/**
 * One problem found while validating input: where, what, and a stable machine-readable type.
 *
 * @example
 * ```ts
 * import { type FieldProblem, ValidationError } from 'rankd';
 *
 * const problems: FieldProblem[] = [
 *   { loc: ['body', 'sku'], msg: 'no such product', type: 'not_found' },
 *   { loc: ['body', 'qty'], msg: 'must be ≥ 1', type: 'minimum' },
 * ];
 * throw new ValidationError(problems); // 422, each problem in `detail`
 * ```
 */
export interface FieldProblem {
  loc: ErrorLocation;
  msg: string;
  type: string;
}

/**
 * Base class of every error rankd raises on purpose. Each carries a stable `code` (never reused,
 * see `catalogue.ts`) and the HTTP status it maps to; `src/http/error-handler.ts` is the only place
 * that turns one into a response.
 *
 * @example
 * ```ts
 * import { RankdError } from 'rankd';
 *
 * try {
 *   // ... any rankd call
 * } catch (error) {
 *   // Every catalogue error: a stable `code` and the HTTP `statusCode` it is answered with.
 *   if (error instanceof RankdError) console.error(error.code, error.statusCode, error.message);
 * }
 * ```
 */
export class RankdError extends Error {
  readonly code: string;
  readonly statusCode: number;
  /** Field-level problems, for validation errors; the response's `detail` is then this list. */
  readonly problems: readonly FieldProblem[] | undefined;
  /** Fields the response body carries beside `detail` and `error_code` (e.g. `written_ids`). */
  readonly extra: Readonly<Record<string, unknown>> | undefined;
  /**
   * The message without the server's internal addresses (Redis hosts and ports), for errors whose
   * `message` names them: what a response says unless `EXPOSE_REDIS_ADDRESS` is on. The log keeps
   * `message`, which operators need. Undefined when `message` names no address.
   */
  readonly publicMessage: string | undefined;
  /** Response headers the answer carries (e.g. `retry-after`), lower-case names. */
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
