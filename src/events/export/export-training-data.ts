import type { Writable } from 'node:stream';
import type { TimedEvent } from './event-sources.js';
import type { SkippedRows } from './row-checks.js';
import { CsvRowWriter, JsonlRowWriter, type RowWriter } from './row-writers.js';
import { type JoinOptions, TrainingJoin, type TrainingRow } from './training-join.js';

/** What an export reads, how it joins, and where rows go. */
interface ExportOptions extends JoinOptions {
  readonly source: AsyncIterable<TimedEvent>;
  readonly format: 'jsonl' | 'csv';
  readonly out: Writable;
  /** Told after each event: how many were read, and the stream time reached. */
  readonly onProgress?: (events: number, timeMs: number) => void;
}

/** What an export did. */
export interface ExportReport {
  /** Events read. */
  events: number;
  /** Rows written: one per impression in the time range. */
  rows: number;
  /** Rows with a label above 0. */
  labelled: number;
  /** Requests written before their window ended, to bound memory (see `maxPendingImpressions`). */
  cutShort: number;
  /** Impressions in the time range that made no row, by reason: invalid, or past a request's page. */
  skipped: SkippedRows;
}

/**
 * Reads events in stream order, joins them into training rows (see {@link TrainingJoin}) and
 * writes the rows as JSON Lines or CSV. Memory holds the requests of one window, not the export.
 */
export async function exportTrainingData(options: ExportOptions): Promise<ExportReport> {
  const join = new TrainingJoin(options);
  const writer: RowWriter =
    options.format === 'csv' ? new CsvRowWriter(options.out) : new JsonlRowWriter(options.out);
  const report: ExportReport = { events: 0, rows: 0, labelled: 0, cutShort: 0, skipped: join.skipped };
  const emit = async (rows: TrainingRow[]) => {
    for (const row of rows) {
      await writer.write(row);
      report.rows += 1;
      if (row.label > 0) report.labelled += 1;
    }
  };
  for await (const { timeMs, event } of options.source) {
    report.events += 1;
    const rows = join.add(timeMs, event);
    if (rows.length > 0) await emit(rows);
    options.onProgress?.(report.events, timeMs);
  }
  await emit(join.finish());
  await writer.end();
  report.cutShort = join.cutShort;
  return report;
}
