import { type Command, InvalidArgumentError, Option } from 'commander';
import type { Log } from './cli-error.js';
import type { LoadCommandOptions } from './load/load-service.js';

/** Largest `--batch-size`: one batch is one Redis command, and Redis buffers a command whole. */
const MAX_BATCH_SIZE = 100_000;

function parseBatchSize(value: string): number {
  const size = /^\d{1,6}$/.test(value) ? Number(value) : Number.NaN;
  if (!(size >= 1 && size <= MAX_BATCH_SIZE))
    throw new InvalidArgumentError(`expected a whole number from 1 to ${MAX_BATCH_SIZE}.`);
  return size;
}

const DIRECT_TO_REDIS = `
The file is read as a stream (any size, constant memory) and written straight to Redis in batches,
through the same checking and writing code as the HTTP upload endpoint. No rankd server is needed,
and with one hop less (no HTTP) it is faster; a running server sees the rows at once, since it
reads Redis on every request. Redis is the one configured for the app (REDIS_URL, or
REDIS_HOST/REDIS_PORT, from the environment or .env).

Formats: JSON Lines (.jsonl, .ndjson, .json: one object per line, blank lines skipped) and CSV
(.csv, header row; cells typed by the declaration), optionally gzipped (.gz); - reads standard input.
Exit code: 0 when every row was valid and written; 1 when any row was bad (stopped or skipped) or
the load failed. See docs/guides/bring-your-catalogue.md.`;

/** The options `index load` and `features load` share. */
function addLoadOptions(command: Command): Command {
  return command
    .option(
      '--app <path>',
      'app module declaring the types and views (default: pipelines/main.ts, else dist/pipelines/main.js)',
    )
    .addOption(
      new Option('--format <format>', 'input format (default: from the file extension)').choices([
        'jsonl',
        'csv',
      ]),
    )
    .addOption(
      new Option('--batch-size <rows>', 'rows per batch; each batch is checked, then written atomically')
        .default(1000)
        .argParser(parseBatchSize),
    )
    .addOption(
      new Option(
        '--on-error <mode>',
        'at a bad row: stop (nothing of its batch is written) or skip (report it, write the others)',
      )
        .choices(['stop', 'skip'])
        .default('stop'),
    )
    .option('--dry-run', 'check every row, write nothing (does not connect to Redis)')
    .option('--no-progress', 'no progress bar or progress lines (bad rows and the summary are still printed)')
    .addHelpText('after', DIRECT_TO_REDIS);
}

/**
 * Adds `rankd index load <entity_type> <file>` and `rankd features load <view> <file>`. The
 * loading code is imported on use, like `rankd run`'s, so other commands do not pay for it.
 */
export function registerLoadCommands(program: Command, output: { log: Log; warn: Log }): void {
  const index = program.command('index').description('the entity index: load entities from files');
  addLoadOptions(
    index
      .command('load')
      .description('load entities of <entity_type> from a JSONL or CSV file straight into Redis')
      .argument('<entity_type>', 'an entity type of the app, e.g. product')
      .argument('<file>', 'the file (.jsonl, .ndjson, .json, .csv, optionally .gz), or - for standard input')
      .option('--entity-key <field>', "field holding the id, when not the type's id field (e.g. product_id)"),
  ).action(async (entityType: string, file: string, options: LoadCommandOptions) => {
    const { ENTITY_LOAD, exitCodeOf, loadFile } = await import('./load/load-service.js');
    process.exitCode = exitCodeOf(await loadFile(ENTITY_LOAD, entityType, file, options, output));
  });

  const features = program.command('features').description('the feature store: load feature rows from files');
  addLoadOptions(
    features
      .command('load')
      .description('load rows of feature view <view> from a JSONL or CSV file straight into Redis')
      .argument('<view>', 'a feature view of the app, e.g. product_stats')
      .argument('<file>', 'the file (.jsonl, .ndjson, .json, .csv, optionally .gz), or - for standard input'),
  ).action(async (view: string, file: string, options: LoadCommandOptions) => {
    const { FEATURE_LOAD, exitCodeOf, loadFile } = await import('./load/load-service.js');
    process.exitCode = exitCodeOf(await loadFile(FEATURE_LOAD, view, file, options, output));
  });
}
