import { TrainingInputError } from '../errors/index.js';
import { MAX_IMPRESSIONS_PER_REQUEST, type SkippedRows } from '../events/export/row-checks.js';
import type { TrainingRow } from '../events/export/training-join.js';
import type { RankingRow } from '../training/index.js';

/** The rows' requests, each's rows by position, the requests by time (then id). */
export function groupByRequest(rows: readonly TrainingRow[]): TrainingRow[][] {
  const byRequest = new Map<string, TrainingRow[]>();
  for (const row of rows) {
    const group = byRequest.get(row.request_id);
    if (group === undefined) byRequest.set(row.request_id, [row]);
    else group.push(row);
  }
  const groups = [...byRequest.values()];
  for (const group of groups) group.sort((a, b) => a.position - b.position);
  const time = (group: TrainingRow[]) => Date.parse((group[0] as TrainingRow).timestamp);
  return groups.sort(
    (a, b) => time(a) - time(b) || ((a[0]?.request_id ?? '') < (b[0]?.request_id ?? '') ? -1 : 1),
  );
}

/**
 * The requests' rows as the trainer's rows (`datasetFromRows`): one query group per request, in
 * request order, each row's logged features by name (missing ones read as missing).
 */
export function rankingRowsOf(requests: readonly TrainingRow[][]): RankingRow[] {
  return requests.flatMap((rows, group) =>
    rows.map((row) => ({ group, label: row.label, values: row.features ?? {} })),
  );
}

/**
 * Checks that the logs can train a model of `features`: rows there are, some with a label above
 * 0, and each feature logged; throws a {@link TrainingInputError} saying what is missing.
 */
export function checkTrainingRows(
  rows: readonly TrainingRow[],
  features: readonly string[],
  what: string,
): void {
  if (rows.length === 0)
    throw new TrainingInputError(`no events: ${what} holds no impressions of this pipeline's requests`);
  if (!rows.some((row) => row.label > 0))
    throw new TrainingInputError(
      `no labels: none of the ${rows.length} impressions in ${what} got feedback with a grade above 0 (post clicks, add-to-carts, purchases to /api/v1/events/feedback)`,
    );
  const logged = rows.filter((row) => row.features !== null);
  if (logged.length === 0)
    throw new TrainingInputError(
      `no features: the impressions in ${what} carry no logged features (EVENTS_FEATURES=shown, the default, logs them)`,
    );
  for (const name of features) {
    if (!logged.some((row) => Object.hasOwn(row.features ?? {}, name)))
      throw new TrainingInputError(
        `feature ${name} is missing from the logs: the model reads it but no impression in ${what} has it` +
          `${SINCE_THE_CHANGE}`,
      );
  }
}

/** What to do when the logs are of an earlier model or feature set. */
const SINCE_THE_CHANGE =
  '; if the model or its features changed, train on the requests logged since (--since, and --until)';

/**
 * The rows a model of `features` can train on: each with every one of them logged (a row logged
 * by an earlier model or feature set lacks some, and its request cannot be scored as the stage
 * serves now), and a request's first {@link MAX_IMPRESSIONS_PER_REQUEST} rows only. The others are
 * counted in `skipped`, by reason. Throws a {@link TrainingInputError} naming the logged data and
 * the `--since`/`--until` fix when none is left, or when the rows say nothing to learn from.
 */
export function usableRows(
  rows: readonly TrainingRow[],
  features: readonly string[],
  what: string,
  skipped: SkippedRows,
): TrainingRow[] {
  checkTrainingRows(rows, features, what);
  const perRequest = new Map<string, number>();
  const usable: TrainingRow[] = [];
  let lacking = 0;
  for (const row of rows) {
    if (row.features === null) {
      skipped.add('logged without features (EVENTS_FEATURES was off)');
      continue;
    }
    const logged = row.features;
    const missing = features.find((name) => !Object.hasOwn(logged, name));
    if (missing !== undefined) {
      lacking += 1;
      skipped.add(`logged without ${missing} (by an earlier model or feature set)`);
      continue;
    }
    const seen = perRequest.get(row.request_id) ?? 0;
    perRequest.set(row.request_id, seen + 1);
    if (seen >= MAX_IMPRESSIONS_PER_REQUEST) {
      skipped.add(`past the ${MAX_IMPRESSIONS_PER_REQUEST} impressions a request shows`);
      continue;
    }
    usable.push(row);
  }
  if (usable.length === 0)
    throw new TrainingInputError(
      lacking > 0
        ? `no usable rows: the ${rows.length} impressions in ${what} were logged for other model inputs ` +
            `(${skipped.describe('impressions')})${SINCE_THE_CHANGE}`
        : `no usable rows in ${what}: ${skipped.describe('impressions')}`,
    );
  if (!usable.some((row) => row.label > 0))
    throw new TrainingInputError(
      `no labels: none of the ${usable.length} usable impressions in ${what} got feedback with a grade above 0 ` +
        `(${skipped.describe('impressions') ?? 'none left out'})${SINCE_THE_CHANGE}`,
    );
  return usable;
}
