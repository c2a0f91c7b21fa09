/** One field-level problem of a validation error (422 `RANKD_VALIDATION`). */
export interface FieldProblem {
  /** Where the problem is: `["body", "entities", 3, "price"]`. */
  loc: Array<string | number>;
  /** What is wrong. */
  msg: string;
  /** Stable kind of problem: `missing`, `type`, `enum`, ... */
  type: string;
}

/** The body of every error rankd answers with (docs/reference/errors.md). */
export interface ErrorBody {
  /** A sentence, or for validation errors (422) the list of problems. */
  detail: string | FieldProblem[];
  /** The stable code of rankd's error catalogue, e.g. `RANKD_VALIDATION`. */
  error_code: string;
  /** Only with `RANKD_PARTIAL_WRITE`: the ids whose write Redis confirmed. */
  written_ids?: Array<string | string[]>;
  /** Only with `RANKD_PARTIAL_WRITE`: the ids whose write was not confirmed; send them again. */
  failed_ids?: Array<string | string[]>;
}

/** Whether `body` has rankd's error shape. */
function isErrorBody(body: unknown): body is ErrorBody {
  if (typeof body !== 'object' || body === null) return false;
  const { detail, error_code } = body as Partial<ErrorBody>;
  return typeof error_code === 'string' && (typeof detail === 'string' || Array.isArray(detail));
}

/** The problems of a 422 in one line: `body.entities.0.price: must be number; ...`. */
function describe(detail: string | FieldProblem[]): string {
  if (typeof detail === 'string') return detail;
  const shown = detail.slice(0, 5).map((problem) => `${problem.loc.join('.')}: ${problem.msg}`);
  return detail.length > shown.length
    ? `${shown.join('; ')}; and ${detail.length - shown.length} more`
    : shown.join('; ');
}

/**
 * A request rankd answered with an error status, with rankd's error body as it came: `error_code`
 * to branch on (docs/reference/errors.md), `detail` to show or log.
 *
 * @example
 * ```ts
 * import { createClient, RankdClientError } from 'rankd/client';
 *
 * try {
 *   await createClient({ baseUrl: 'http://localhost:5001' }).entities.get('product', ['p1']);
 * } catch (error) {
 *   // null error_code: not rankd's body (a proxy's page)
 *   if (error instanceof RankdClientError) console.error(error.status, error.error_code, error.detail);
 *   else throw error; // no answer at all: fetch's own error
 * }
 * ```
 */
export class RankdClientError extends Error {
  /** The HTTP status. */
  readonly status: number;
  /**
   * The catalogue code (`RANKD_VALIDATION`, `RANKD_REDIS_UNAVAILABLE`, ...); null when the answer
   * was not rankd's error body (e.g. a proxy's error page in front of the server).
   */
  readonly error_code: string | null;
  /** A sentence, or for a 422 the list of problems; the answer's text when it was not rankd's. */
  readonly detail: string | FieldProblem[];
  /** The whole error body (e.g. `written_ids` and `failed_ids` of a partial write), or the answer's text. */
  readonly body: ErrorBody | string;

  constructor(status: number, body: unknown, text: string) {
    const rankd = isErrorBody(body) ? body : undefined;
    const detail = rankd?.detail ?? text;
    super(`${status}${rankd ? ` ${rankd.error_code}` : ''}: ${describe(detail)}`);
    this.name = 'RankdClientError';
    this.status = status;
    this.error_code = rankd?.error_code ?? null;
    this.detail = detail;
    this.body = rankd ?? text;
  }
}
