import { type FieldProblem, ValidationError } from '../../errors/index.js';
import { InputError, reasonOf, type SourceRecord } from './records.js';
import { BATCH_LOCATION, type LoadTarget } from './targets.js';

/** What happens at a bad row: stop there, or report it and go on with the others. */
export type OnError = 'stop' | 'skip';

/** How a file is loaded. */
interface LoadOptions {
  /** Rows per batch: each batch is checked, then written atomically. */
  readonly batchSize: number;
  readonly onError: OnError;
  /** Check every row, write none. */
  readonly dryRun: boolean;
  /**
   * Batches being written at once, at most. Reading waits while this many are in flight, which
   * is what keeps memory bounded (about `(maxInFlight + 1) × batchSize` rows) whatever the file size.
   * @defaultValue 3
   */
  readonly maxInFlight?: number;
}

/** A row that was refused, with its file line and every reason found. */
interface BadRow {
  readonly line: number;
  readonly reasons: readonly string[];
}

/** Where the load is told about bad rows and progress as it goes. */
interface LoadHooks {
  /** A bad row, as soon as its batch has been checked (in line order within the batch). */
  badRow(row: BadRow): void;
  /** Called after each batch with the rows read so far. */
  progress(rows: number): void;
}

/** How a load went. */
export interface LoadReport {
  /** Rows read (good or bad; blank lines and the CSV header are not rows). */
  rows: number;
  /** Rows written (in a dry run: that would have been written). */
  written: number;
  /** Rows refused (with `--on-error skip`, these were skipped; with `stop`, at most one). */
  bad: number;
  /** Valid rows not written because their event time was already past the view's TTL. */
  expired: number;
  /**
   * Set when the load ended before the end of the file: at the first bad row (`--on-error stop`)
   * or where the file could not be read further. Nothing from `firstUnwrittenLine` on was written
   * (that line starts the batch that held the bad row); everything valid before it was.
   */
  stopped?: { line: number; reason: string; firstUnwrittenLine: number };
  /** Set when Redis refused or failed a write: that batch's lines and why. */
  writeFailure?: { firstLine: number; lastLine: number; reason: string };
  elapsedMs: number;
}

type Outcome =
  | { ok: true; written: number; expired: number }
  | { ok: false; firstLine: number; lastLine: number; reason: string };

/** The problem's field path and message, as one reason: `price: must be number or null`. */
function problemText(problem: FieldProblem): string {
  const field = problem.loc.slice(BATCH_LOCATION.length + 1).join('.');
  // Schema problems name their field from the batch (`rows[1].price: ...`); a line names the row.
  const msg = problem.msg.replace(/^rows\[\d+\]\./, '');
  return field === '' || msg.startsWith(field) ? msg : `${field}: ${msg}`;
}

/**
 * The reasons per row index of a batch of `size` rows, read from a ValidationError's problem
 * locations; undefined when the error is something else (which is then not a bad row but a bug).
 */
function reasonsByRow(error: unknown, size: number): Map<number, string[]> | undefined {
  if (!(error instanceof ValidationError) || !error.problems?.length) return undefined;
  const reasons = new Map<number, string[]>();
  for (const problem of error.problems) {
    const index = problem.loc[BATCH_LOCATION.length];
    if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= size) return undefined;
    const list = reasons.get(index) ?? [];
    if (list.length === 0) reasons.set(index, list);
    list.push(problemText(problem));
  }
  return reasons;
}

/**
 * Checks a batch with the target's own validation. Its ValidationError stops at the first rows'
 * problems (it caps how many it collects), so to find every bad row the refused rows are taken
 * out and the rest checked again, until what is left passes: each round removes at least one row.
 */
