import { entityIdOf } from '../entity-index/entity-index.js';
import { type ErrorLocation, type FieldProblem, ValidationError } from '../errors/index.js';
import type { FeatureView } from './define-feature-view.js';
import { featureSpecOf, featureValueProblem } from './feature-kind.js';

/** A feature row ready to write: its entity ids, values and event time. */
export interface FeatureRow {
  readonly ids: readonly string[];
  readonly values: Readonly<Record<string, unknown>>;
  readonly eventTimestampMs: number;
}

const MAX_PROBLEMS = 50;
const RESERVED = new Set(['entity_id', 'event_timestamp']);

/**
 * The event times a row may carry (ms since the epoch): 1970-01-01T00:00:00.000Z to
 * 9999-12-31T23:59:59.999Z. The stored f64 could hold far more, but a time past what a `Date`
 * holds (±8.64e15 ms) cannot be shown, and an expiry past what Redis's PXAT takes (2^63 ms) fails
 * the write; four-digit years also keep `event_timestamp` plain ISO 8601 for every reader.
 */
const EVENT_TIME_RANGE_MS = { min: 0, max: Date.UTC(9999, 11, 31, 23, 59, 59, 999) } as const;

/** Whether `ms` is an event time a row may carry (see {@link EVENT_TIME_RANGE_MS}). */
export function isEventTime(ms: number): boolean {
  return ms >= EVENT_TIME_RANGE_MS.min && ms <= EVENT_TIME_RANGE_MS.max;
}

const RANGE_TEXT =
  `between 1970-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z ` +
  `(${EVENT_TIME_RANGE_MS.min} to ${EVENT_TIME_RANGE_MS.max} ms since the epoch)`;

/** Parses `event_timestamp`: ms since the epoch, or an ISO 8601 string; a string says what is wrong. */
function timestampOf(value: unknown): number | string {
  let ms: number;
  if (typeof value === 'number') ms = value;
  else if (typeof value === 'string') {
    ms = Date.parse(value);
    if (Number.isNaN(ms))
      return 'must be an ISO 8601 time such as 2026-01-31T12:00:00Z, or ms since the epoch';
  } else return 'must be an ISO 8601 string or a number of ms since the epoch';
  // NaN and ±Infinity (JSON's 1e400) fail the comparisons too.
  return isEventTime(ms) ? ms : `must be a time ${RANGE_TEXT}; got ${String(value)}`;
}

/** The ids of a row key: one id, or `[first, second]` for a pair view. */
export function rowIdsOf(view: FeatureView, value: unknown): string[] | { problem: string; type: string } {
  if (view.entityTypes.length === 1) {
    const id = entityIdOf(value);
    return typeof id === 'string' ? [id] : id;
  }
  const names = view.entityTypes.map((t) => t.name).join(', ');
  if (!Array.isArray(value) || value.length !== 2) {
    return { problem: `${view.name} is a pair view: entity_id must be [${names}] ids`, type: 'pair_id' };
  }
  const ids: string[] = [];
  for (const item of value) {
    const id = entityIdOf(item);
    if (typeof id !== 'string') return id;
    ids.push(id);
  }
  return ids;
}

/**
 * Checks rows for `view` — `{ entity_id, <feature>: value, ..., event_timestamp? }` — and returns
 * them ready to write. Every problem (unknown feature, wrong type, bad id or time) is collected
 * with its location and thrown as one {@link ValidationError}: callers write all rows or none.
 */
export function prepareFeatureRows(
  view: FeatureView,
  rows: ReadonlyArray<Record<string, unknown>>,
  location: ErrorLocation = ['body', 'rows'],
  nowMs = Date.now(),
): FeatureRow[] {
  const prepared: FeatureRow[] = [];
  const problems: FieldProblem[] = [];
  for (let i = 0; i < rows.length && problems.length < MAX_PROBLEMS; i++) {
    const row = rows[i] as Record<string, unknown>;
    const before = problems.length;
    const ids = rowIdsOf(view, row.entity_id);
    if (!Array.isArray(ids))
      problems.push({ loc: [...location, i, 'entity_id'], msg: ids.problem, type: ids.type });
    let eventTimestampMs = nowMs;
    if (row.event_timestamp !== undefined && row.event_timestamp !== null) {
      const parsed = timestampOf(row.event_timestamp);
      if (typeof parsed === 'string') {
        // The entity id too: a 422 for one row of thousands must say which entity to fix.
        const of = Array.isArray(ids)
          ? ` of entity_id ${JSON.stringify(ids.length === 1 ? ids[0] : ids)}`
          : '';
        problems.push({
          loc: [...location, i, 'event_timestamp'],
          msg: `event_timestamp${of} ${parsed}`,
          type: 'timestamp',
        });
      } else eventTimestampMs = parsed;
    }
    for (const [name, value] of Object.entries(row)) {
      if (RESERVED.has(name)) continue;
      const spec = featureSpecOf(view.features, name);
      if (spec === undefined) {
        problems.push({
          loc: [...location, i, name],
          msg: `${view.name} has no feature ${JSON.stringify(name)}; it has ${Object.keys(view.features).join(', ')}`,
          type: 'unknown_feature',
        });
        continue;
      }
      const problem = featureValueProblem(spec, value);
      if (problem !== undefined)
        problems.push({ loc: [...location, i, name], msg: `${name} ${problem}`, type: spec.kind });
    }
    if (problems.length === before && Array.isArray(ids))
      prepared.push({ ids, values: row, eventTimestampMs });
  }
  if (problems.length > 0) {
    throw new ValidationError(
      problems,
      `${problems.length === 1 ? 'A row is' : 'Rows are'} invalid; nothing was written`,
    );
  }
  return prepared;
}
