import { MAX_GRADE } from '../../config/label-grades.js';

/**
 * Most impressions one request makes: the largest page a ranking request may ask for
 * (`user_page_size` ≤ 100, pipeline/request-schema.ts). A stream entry is bounded as a request is:
 * impressions of a request past this many are left out, however many an entry claims.
 */
export const MAX_IMPRESSIONS_PER_REQUEST = 100;

/** A string that spells a number no model reads (`"NaN"`, `"Infinity"`): a broken number, not text. */
const NOT_A_NUMBER_TEXT = /^\s*[-+]?(?:nan|inf|infinity)\s*$/i;

/**
 * Why a logged feature value cannot be a training input, or undefined when it can: null (missing),
 * a finite number, a boolean (read as 1/0), a string (a string feature) or a list of finite numbers
 * (a vector). Models read non-finite numbers as missing while a trainer would take them as values,
 * so a row holding one is refused rather than read two ways.
 */
function loggedValueProblem(value: unknown): string | undefined {
  if (value === null || typeof value === 'boolean') return undefined;
  if (typeof value === 'number')
    return Number.isFinite(value) ? undefined : 'a feature value that is not a finite number';
  if (typeof value === 'string')
    return NOT_A_NUMBER_TEXT.test(value) ? 'a feature value that is not a finite number' : undefined;
  if (Array.isArray(value) && value.every((x) => typeof x === 'number' && Number.isFinite(x)))
    return undefined;
  return 'a feature value that is an object or a list of non-numbers';
}

/** The fields of a training row (`TrainingRow`) that decide whether it is one; any may be missing in a file's row. */
interface CheckedRow {
  readonly request_id: unknown;
  readonly entity_id: unknown;
  readonly entity_type: unknown;
  readonly position: unknown;
  readonly timestamp: unknown;
  readonly label: unknown;
  readonly features: unknown;
}

/**
 * Why `row` cannot be a training row, or undefined when it can: the reasons `rankd events export`
 * and `rankd train` count rows under when they skip them. An entity id written as `"undefined"` or
 * `"null"` is what a missing id becomes once turned into text.
 */
export function rowProblem(row: CheckedRow): string | undefined {
  if (typeof row.request_id !== 'string' || row.request_id === '') return 'no request id';
  if (typeof row.entity_id !== 'string' || ['', 'undefined', 'null'].includes(row.entity_id))
    return 'no entity id';
  if (typeof row.entity_type !== 'string' || row.entity_type === '') return 'no entity type';
  const position = row.position;
  if (
    typeof position !== 'number' ||
    !Number.isInteger(position) ||
    position < 0 ||
    position >= MAX_IMPRESSIONS_PER_REQUEST
  )
    return `a position that is not a whole number from 0 to ${MAX_IMPRESSIONS_PER_REQUEST - 1}`;
  if (typeof row.timestamp !== 'string' || !Number.isFinite(Date.parse(row.timestamp)))
    return 'a timestamp that is not a date';
  const label = row.label;
  if (typeof label !== 'number' || !Number.isInteger(label) || label < 0 || label > MAX_GRADE)
    return `a label that is not a whole grade from 0 to ${MAX_GRADE}`;
  const features = row.features;
  if (features === null) return undefined;
  if (typeof features !== 'object' || Array.isArray(features)) return 'features that are not an object';
  for (const value of Object.values(features as object)) {
    const problem = loggedValueProblem(value);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

/**
 * Rows left out, counted by reason (a handful of reasons, not one entry per row), for the summary
 * line of `rankd events export` and `rankd train`.
 */
export class SkippedRows {
  readonly #byReason = new Map<string, number>();
  #total = 0;

  /** Counts `count` rows left out for `reason`. */
  add(reason: string, count = 1): void {
    this.#byReason.set(reason, (this.#byReason.get(reason) ?? 0) + count);
    this.#total += count;
  }

  /** Rows left out in all. */
  get total(): number {
    return this.#total;
  }

  /** Each reason with its count, the most frequent first. */
  reasons(): Array<[reason: string, count: number]> {
    return [...this.#byReason].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  }

  /** `3 rows left out: 2 with …, 1 with …`, or `undefined` when none was. */
  describe(rowsWord = 'rows'): string | undefined {
    if (this.#total === 0) return undefined;
    const count = (n: number) => n.toLocaleString('en-US');
    const reasons = this.reasons().map(([reason, n]) => `${count(n)} ${withOrAt(reason)}`);
    return `${count(this.#total)} ${rowsWord} left out: ${reasons.join(', ')}`;
  }
}

/** `with a label …`, but `past …` and `logged …` as they are. */
function withOrAt(reason: string): string {
  return /^(past|logged) /.test(reason) ? reason : `with ${reason}`;
}
