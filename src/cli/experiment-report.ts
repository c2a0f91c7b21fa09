import { loadConfig, readEnvFiles } from '../config/index.js';
import { ErrorCode } from '../errors/index.js';
import { type InterleavingReport, interleavingReport } from '../experiments/interleaving-report.js';
import { CliError, type Log } from './cli-error.js';
import { formatCount } from './load/progress.js';
import { openEventSource } from './open-event-source.js';
import { timeRangeOptions } from './time-range-options.js';

/** `rankd experiment report`'s options, as commander parses them. */
export interface ExperimentReportOptions {
  since: string;
  until?: string;
  window: string;
  /** A JSONL event file (`EVENTS_SINK=file`) instead of the stream. */
  input?: string;
  /** Feedback types credited as clicks, comma-separated. */
  feedback: string;
  json?: boolean;
}

const percent = (x: number) => `${(100 * x).toFixed(1)}%`;
const signed = (x: number) => `${x >= 0 ? '+' : '−'}${Math.abs(x).toFixed(4)}`;
const pValue = (p: number) => (p < 1e-4 ? p.toExponential(2) : p.toFixed(4));

function describe(ranker: Record<string, unknown>): string {
  const { model, version, variant } = ranker;
  const named = `${String(model ?? '?')}${version == null ? '' : ` (${String(version)})`}`;
  return variant === undefined ? named : `variant ${String(variant)}: ${named}`;
}

/** The report as a person reads it, one line per figure. */
export function reportLines(report: InterleavingReport): string[] {
  const verdict =
    report.decision === 'challenger_wins'
      ? 'yes: the challenger wins'
      : report.decision === 'challenger_loses'
        ? 'yes: the challenger loses'
        : 'no: undecided, more impressions needed';
  return [
    `Interleaving experiment ${report.experimentId}: pages from ${new Date(report.sinceMs).toISOString()} to ` +
      `${new Date(report.untilMs).toISOString()}, ${report.feedbackTypes.join(', ')} credited within ` +
      `${report.windowMs / 1000} s`,
    ...report.rankers.map(
      (r) =>
        `  control ${describe(r.control)} vs challenger ${describe(r.challenger)}: ${formatCount(r.impressions)} pages`,
    ),
    `impressions (interleaved pages)       ${formatCount(report.impressions)}`,
    `pages with clicks                     ${formatCount(report.withClicks)}`,
    `challenger wins / losses / ties       ${formatCount(report.wins)} / ${formatCount(report.losses)} / ${formatCount(report.ties)}`,
    `clicks credited                       control ${formatCount(report.clicks.control)}, challenger ${formatCount(report.clicks.challenger)}`,
    `preference Δ (challenger)             ${signed(report.delta)} (95% CI ${signed(report.deltaInterval[0])} to ${signed(report.deltaInterval[1])})`,
    `challenger's share of decided pages   ${percent(report.winShare)} (95% CI ${percent(report.winShareInterval[0])} to ${percent(report.winShareInterval[1])})`,
    `sign test p-value                     ${pValue(report.pValue)}`,
    `significant at 95%                    ${verdict}`,
  ];
}

/**
 * `rankd experiment report NAME`: credits the clicks on each interleaved page's items to the
 * ranker that placed them, from the event stream (or `--input`), and prints the report (or its
 * JSON with `--json`).
 */
export async function runExperimentReport(
  name: string,
  options: ExperimentReportOptions,
  output: { log: Log; warn: Log },
  cwd = process.cwd(),
): Promise<InterleavingReport> {
  const now = Date.now();
  const { sinceMs, untilMs, windowMs } = timeRangeOptions(options, now);
  if (untilMs < sinceMs)
    throw new CliError('--until is before --since: nothing to report', ErrorCode.CLI_USAGE);
  const feedbackTypes = options.feedback
    .split(',')
    .map((type) => type.trim())
    .filter((type) => type !== '');
  if (feedbackTypes.length === 0)
    throw new CliError('--feedback: name at least one feedback type, such as click', ErrorCode.CLI_USAGE);
  const config = loadConfig(readEnvFiles(cwd));
  let unreadable = 0;
  // Clicks on the last pages may arrive up to a window later; nothing is read past now.
  const { source, close } = await openEventSource(
    config,
    cwd,
    options.input,
    sinceMs,
    Math.min(untilMs + windowMs, now),
    () => {
      unreadable += 1;
    },
  );
  try {
    const report = await interleavingReport(source, {
      experimentId: name,
      sinceMs,
      untilMs,
      windowMs,
      feedbackTypes,
    });
    if (options.json === true) output.log(JSON.stringify(report, null, 2));
    else for (const line of reportLines(report)) output.log(line);
    if (report.impressions === 0)
      output.warn(
        `no interleaved page of experiment ${name} in that time: is it the id given to defineInterleaving, and does the stream (or --input) reach back that far?`,
      );
    if (unreadable > 0) output.warn(`${formatCount(unreadable)} entries were not events and were skipped`);
    return report;
  } finally {
    await close();
  }
}
