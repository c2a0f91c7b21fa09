import { existsSync, readdirSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import type { RankdApp } from '../app/define-app.js';
import type { EntityIndex } from '../entity-index/entity-index.js';
import { ErrorCode } from '../errors/index.js';
import type { FeatureStore } from '../features/feature-store.js';
import { CliError } from './cli-error.js';
import { openInput } from './load/input.js';
import { readJsonLines } from './load/jsonl.js';
import type { SourceRecord } from './load/records.js';
import { runLoad } from './load/run-load.js';
import { entityTarget, featureTarget, type LoadTarget } from './load/targets.js';

/** Rows per batch: the index's batch limit, as `rankd index load` defaults to. */
const BATCH_SIZE = 1000;

/** Where a project keeps its sample entities: `<entity type>.jsonl`, or the plural (`products.jsonl`). */
const SAMPLE_ENTITY_DIR = 'data';
/** Where a project keeps its sample feature rows: `<view>.jsonl`. */
const SAMPLE_FEATURE_DIR = join('feature-store', 'data');

/** What {@link loadSampleData} writes with: the app's declarations and the two stores. */
interface SampleDataServices {
  readonly app: RankdApp;
  readonly index: EntityIndex;
  readonly features: FeatureStore;
}

/** One loaded file. */
interface LoadedFile {
  /** Relative to the project. */
  readonly file: string;
  /** The entity type or feature view it went to. */
  readonly target: string;
  readonly rows: number;
}

/** What {@link loadSampleData} loaded. */
interface SampleDataSummary {
  readonly entities: LoadedFile[];
  readonly features: LoadedFile[];
}

/** Entities by entity type and feature rows by view, given in memory (see {@link loadRows}). */
export interface RowsToLoad {
  /** By entity type: `{ product: [{ product_id: 'p1', title: 'Soy candle' }] }`. */
  readonly entities?: Readonly<Record<string, readonly object[]>>;
  /** By feature view: `{ product_stats: [{ entity_id: 'p1', ctr_7d: 0.1 }] }`. */
  readonly features?: Readonly<Record<string, readonly object[]>>;
}

interface Job {
  /** What a message calls the rows: a file relative to the project, or `entities.product`. */
  readonly shown: string;
  readonly target: string;
  readonly load: LoadTarget<unknown>;
  readonly records: () => AsyncIterable<SourceRecord>;
  /** Where rows `first` to `last` are, for a message: `data/products.jsonl line 3`, `entities.product[2]`. */
  readonly where: (first: number, last?: number) => string;
}

/** The records of a JSON Lines file, read as `rankd index load` reads them. */
function fileRecords(file: string): () => AsyncIterable<SourceRecord> {
  return async function* () {
    const input = await openInput(file, 'jsonl');
    yield* readJsonLines(input.chunks);
  };
}

/** Rows given in memory as records: row `i` is "line" i + 1. */
function arrayRecords(rows: readonly object[]): () => AsyncIterable<SourceRecord> {
  return async function* () {
    for (let i = 0; i < rows.length; i++) {
      const value = rows[i];
      yield typeof value === 'object' && value !== null && !Array.isArray(value)
        ? { line: i + 1, value: value as Record<string, unknown> }
        : { line: i + 1, problem: 'not an object' };
    }
  };
}

function jsonlFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => name.endsWith('.jsonl'))
    .sort()
    .map((name) => join(dir, name));
}

function known(names: Iterable<string>): string {
  const list = [...names];
  return list.length === 0 ? 'none' : list.join(', ');
}

/** A job for the entities of type `name` (or its plural); `rename` says what to name instead. */
function entityJob(
  services: SampleDataServices,
  name: string,
  shown: string,
  rename: string,
): Omit<Job, 'records' | 'where'> {
  const type = services.app.entityTypes.get(name) ?? services.app.entityTypes.get(name.replace(/s$/, ''));
  if (type === undefined) {
    throw new CliError(
      `${shown}: the app has no entity type ${name}; ${rename} one of ${known(services.app.entityTypes.keys())}`,
      ErrorCode.INPUT_INVALID,
    );
  }
  return { shown, target: type.name, load: entityTarget(services.index, type, undefined) };
}

