import { ErrorCode } from '../errors/index.js';
import { parseDuration, parseTime } from '../events/export/time-range.js';
import { CliError } from './cli-error.js';

/** The time flags `rankd events export` and `rankd train` share, as typed. */
interface TimeRangeFlags {
  since: string;
  until?: string | undefined;
  window: string;
}

/** Those flags in ms: the range of requests, and how long after a request its feedback counts. */
interface TimeRange {
  sinceMs: number;
  untilMs: number;
  windowMs: number;
}

/**
 * Reads `--since`, `--until` (default now) and `--window`, or throws a usage error naming the flag
 * and the forms it takes.
 */
export function timeRangeOptions(flags: TimeRangeFlags, now: number): TimeRange {
  const sinceMs = timeOption('since', flags.since, now);
  const untilMs = flags.until === undefined ? now : timeOption('until', flags.until, now);
  const windowMs = parseDuration(flags.window);
  if (windowMs === undefined)
    throw new CliError(
      `--window ${JSON.stringify(flags.window)}: expected a duration such as 1h`,
      ErrorCode.CLI_USAGE,
    );
  return { sinceMs, untilMs, windowMs };
}

function timeOption(name: string, text: string, now: number): number {
  const ms = parseTime(text, now);
  if (ms === undefined)
    throw new CliError(
      `--${name} ${JSON.stringify(text)}: expected an ISO date, ms since the epoch, or a duration such as 7d`,
      ErrorCode.CLI_USAGE,
    );
  return ms;
}
