import type { Command } from 'commander';
import type { Log } from './cli-error.js';
import type { ExperimentReportOptions } from './experiment-report.js';

const REPORT_HELP = `
Reads the INTERLEAVING events of experiment NAME (defineInterleaving's id) from the event stream (or
--input) and the click feedback on those pages: each clicked item is credited to the ranker that placed
it. A page is a win for the challenger when more of its clicked items were the challenger's, a loss when
fewer, a tie when as many; pages without clicks are counted as impressions only. Prints impressions,
wins / losses / ties, the preference Δ with a 95% confidence interval (Wilson), the two-sided sign test's
p-value (wins against losses, exact binomial) and whether the result is significant at 95%.
Times: ISO 8601, ms since the epoch, or a duration meaning that long ago (24h, 7d).`;

/** Adds `rankd experiment report` to `program`. */
export function registerExperimentCommands(program: Command, output: { log: Log; warn: Log }): void {
  const experiment = program
    .command('experiment')
    .description('experiments: reports of interleaving experiments');
  experiment
    .command('report')
    .description("credit clicks to each interleaving ranker and test the challenger's preference")
    .argument('<name>', 'the interleaving experiment id')
    .option('--since <time>', 'first page counted (default: the start of the stream)', '0')
    .option('--until <time>', 'last page counted (default: now)')
    .option('--window <duration>', 'how long after a page its clicks count', '1h')
    .option('--input <file>', 'read a JSONL event file (EVENTS_SINK=file) instead of the stream')
    .option('--feedback <types>', 'feedback types credited as clicks, comma-separated', 'click')
    .option('--json', 'print the report as JSON')
    .addHelpText('after', REPORT_HELP)
    .action(async (name: string, options: ExperimentReportOptions) => {
      const { runExperimentReport } = await import('./experiment-report.js');
      await runExperimentReport(name, options, output);
    });
}
