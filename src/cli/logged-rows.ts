import { createReadStream } from 'node:fs';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { loadConfig, readEnvFiles } from '../config/index.js';
import { ErrorCode } from '../errors/index.js';
import { rowProblem, SkippedRows } from '../events/export/row-checks.js';
import { TrainingJoin, type TrainingRow } from '../events/export/training-join.js';
import { CliError } from './cli-error.js';
import { gradesOption } from './events-export.js';
import { openEventSource } from './open-event-source.js';
import { timeRangeOptions } from './time-range-options.js';

/** The flags that choose the logged rows `rankd train` and `rankd evaluate` read. */
interface LoggedRowsFlags {
  since?: string | undefined;
  until?: string | undefined;
  window: string;
  /** A JSONL event file (`EVENTS_SINK=file`) instead of the stream. */
  input?: string | undefined;
  /** Rows written by `rankd events export --format jsonl`, instead of events. */
  from?: string | undefined;
  grades?: string | undefined;
}

/** The rows of a `--from` file (JSON Lines of `rankd events export`), as they are. */
async function readRows(path: string): Promise<TrainingRow[]> {
  const rows: TrainingRow[] = [];
  const lines = createInterface({ input: createReadStream(path), crlfDelay: Number.POSITIVE_INFINITY });
  let n = 0;
  for await (const line of lines) {
    n += 1;
    if (line.trim() === '') continue;
    try {
      rows.push(JSON.parse(line) as TrainingRow);
    } catch {
      throw new CliError(
        `${path}:${n}: not a JSON row; --from reads rankd events export --format jsonl`,
        ErrorCode.INPUT_INVALID,
      );
    }
  }
  return rows;
}

/**
 * Exported rows labelled again with `--grades`, from their `clicked`, `added_to_cart` and
 * `purchased` flags (the feedback types an export keeps); as they are without it.
 */
function relabel(rows: TrainingRow[], grades: string | undefined): TrainingRow[] {
  if (grades === undefined) return rows;
  const grade = gradesOption(grades, '');
  return rows.map((row) => ({
    ...row,
    label: Math.max(
      0,
      row.clicked ? (grade.click ?? 0) : 0,
      row.added_to_cart ? (grade.add_to_cart ?? 0) : 0,
      row.purchased ? (grade.purchase ?? 0) : 0,
    ),
  }));
}

/**
 * The valid rows of a `--from` file, labelled again with `--grades` when given; the others are
 * counted by reason, as an export counts the impressions it leaves out.
 */
async function fromRows(from: string, grades: string | undefined, cwd: string): Promise<LoggedRows> {
  const skipped = new SkippedRows();
  const read = (await readRows(resolve(cwd, from))).filter((row) => {
    const isObject = typeof row === 'object' && row !== null && !Array.isArray(row);
    if (!isObject) skipped.add('not a JSON object');
    return isObject;
  });
  const rows = relabel(read, grades).filter((row) => {
    const problem = rowProblem(row);
    if (problem !== undefined) skipped.add(problem);
    return problem === undefined;
  });
  return { rows, what: from, skipped };
}

/** The rows of the event stream (or an event file) joined as `rankd events export` joins them. */
async function joinedRows(flags: LoggedRowsFlags, cwd: string): Promise<LoggedRows> {
  if (flags.since === undefined)
    throw new CliError('give --since (the event stream) or --from (an exported file)', ErrorCode.CLI_USAGE);
  const now = Date.now();
  const { sinceMs, untilMs, windowMs } = timeRangeOptions({ ...flags, since: flags.since }, now);
  const config = loadConfig(readEnvFiles(cwd));
  const grades = gradesOption(flags.grades, config.EVENTS_LABEL_GRADES);
  const readUntil = Math.min(untilMs + windowMs, now);
  const { source, close } = await openEventSource(config, cwd, flags.input, sinceMs, readUntil);
  const what = flags.input ?? `the event stream since ${new Date(sinceMs).toISOString()}`;
  try {
    const join = new TrainingJoin({ sinceMs, untilMs, windowMs, grades });
    const rows: TrainingRow[] = [];
    for await (const { timeMs, event } of source) rows.push(...join.add(timeMs, event));
    rows.push(...join.finish());
    return { rows, what, skipped: join.skipped };
  } finally {
    await close();
  }
}

/** Logged rows, how to name where they came from, and the rows left out as invalid. */
interface LoggedRows {
  rows: TrainingRow[];
  what: string;
  skipped: SkippedRows;
}

/**
 * The valid logged rows the flags name: a `--from` file (labelled again with `--grades`), else the
 * event stream (or `--input` file) from `--since`, joined with feedback; and how to name them.
 */
export async function loggedRows(flags: LoggedRowsFlags, cwd: string): Promise<LoggedRows> {
  return flags.from === undefined ? joinedRows(flags, cwd) : fromRows(flags.from, flags.grades, cwd);
}