/** A job for the rows of view `name`. */
function featureJob(
  services: SampleDataServices,
  name: string,
  shown: string,
): Omit<Job, 'records' | 'where'> {
  const view = services.app.featureViews.get(name);
  if (view === undefined) {
    throw new CliError(
      `${shown}: the app has no feature view ${name}; it has ${known(services.app.featureViews.keys())}`,
      ErrorCode.INPUT_INVALID,
    );
  }
  return { shown, target: view.name, load: featureTarget(view, services.features) as LoadTarget<unknown> };
}

/** Loads one job's rows with the code of `rankd index load` / `rankd features load`; stops at a bad row. */
async function run(job: Job): Promise<number> {
  const report = await runLoad(
    job.records(),
    job.load,
    { batchSize: BATCH_SIZE, onError: 'stop', dryRun: false },
    { badRow: () => undefined, progress: () => undefined },
  );
  if (report.stopped)
    throw new CliError(
      `${job.where(report.stopped.line)}: ${report.stopped.reason}`,
      ErrorCode.INPUT_INVALID,
    );
  if (report.writeFailure) {
    const { firstLine, lastLine, reason } = report.writeFailure;
    throw new CliError(`${job.where(firstLine, lastLine)} could not be written: ${reason}`);
  }
  return report.written;
}

/** Runs the jobs, entities first (feature rows may be of them), into a summary. */
async function runAll(entityJobs: readonly Job[], featureJobs: readonly Job[]): Promise<SampleDataSummary> {
  const summary: SampleDataSummary = { entities: [], features: [] };
  for (const job of entityJobs)
    summary.entities.push({ file: job.shown, target: job.target, rows: await run(job) });
  for (const job of featureJobs)
    summary.features.push({ file: job.shown, target: job.target, rows: await run(job) });
  return summary;
}

/**
 * Loads a project's sample data: every `data/<entity type>.jsonl` into the entity index, then
 * every `feature-store/data/<view>.jsonl` into the feature store (rows `{ "entity_id": "p1",
 * "<feature>": value, ... }`, event time now unless a row gives `event_timestamp`). Rows are
 * checked and written by the code of the upload endpoints and file loaders; a bad row stops the
 * load with its file and line.
 */
export async function loadSampleData(
  projectDir: string,
  services: SampleDataServices,
): Promise<SampleDataSummary> {
  const entityFiles = jsonlFiles(join(projectDir, SAMPLE_ENTITY_DIR));
  const featureFiles = jsonlFiles(join(projectDir, SAMPLE_FEATURE_DIR));
  if (entityFiles.length === 0 && featureFiles.length === 0) {
    throw new CliError(
      `no sample data in ${projectDir}: expected ${SAMPLE_ENTITY_DIR}/*.jsonl or ${SAMPLE_FEATURE_DIR}/*.jsonl`,
      ErrorCode.CLI_USAGE,
    );
  }
  const fromFile = (file: string, job: Omit<Job, 'records' | 'where'>): Job => ({
    ...job,
    records: fileRecords(file),
    where: (first, last) => `${job.shown} ${last === undefined ? `line ${first}` : `lines ${first}-${last}`}`,
  });
  // Every file name is checked before anything is written: a misnamed file fails the whole load.
  const entityJobs = entityFiles.map((file) => {
    const shown = relative(projectDir, file);
    return fromFile(file, entityJob(services, basename(file, '.jsonl'), shown, 'name the file after'));
  });
  const featureJobs = featureFiles.map((file) =>
    fromFile(file, featureJob(services, basename(file, '.jsonl'), relative(projectDir, file))),
  );
  return runAll(entityJobs, featureJobs);
}

/**
 * Loads entities and feature rows given in memory (a test's fixtures), checked and written as
 * {@link loadSampleData} does files. A bad row stops the load, named by its place:
 * `entities.product[2]: ...`. Every type and view name is checked before anything is written.
 */
export async function loadRows(services: SampleDataServices, rows: RowsToLoad): Promise<SampleDataSummary> {
  const fromArray = (list: readonly object[], job: Omit<Job, 'records' | 'where'>): Job => ({
    ...job,
    records: arrayRecords(list),
    where: (first, last) => `${job.shown}[${last === undefined ? first - 1 : `${first - 1}..${last - 1}`}]`,
  });
  const entityJobs = Object.entries(rows.entities ?? {}).map(([type, list]) =>
    fromArray(list, entityJob(services, type, `entities.${type}`, 'use')),
  );
  const featureJobs = Object.entries(rows.features ?? {}).map(([view, list]) =>
    fromArray(list, featureJob(services, view, `features.${view}`)),
  );
  return runAll(entityJobs, featureJobs);
}