function check<Prepared>(
  target: LoadTarget<Prepared>,
  batch: readonly SourceRecord[],
  stopAtFirst: boolean,
): { prepared: Prepared | undefined; rows: number; bad: BadRow[] } {
  const bad: BadRow[] = [];
  const values: Array<Record<string, unknown>> = [];
  const lines: number[] = [];
  for (const record of batch) {
    if ('problem' in record) bad.push({ line: record.line, reasons: [record.problem] });
    else {
      values.push(record.value);
      lines.push(record.line);
    }
  }
  let remaining = values.map((_, i) => i);
  for (;;) {
    const rows = remaining.map((i) => values[i] as Record<string, unknown>);
    try {
      const prepared = rows.length === 0 ? undefined : target.prepare(rows);
      return { prepared, rows: rows.length, bad: bad.sort((a, b) => a.line - b.line) };
    } catch (error) {
      const reasons = reasonsByRow(error, rows.length);
      if (reasons === undefined) throw error;
      for (const [index, list] of reasons)
        bad.push({ line: lines[remaining[index] as number] as number, reasons: list });
      if (stopAtFirst) return { prepared: undefined, rows: 0, bad: bad.sort((a, b) => a.line - b.line) };
      remaining = remaining.filter((_, index) => !reasons.has(index));
    }
  }
}

/**
 * Loads `records` through `target` in batches: each batch is checked as the HTTP upload checks
 * it, then written in one atomic call while the next batch is read. Bad rows are mapped back to
 * their file lines. With `onError: 'stop'` the load ends at the first bad row and nothing of its
 * batch is written; with `'skip'` bad rows are reported and the rest of their batch is written.
 */
export async function runLoad<Prepared>(
  records: AsyncIterable<SourceRecord>,
  target: LoadTarget<Prepared>,
  options: LoadOptions,
  hooks: LoadHooks,
): Promise<LoadReport> {
  const started = performance.now();
  const maxInFlight = options.maxInFlight ?? 3;
  const report: LoadReport = { rows: 0, written: 0, bad: 0, expired: 0, elapsedMs: 0 };
  const inFlight: Array<Promise<Outcome>> = [];
  let batch: SourceRecord[] = [];

  const settleOldest = async () => {
    const outcome = await (inFlight.shift() as Promise<Outcome>);
    if (outcome.ok) {
      report.written += outcome.written;
      report.expired += outcome.expired;
    } else {
      report.writeFailure ??= outcome;
    }
  };

  const write = (prepared: Prepared, firstLine: number, lastLine: number): Promise<Outcome> => {
    if (options.dryRun) return Promise.resolve({ ok: true, ...target.wouldWrite(prepared) });
    return target.write(prepared).then(
      (counts): Outcome => ({ ok: true, ...counts }),
      (error: unknown): Outcome => ({ ok: false, firstLine, lastLine, reason: reasonOf(error) }),
    );
  };

  /** Checks the batch and sends it off to be written; false when the load must end here. */
  const flush = (fatal?: InputError): boolean => {
    const current = batch;
    batch = [];
    const { prepared, bad } = check(target, current, options.onError === 'stop');
    if (fatal) bad.push({ line: fatal.line, reasons: [fatal.message] });
    const shown = options.onError === 'stop' ? bad.slice(0, 1) : bad;
    for (const row of shown) hooks.badRow(row);
    report.bad += shown.length;
    const stopAt = fatal && options.onError === 'skip' ? bad[bad.length - 1] : shown[0];
    if (stopAt !== undefined && (fatal || options.onError === 'stop')) {
      report.stopped = {
        line: stopAt.line,
        reason: stopAt.reasons.join('; '),
        firstUnwrittenLine: current[0]?.line ?? stopAt.line,
      };
      return false;
    }
    const first = current[0];
    const last = current[current.length - 1];
    if (prepared !== undefined && first !== undefined && last !== undefined)
      inFlight.push(write(prepared, first.line, last.line));
    hooks.progress(report.rows);
    return true;
  };

  /**
   * Waits while too many batches are being written, which is what keeps reading from running
   * ahead. Outside {@link flush}, so that the batch it just sent off is not kept alive meanwhile.
   */
  const backpressure = async (): Promise<boolean> => {
    while (inFlight.length >= maxInFlight) await settleOldest();
    return report.writeFailure === undefined;
  };

  try {
    let going = true;
    for await (const record of records) {
      report.rows++;
      batch.push(record);
      // At a line that is not even a row, stopping now keeps the rest of the file unread.
      const unreadable = options.onError === 'stop' && 'problem' in record;
      if (batch.length >= options.batchSize || unreadable) {
        going = flush() && (await backpressure());
        if (!going) break;
      }
    }
    if (going) flush();
  } catch (error) {
    if (!(error instanceof InputError)) throw error;
    flush(error);
  } finally {
    while (inFlight.length > 0) await settleOldest();
  }
  report.elapsedMs = performance.now() - started;
  return report;
}
