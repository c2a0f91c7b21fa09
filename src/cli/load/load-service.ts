import { resolve } from 'node:path';
import type { RankdApp } from '../../app/define-app.js';
import { loadConfig, readEnvFiles } from '../../config/index.js';
import { createStores, type Stores } from '../../redis/stores.js';
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
export interface LoadOutput {
  log: Log;
  warn: Log;
  /** @defaultValue `process.stderr` */
  progress?: ProgressStream;
}

/** Bad rows printed one by one; past this only their count is given, so a wholly wrong file stays readable. */
export const MAX_PRINTED_BAD_ROWS = 100;

/** What one kind of load needs once the app and the stores exist. */
interface LoadPlan {
  label: string;
  into: string;
  columns: ColumnParsers;
  target: (stores: Stores) => LoadTarget<unknown>;
}

function known(names: Iterable<string>): string {
  const list = [...names];
  return list.length === 0 ? 'none' : list.join(', ');
}

/**
 * `rankd index load <entity_type> <file>`: entities from a file into the index, checked and
 * written by the same {@link EntityIndex} code as `POST /api/v1/entities/upload`.
 */
export function loadEntitiesFile(
  entityType: string,
  file: string,
  options: LoadCommandOptions,
  output: LoadOutput,
  cwd = process.cwd(),
): Promise<LoadReport> {
  return runFileLoad(file, options, output, cwd, (app) => {
    const type = app.entityTypes.get(entityType);
    if (type === undefined)
      throw new CliError(
        `${app.name} has no entity type ${entityType}; it has ${known(app.entityTypes.keys())}`,
      );
    return {
      label: `index load ${entityType}`,
      into: `entity type ${entityType}`,
      columns: entityColumns(type, options.entityKey),
      target: (stores) => entityTarget(stores.index, type, options.entityKey),
    };
  });
}

/**
 * `rankd features load <view> <file>`: feature rows from a file into the feature store, checked
 * and written by the same code as `POST /api/v1/features/upload`.
 */
export function loadFeaturesFile(
  viewName: string,
  file: string,
  options: LoadCommandOptions,
  output: LoadOutput,
  cwd = process.cwd(),
): Promise<LoadReport> {
  return runFileLoad(file, options, output, cwd, (app) => {
    const view = app.featureViews.get(viewName);
    if (view === undefined)
      throw new CliError(
        `${app.name} has no feature view ${viewName}; it has ${known(app.featureViews.keys())}`,
      );
    return {
      label: `features load ${viewName}`,
      into: `feature view ${viewName}`,
      columns: featureColumns(view),
      target: (stores) => featureTarget(view, stores.features) as LoadTarget<unknown>,
    };
  });
}

async function runFileLoad(
  file: string,
  options: LoadCommandOptions,
  output: LoadOutput,
  cwd: string,
  planOf: (app: RankdApp) => LoadPlan,
): Promise<LoadReport> {
  const config = loadConfig(readEnvFiles(cwd));
  // The app's components are not initialised: loading needs only its declarations, not its models.
  const app = await loadApp(resolveAppPath(options.app, cwd));
  const plan = planOf(app);
  const input = await openInput(file === '-' ? file : resolve(cwd, file), options.format);
  const stores = createStores(config);
  try {
    // A dry run never connects: it can check a file on a machine without Redis.
    if (!options.dryRun && !(await stores.redis.waitUntilReady(config.REDIS_CONNECT_TIMEOUT_MS + 1000))) {
      throw new CliError(
        `Redis at ${stores.redis.address} is not answering; start it with \`rankd redis\` or point REDIS_URL at one (nothing was loaded)`,
      );
    }
    const progress = new Progress({
      stream: options.progress ? (output.progress ?? process.stderr) : { write: () => true },
      label: plan.label,
      totalBytes: input.totalBytes,
      bytesRead: input.bytesRead,
    });
    let printed = 0;
    const records =
      input.format === 'csv' ? readCsv(input.chunks, plan.columns) : readJsonLines(input.chunks);
    const report = await runLoad(
      records,
      plan.target(stores),
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
      into: plan.into,
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
