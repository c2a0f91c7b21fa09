import { resolve } from 'node:path';
import { createStores, type Stores } from '../../app/create-stores.js';
import type { RankdApp } from '../../app/define-app.js';
import { loadConfig, readEnvFiles } from '../../config/index.js';
import type { EntityType } from '../../entities/define-entity.js';
import { ErrorCode } from '../../errors/index.js';
import type { FeatureView } from '../../features/define-feature-view.js';
import { CliError, type Log } from '../cli-error.js';
import { loadApp, resolveAppPath } from '../load-app.js';
import { type ColumnParsers, readCsv } from './csv.js';
import { entityColumns, featureColumns } from './csv-cells.js';
import { type InputFormat, openInput } from './input.js';
import { readJsonLines } from './jsonl.js';
import { Progress, type ProgressStream } from './progress.js';
import { type LoadReport, type OnError, runLoad } from './run-load.js';
import { loadSucceeded, summaryLines } from './summary.js';
import { entityTarget, featureTarget, type LoadTarget } from './targets.js';

/** The options of `rankd index load` and `rankd features load`, as commander parses them. */
export interface LoadCommandOptions {
  app?: string;
  format?: InputFormat;
  batchSize: number;
  onError: OnError;
  dryRun?: boolean;
  /** False with `--no-progress`. */
  progress: boolean;
  /** `index load` only: the field holding the id, when not the type's id field. */
  entityKey?: string;
}

/** Where a load reports: the summary on `log`, bad rows on `warn`, progress on `progress`. */
interface LoadOutput {
  log: Log;
  warn: Log;
  /** @defaultValue `process.stderr` */
  progress?: ProgressStream;
}

/** Bad rows printed one by one; past this only their count is given, so a wholly wrong file stays readable. */
const MAX_PRINTED_BAD_ROWS = 100;

/**
 * What `index load` and `features load` differ in: what the name on the command line names, and
 * how rows for it are read and written. `D` is what the name is looked up as in the app.
 */
interface LoadKind<D> {
  /** The command, which starts the progress line: `index load`. */
  readonly command: string;
  /** What the name names, in messages: `entity type`. */
  readonly what: string;
  /** The app's declarations of this kind, by name. */
  declarations(app: RankdApp): ReadonlyMap<string, D>;
  /** How a CSV file's cells are read (JSON Lines carry their own types). */
  columns(declaration: D, options: LoadCommandOptions): ColumnParsers;
  /** Where checked rows are written. */
  target(declaration: D, stores: Stores, options: LoadCommandOptions): LoadTarget<unknown>;
}

/**
 * `rankd index load <entity_type> <file>`: entities into the index, checked and written by the
 * same {@link EntityIndex} code as `POST /api/v1/entities/upload`.
 */
export const ENTITY_LOAD: LoadKind<EntityType> = {
  command: 'index load',
  what: 'entity type',
  declarations: (app) => app.entityTypes,
  columns: (type, options) => entityColumns(type, options.entityKey),
  target: (type, stores, options) => entityTarget(stores.index, type, options.entityKey),
};

/**
 * `rankd features load <view> <file>`: feature rows into the feature store, checked and written
 * by the same code as `POST /api/v1/features/upload`.
 */
export const FEATURE_LOAD: LoadKind<FeatureView> = {
  command: 'features load',
  what: 'feature view',
  declarations: (app) => app.featureViews,
  columns: (view) => featureColumns(view),
  target: (view, stores) => featureTarget(view, stores.features),
};

function known(names: Iterable<string>): string {
  const list = [...names];
  return list.length === 0 ? 'none' : list.join(', ');
}

/**
 * Loads `file` (`-`: standard input) into the app's {@link LoadKind} declaration `name`: the
 * app and configuration are those of `cwd`; progress, bad rows and the summary go to `output`.
 */
export async function loadFile<D>(
  kind: LoadKind<D>,
  name: string,
  file: string,
  options: LoadCommandOptions,
  output: LoadOutput,
  cwd = process.cwd(),
): Promise<LoadReport> {
  const config = loadConfig(readEnvFiles(cwd));
  // The app's components are not initialised: loading needs only its declarations, not its models.
  const app = await loadApp(resolveAppPath(options.app, cwd));
  const declarations = kind.declarations(app);
  const declaration = declarations.get(name);
  if (declaration === undefined)
    throw new CliError(
      `${app.name} has no ${kind.what} ${name}; it has ${known(declarations.keys())}`,
      ErrorCode.CLI_USAGE,
    );
  const input = await openInput(file === '-' ? file : resolve(cwd, file), options.format);
  const stores = createStores(config);
  try {
    // A dry run never connects: it can check a file on a machine without Redis.
    if (!options.dryRun && !(await stores.redis.waitUntilReady(config.REDIS_COMMAND_TIMEOUT_MS + 1000))) {
      throw new CliError(
        `Redis at ${stores.redis.address} is not answering; start it with \`rankd redis\` or point REDIS_URL at one (nothing was loaded)`,
        ErrorCode.REDIS_UNAVAILABLE,
      );
    }
    const progress = new Progress({
      stream: options.progress ? (output.progress ?? process.stderr) : { write: () => true },
      label: `${kind.command} ${name}`,
      totalBytes: input.totalBytes,
      bytesRead: input.bytesRead,
    });
    let printed = 0;
    const records =
      input.format === 'csv'
        ? readCsv(input.chunks, kind.columns(declaration, options))
        : readJsonLines(input.chunks);
    const report = await runLoad(
      records,
      kind.target(declaration, stores, options),
      { batchSize: options.batchSize, onError: options.onError, dryRun: options.dryRun ?? false },
      {
        badRow: (row) => {
          if (printed++ < MAX_PRINTED_BAD_ROWS)
            progress.around(() => output.warn(`line ${row.line}: ${row.reasons.join('; ')}`));
        },
        progress: (rows) => progress.update(rows),
      },
    );
    progress.finish();
    if (printed > MAX_PRINTED_BAD_ROWS) {
      output.warn(
        `... and ${printed - MAX_PRINTED_BAD_ROWS} more bad rows (only the first ${MAX_PRINTED_BAD_ROWS} are printed)`,
      );
    }
    const shownFile = file === '-' ? 'standard input' : file;
    for (const line of summaryLines(report, {
      file: shownFile,
      into: `${kind.what} ${name}`,
      dryRun: options.dryRun ?? false,
    }))
      output.log(line);
    return report;
  } finally {
    await stores.redis.close();
  }
}

/** The exit code a load ends with: 0 when every row was valid (and written), else 1. */
export function exitCodeOf(report: LoadReport): number {
  return loadSucceeded(report) ? 0 : 1;
}
