import { type ErrorLocation, type FieldProblem, ValidationError } from '../errors/index.js';
import { entityIdOf } from '../index/entity-index.js';
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

/** Parses `event_timestamp`: ms since the epoch, or an ISO 8601 string. */
function timestampOf(value: unknown): number | string {
  if (typeof value === 'number')
    return Number.isFinite(value) && value >= 0 ? value : 'must be a time in ms since the epoch';
  if (typeof value === 'string') {
    const ms = Date.parse(value);
    return Number.isNaN(ms)
      ? 'must be an ISO 8601 time such as 2026-01-31T12:00:00Z, or ms since the epoch'
      : ms;
  }
  return 'must be an ISO 8601 string or a number of ms since the epoch';
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
      if (typeof parsed === 'string')
        problems.push({ loc: [...location, i, 'event_timestamp'], msg: parsed, type: 'timestamp' });
      else eventTimestampMs = parsed;
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
