import type { Command } from 'commander';
import { ErrorCode } from '../errors/index.js';
import { CliError, type Log } from './cli-error.js';
import type { EvaluateShadowOptions } from './evaluate-shadow.js';

const SHADOW_HELP = `
--shadow reads the SHADOW events of the event stream (or --input): for each request a shadow model ran
on, the served model's ranking and the shadow's (docs/reference/models.md, "Shadow runs"). It prints how
often the top k (the request's page) is in another order or holds other items, the rank-biased overlap
of the two rankings (mean, median, 10th percentile), and the --top requests that differ most, with the
items that moved most explained by both models. Times: ISO 8601, ms since the epoch, or a duration
meaning that long ago (24h, 7d).`;

/** `rankd evaluate`'s options, as commander parses them. */
export interface EvaluateCommandOptions extends EvaluateShadowOptions {
  shadow?: boolean;
}

/** Adds `rankd evaluate` to `program`. */
export function registerEvaluateCommand(program: Command, output: { log: Log; warn: Log }): void {
  program
    .command('evaluate')
    .description(
      "evaluate models from the logs: --shadow compares a shadow model's rankings with the served ones",
    )
    .option('--shadow', 'compare the rankings of shadow runs with the served ones')
    .option('--since <time>', 'first request compared (default: the start of the stream)', '0')
    .option('--until <time>', 'last request compared (default: now)')
    .option('--input <file>', 'read a JSONL event file (EVENTS_SINK=file) instead of the stream')
    .option('--top <n>', 'how many of the most different requests to show', '5')
    .option('--json', 'print the report as JSON')
    .addHelpText('after', SHADOW_HELP)
    .action(async (options: EvaluateCommandOptions) => {
      if (options.shadow !== true) throw new CliError('rankd evaluate: give --shadow', ErrorCode.CLI_USAGE);
      const { runEvaluateShadow } = await import('./evaluate-shadow.js');
      await runEvaluateShadow(options, output);
    });
}
