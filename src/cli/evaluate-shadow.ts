import { loadConfig, readEnvFiles } from '../config/index.js';
import { ErrorCode } from '../errors/index.js';
import { RBO_P, type ShadowReport, shadowReport } from '../experiments/shadow-report.js';
import { CliError, type Log } from './cli-error.js';
import { formatCount } from './load/progress.js';
import { openEventSource } from './open-event-source.js';
import { timeRangeOptions } from './time-range-options.js';

/** `rankd evaluate --shadow`'s options, as commander parses them. */
export interface EvaluateShadowOptions {
  since: string;
  until?: string;
  /** A JSONL event file (`EVENTS_SINK=file`) instead of the stream. */
  input?: string;
  /** How many of the most different requests to show. */
  top: string;
  json?: boolean;
}

const percent = (x: number) => `${(100 * x).toFixed(1)}%`;
const figure = (x: unknown) => (typeof x === 'number' ? Number(x.toPrecision(4)).toString() : String(x));

function modelName(model: unknown): string {
  const { name, version } = (model ?? {}) as { name?: unknown; version?: unknown };
  return `${String(name ?? '?')}${version == null ? '' : ` (${String(version)})`}`;
}

/** One model's side of a mover: its score and largest contributions. */
function side(label: string, why: unknown): string {
  const { score, contributions, reason } = (why ?? {}) as {
    score?: unknown;
    contributions?: Record<string, number> | null;
    reason?: string;
  };
  const parts =
    contributions == null
      ? (reason ?? 'no contributions')
      : Object.entries(contributions)
          .map(([name, value]) => `${name} ${value >= 0 ? '+' : '−'}${figure(Math.abs(value))}`)
          .join(', ');
  return `${label} ${figure(score)} (${parts})`;
}

/** The report as a person reads it. */
export function shadowLines(report: ShadowReport): string[] {
  const lines = [
    `Shadow runs from ${new Date(report.sinceMs).toISOString()} to ${new Date(report.untilMs).toISOString()}: ` +
      `${formatCount(report.requests)} requests compared${report.failed > 0 ? `, ${formatCount(report.failed)} failed` : ''}`,
    ...report.models.map(
      (m) =>
        `  served ${modelName(m.served)} vs shadow ${modelName(m.shadow)}: ${formatCount(m.requests)} requests`,
    ),
  ];
  if (report.requests === 0) return [...lines, ...report.errors.map((e) => `  error: ${e}`)];
  lines.push(
    `top k (the page) in another order      ${percent(report.orderChangeRate)} of requests`,
    `top k with other items (change rate)   ${percent(report.topKChangeRate)} of requests; ${percent(report.meanReplacedShare)} of the top k replaced on average`,
    `rank-biased overlap (p = ${RBO_P})       mean ${report.rbo.mean.toFixed(3)}, median ${report.rbo.median.toFixed(3)}, 10th percentile ${report.rbo.p10.toFixed(3)}`,
    `the requests that differ most (${report.biggest.length}):`,
  );
  for (const c of report.biggest) {
    lines.push(
      `  ${c.requestId} (${c.timestamp}, ${c.apiSource}): overlap ${c.rbo.toFixed(3)}, ${c.replaced} of the top ${c.k} replaced`,
    );
    for (const mover of c.movers as Array<Record<string, unknown>>) {
      const at = (position: unknown) => (typeof position === 'number' ? `#${position + 1}` : '?');
      lines.push(
        `    ${String(mover.entity_identifier)}: served ${at(mover.served_position)} → shadow ${at(mover.shadow_position)}; ` +
          `${side('served', mover.served)}; ${side('shadow', mover.shadow)}`,
      );
    }
  }
  for (const error of report.errors) lines.push(`  failed run: ${error}`);
  return lines;
}

/**
 * `rankd evaluate --shadow`: compares the served and shadow rankings that SHADOW events logged
 * between `--since` and `--until`, from the event stream (or `--input`).
 */
export async function runEvaluateShadow(
  options: EvaluateShadowOptions,
  output: { log: Log; warn: Log },
  cwd = process.cwd(),
): Promise<ShadowReport> {
  const now = Date.now();
  const { sinceMs, untilMs } = timeRangeOptions({ ...options, window: '0s' }, now);
  if (untilMs < sinceMs)
    throw new CliError('--until is before --since: nothing to evaluate', ErrorCode.CLI_USAGE);
  const top = Number(options.top);
  if (!Number.isInteger(top) || top < 0)
    throw new CliError(`--top ${JSON.stringify(options.top)}: expected a whole number`, ErrorCode.CLI_USAGE);
  const config = loadConfig(readEnvFiles(cwd));
  let unreadable = 0;
  const { source, close } = await openEventSource(config, cwd, options.input, sinceMs, untilMs, () => {
    unreadable += 1;
  });
  try {
    const report = await shadowReport(source, { sinceMs, untilMs, top });
    if (options.json === true) output.log(JSON.stringify(report, null, 2));
    else for (const line of shadowLines(report)) output.log(line);
    if (report.requests === 0 && report.failed === 0)
      output.warn(
        'no shadow run in that time: does a pipeline name a `shadow` model with a share above 0, and does the stream (or --input) reach back that far?',
      );
    if (unreadable > 0) output.warn(`${formatCount(unreadable)} entries were not events and were skipped`);
    return report;
  } finally {
    await close();
  }
}
