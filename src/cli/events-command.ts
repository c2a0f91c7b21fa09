import { type Command, Option } from 'commander';
import type { Log } from './cli-error.js';
import type { ExportCommandOptions } from './events-export.js';

const EXPORT_HELP = `
One row per impression (an item a ranking request returned) whose request reached the event stream
between --since and --until, with: its position and score, the model (name, version) that scored
it, the request's experiment variants, every feature the model read for it and the features of the
request's user and query (EVENTS_FEATURES=shown), and labels from the feedback posted on that
request and item within --window of the request: clicked, added_to_cart, purchased (0/1) and label
(by default purchase 3 > add_to_cart 2 > click 1 > 0; --grades or EVENTS_LABEL_GRADES). Times: ISO 8601 (2024-05-01, 2024-05-01T12:00:00Z),
ms since the epoch, or a duration meaning that long ago (24h, 30m, 7d).
Memory holds the requests of one window (see docs/reference/events.md). Redis and PROJECT_NAME come from the
environment or .env, as for rankd run; EVENTS_REDIS_URL when the stream lives elsewhere.`;

/** Adds `rankd events export` to `program`. */
export function registerEventsCommands(program: Command, output: { log: Log; warn: Log }): void {
  const events = program.command('events').description('logged events: export training data');
  events
    .command('export')
    .description('join impressions, features and feedback from the event stream into training rows')
    .requiredOption('--since <time>', 'first request time exported (ISO date, ms, or a duration ago: 24h)')
    .option('--until <time>', 'last request time exported (default: now)')
    .addOption(
      new Option(
        '--format <format>',
        'output format (default: csv when --out ends in .csv, else jsonl)',
      ).choices(['jsonl', 'csv']),
    )
    .option('--out <file>', 'output file, or - for standard output', '-')
    .option('--window <duration>', 'how long after a request its feedback counts', '1h')
    .option('--input <file>', 'read a JSONL event file (EVENTS_SINK=file) instead of the stream')
    .option(
      '--grades <grades>',
      'label per feedback type, e.g. purchase=3,add_to_cart=2,click=1 (default: EVENTS_LABEL_GRADES)',
    )
    .option('--no-progress', 'no progress bar or progress lines')
    .addHelpText('after', EXPORT_HELP)
    .action(async (options: ExportCommandOptions) => {
      // Loaded on use, like the other commands' code.
      const { runEventsExport } = await import('./events-export.js');
      await runEventsExport(options, output);
    });
}
