import { formatCount, formatDuration } from './progress.js';
import type { LoadReport } from './run-load.js';

/** What the summary says the rows went into, e.g. `feature view product_stats`. */
interface SummaryContext {
  readonly file: string;
  readonly into: string;
  readonly dryRun: boolean;
}

/** `1 row`, `2,000 rows`. */
function rows(count: number): string {
  return `${formatCount(count)} row${count === 1 ? '' : 's'}`;
}

/** Whether the load did everything it was asked: every row valid and written (or, dry, valid). */
export function loadSucceeded(report: LoadReport): boolean {
  return report.bad === 0 && report.stopped === undefined && report.writeFailure === undefined;
}

/** The closing lines of a load: what was written, skipped and expired, how long it took, and where it stopped. */
export function summaryLines(report: LoadReport, context: SummaryContext): string[] {
  const { file, into, dryRun } = context;
  const seconds = report.elapsedMs / 1000;
  const rate = seconds > 0 ? formatCount(report.rows / seconds) : '-';
  const time = `${formatDuration(report.elapsedMs)} (${rate} rows/s)`;
  const lines: string[] = [];
  const skipped = report.stopped === undefined ? report.bad : report.bad - 1;
  if (dryRun) {
    lines.push(
      `Dry run of ${file} into ${into}: ${rows(report.rows)} read, ${formatCount(report.written)} valid, ` +
        `${formatCount(report.bad)} bad, ${formatCount(report.expired)} already past the TTL, in ${time}; nothing was written.`,
    );
  } else {
    lines.push(
      `Loaded ${file} into ${into}: ${rows(report.written)} written, ${formatCount(skipped)} skipped, ` +
        `${formatCount(report.expired)} expired, in ${time}.`,
    );
  }
  const { stopped, writeFailure } = report;
  if (stopped !== undefined) {
    const from = stopped.firstUnwrittenLine;
    const where = dryRun
      ? 'the rows after it were not checked'
      : report.written + report.expired === 0
        ? 'nothing was written'
        : `the rows before line ${from} were written, nothing from line ${from} on`;
    lines.push(`Stopped at line ${stopped.line}: ${stopped.reason}; ${where}.`);
  }
  if (writeFailure !== undefined) {
    lines.push(
      `Writing lines ${writeFailure.firstLine}-${writeFailure.lastLine} failed: ${writeFailure.reason}. ` +
        'Loading again is safe: each row replaces the stored one.',
    );
  }
  return lines;
}
