import { createWriteStream } from 'node:fs';
import { resolve } from 'node:path';
import type { Writable } from 'node:stream';
import { loadConfig, readEnvFiles } from '../config/index.js';
import { parseLabelGrades } from '../config/label-grades.js';
import { ErrorCode } from '../errors/index.js';
import { type ExportReport, exportTrainingData } from '../events/export/export-training-data.js';
import { CliError, type Log } from './cli-error.js';
import { formatCount, Progress, type ProgressStream } from './load/progress.js';
import { openEventSource } from './open-event-source.js';
import { timeRangeOptions } from './time-range-options.js';

/** `rankd events export`'s options, as commander parses them. */
export interface ExportCommandOptions {
  since: string;
  until?: string;
  format?: 'jsonl' | 'csv';
  out: string;
  window: string;
  /** A JSONL file written by `EVENTS_SINK=file`, read instead of the stream. */
  input?: string;
  /** `type=grade,...`: the label per feedback type (else `EVENTS_LABEL_GRADES`). */
  grades?: string;
  /** False with `--no-progress`. */
  progress: boolean;
}

/** Where an export reports; rows go to `stdout` with `--out -`. */
interface ExportOutput {
  log: Log;
  warn: Log;
  /** @defaultValue `process.stdout` */
  stdout?: Writable;
  /** @defaultValue `process.stderr` */
  progress?: ProgressStream;
}

/** The grades of `--grades` (else `EVENTS_LABEL_GRADES`), or a usage error saying what is wrong. */
export function gradesOption(option: string | undefined, setting: string): Record<string, number> {
  const parsed = parseLabelGrades(option ?? setting);
  if (parsed.problem !== undefined)
    throw new CliError(
      `${option === undefined ? 'EVENTS_LABEL_GRADES=' : '--grades '}${JSON.stringify(option ?? setting)}: ${parsed.problem}`,
      ErrorCode.CLI_USAGE,
    );
  return parsed.grades;
}

/**
 * `rankd events export`: reads the event stream (or an event file) from `--since` to `--until`
 * plus `--window` (feedback arriving after the last impressions), joins impressions with their
 * features, model, experiments and feedback, and writes one row per impression.
 */
export async function runEventsExport(
  options: ExportCommandOptions,
  output: ExportOutput,
  cwd = process.cwd(),
): Promise<ExportReport> {
  const now = Date.now();
  const { sinceMs, untilMs, windowMs } = timeRangeOptions(options, now);
  if (untilMs < sinceMs)
    throw new CliError('--until is before --since: nothing to export', ErrorCode.CLI_USAGE);
  const format = options.format ?? (options.out.endsWith('.csv') ? 'csv' : 'jsonl');
  const config = loadConfig(readEnvFiles(cwd));
  const grades = gradesOption(options.grades, config.EVENTS_LABEL_GRADES);
  // Feedback on the last impressions may arrive up to a window later; nothing is read past now.
  const readUntil = Math.min(untilMs + windowMs, now);
  let unreadable = 0;
  const onUnreadable = () => {
    unreadable += 1;
  };

  const { source, close } = await openEventSource(
    config,
    cwd,
    options.input,
    sinceMs,
    readUntil,
    onUnreadable,
  );

  const toStdout = options.out === '-';
  const out = toStdout ? (output.stdout ?? process.stdout) : createWriteStream(resolve(cwd, options.out));
  let lastTime = sinceMs;
  const progress = new Progress({
    stream: options.progress ? (output.progress ?? process.stderr) : { write: () => true },
    label: 'events export',
    unit: 'events',
    totalName: 'the time range',
    totalBytes: Math.max(1, readUntil - sinceMs),
    bytesRead: () => lastTime - sinceMs,
  });
  try {
    const report = await exportTrainingData({
      source,
      format,
      out,
      sinceMs,
      untilMs,
      windowMs,
      grades,
      onProgress: (events, timeMs) => {
        lastTime = Math.max(lastTime, timeMs);
        progress.update(events);
      },
    });
    progress.finish();
    if (!toStdout)
      await new Promise<void>((done, fail) =>
        out.end((error?: Error | null) => (error ? fail(error) : done())),
      );
    // With --out - the rows are on standard output: the summary must not mix with them.
    const say = toStdout ? output.warn : output.log;
    const skipped = report.skipped.describe('impressions');
    say(
      `exported ${formatCount(report.rows)} rows (${formatCount(report.labelled)} with a label > 0) from ` +
        `${formatCount(report.events)} events, ${new Date(sinceMs).toISOString()} to ${new Date(untilMs).toISOString()}` +
        `${toStdout ? '' : ` into ${options.out}`}${skipped === undefined ? '' : `; ${skipped}`}`,
    );
    if (unreadable > 0) output.warn(`${formatCount(unreadable)} entries were not events and were skipped`);
    if (report.cutShort > 0)
      output.warn(
        `${formatCount(report.cutShort)} requests were written before their window ended (memory bound)`,
      );
    return report;
  } finally {
    progress.finish();
    if (!toStdout && !out.writableEnded) out.destroy();
    await close();
  }
}
