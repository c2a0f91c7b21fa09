import { existsSync, readdirSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import type { RankdApp } from '../app/define-app.js';
import type { EntityIndex } from '../entity-index/entity-index.js';
import { ErrorCode } from '../errors/index.js';
import type { FeatureStore } from '../features/feature-store.js';
import { CliError } from './cli-error.js';
import { openInput } from './load/input.js';
import { readJsonLines } from './load/jsonl.js';
import { runLoad } from './load/run-load.js';
import { entityTarget, featureTarget, type LoadTarget } from './load/targets.js';

/** Rows per batch: the index's batch limit, as `rankd index load` defaults to. */
const BATCH_SIZE = 1000;

/** Where a project keeps its sample entities: `<entity type>.jsonl`, or the plural (`products.jsonl`). */
export const SAMPLE_ENTITY_DIR = 'data';
/** Where a project keeps its sample feature rows: `<view>.jsonl`. */
export const SAMPLE_FEATURE_DIR = join('feature-store', 'data');

/** What {@link loadSampleData} writes with: the app's declarations and the two stores. */
export interface SampleDataServices {
  readonly app: RankdApp;
  readonly index: EntityIndex;
  readonly features: FeatureStore;
}

/** One loaded file. */
export interface LoadedFile {
  /** Relative to the project. */
  readonly file: string;
  /** The entity type or feature view it went to. */
  readonly target: string;
  readonly rows: number;
}

/** What {@link loadSampleData} loaded. */
export interface SampleDataSummary {
  readonly entities: LoadedFile[];
  readonly features: LoadedFile[];
}

interface Job {
  readonly file: string;
  readonly shown: string;
  readonly target: string;
  readonly load: LoadTarget<unknown>;
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

function entityJob(services: SampleDataServices, file: string, shown: string): Job {
  const name = basename(file, '.jsonl');
  const type = services.app.entityTypes.get(name) ?? services.app.entityTypes.get(name.replace(/s$/, ''));
  if (type === undefined) {
    throw new CliError(
      `${shown}: the app has no entity type ${name}; name the file after one of ${known(services.app.entityTypes.keys())}`,
      ErrorCode.INPUT_INVALID,
    );
  }
  return { file, shown, target: type.name, load: entityTarget(services.index, type, undefined) };
}

function featureJob(services: SampleDataServices, file: string, shown: string): Job {
  const name = basename(file, '.jsonl');
  const view = services.app.featureViews.get(name);
  if (view === undefined) {
    throw new CliError(
      `${shown}: the app has no feature view ${name}; it has ${known(services.app.featureViews.keys())}`,
      ErrorCode.INPUT_INVALID,
    );
  }
  return {
    file,
    shown,
    target: view.name,
    load: featureTarget(view, services.features) as LoadTarget<unknown>,
  };
}

/** Loads one file with the code of `rankd index load` / `rankd features load`; stops at a bad row. */
async function run(job: Job): Promise<number> {
  const input = await openInput(job.file, 'jsonl');
  const report = await runLoad(
    readJsonLines(input.chunks),
    job.load,
    { batchSize: BATCH_SIZE, onError: 'stop', dryRun: false },
    { badRow: () => undefined, progress: () => undefined },
  );
  if (report.stopped)
    throw new CliError(
      `${job.shown} line ${report.stopped.line}: ${report.stopped.reason}`,
      ErrorCode.INPUT_INVALID,
    );
  if (report.writeFailure) {
    const { firstLine, lastLine, reason } = report.writeFailure;
    throw new CliError(`${job.shown} lines ${firstLine}-${lastLine} could not be written: ${reason}`);
  }
  return report.written;
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
  // Every file name is checked before anything is written: a misnamed file fails the whole load.
  const entityJobs = entityFiles.map((file) => entityJob(services, file, relative(projectDir, file)));
  const featureJobs = featureFiles.map((file) => featureJob(services, file, relative(projectDir, file)));
  const summary: SampleDataSummary = { entities: [], features: [] };
  for (const job of entityJobs)
    summary.entities.push({ file: job.shown, target: job.target, rows: await run(job) });
  for (const job of featureJobs)
    summary.features.push({ file: job.shown, target: job.target, rows: await run(job) });
  return summary;
}
