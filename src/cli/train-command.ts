import { createReadStream } from 'node:fs';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { dirname, relative, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import type { Command } from 'commander';
import type { TrainRankerResult } from '../app/train-ranker.js';
import { TrainingDataError } from '../app/training-data.js';
import { loadConfig, readEnvFiles } from '../config/index.js';
import { ErrorCode } from '../errors/index.js';
import { rowProblem, SkippedRows } from '../events/export/row-checks.js';
import { TrainingJoin, type TrainingRow } from '../events/export/training-join.js';
import type { TrainOptions, TrainProgress } from '../training/index.js';
import { CliError, type Log } from './cli-error.js';
import { gradesOption } from './events-export.js';
import { loadApp, resolveAppPath } from './load-app.js';
import { openEventSource } from './open-event-source.js';
import { timeRangeOptions } from './time-range-options.js';

/** `rankd train`'s options, as commander parses them. */
export interface TrainCommandOptions {
  app?: string;
  pipeline?: string;
  since?: string;
  until?: string;
  window: string;
  /** Rows written by `rankd events export --format jsonl`. */
  from?: string;
  /** A JSONL event file (`EVENTS_SINK=file`) instead of the stream. */
  input?: string;
  grades?: string;
  out: string;
  validation: string;
  promote?: boolean;
  force?: boolean;
  /** False with `--no-progress`. */
  progress: boolean;
  trees?: string;
  learningRate?: string;
  maxDepth?: string;
  maxLeaves?: string;
  minDataInLeaf?: string;
  l2?: string;
  featureFraction?: string;
  earlyStopping?: string;
}

/** Where `rankd train` reports, and the trainer it uses. */
export interface TrainOutput {
  log: Log;
  warn: Log;
  /** @defaultValue `process.stderr` */
  progress?: { write(text: string): unknown; isTTY?: boolean };
}

/** What `rankd train` did. */
export interface TrainCommandResult extends TrainRankerResult {
  readonly modelFile: string;
  readonly reportFile: string;
  /** The file the model was installed as, when promoted. */
  readonly promoted: string | undefined;
}

const HELP = `
Builds a learning-to-rank data set from the logged impressions of a pipeline (the event stream from
--since, or a file of --from rows written by rankd events export --format jsonl), one group per
request, labelled by feedback (purchase 3 > add_to_cart 2 > click 1 > 0; --grades). The latest
--validation share of the requests is held out; the pipeline's GBDT stage is trained on the rest
with LambdaMART. Prints NDCG@k (k = the page size) on the held-out requests for the new model and
for the model the stage serves now (scored from the same logged inputs), writes the model (XGBoost
JSON) to --out and a report next to it (.report.json). --promote installs it as the stage's file,
which running servers reload, if it beats the serving model (or with --force).`;

/** The logged rows of a `--from` file (JSON Lines of `rankd events export`), as they are. */
async function readRows(path: string): Promise<TrainingRow[]> {
  const rows: TrainingRow[] = [];
  const lines = createInterface({ input: createReadStream(path), crlfDelay: Number.POSITIVE_INFINITY });
  let n = 0;
  for await (const line of lines) {
    n += 1;
    if (line.trim() === '') continue;
    try {
      rows.push(JSON.parse(line) as TrainingRow);
    } catch {
      throw new CliError(
        `${path}:${n}: not a JSON row; --from reads rankd events export --format jsonl`,
        ErrorCode.INPUT_INVALID,
      );
    }
  }
  return rows;
}

/**
 * Exported rows labelled again with `--grades`, from their `clicked`, `added_to_cart` and
 * `purchased` flags (the feedback types an export keeps); as they are without it.
 */
function relabel(rows: TrainingRow[], grades: string | undefined): TrainingRow[] {
  if (grades === undefined) return rows;
  const grade = gradesOption(grades, '');
  return rows.map((row) => ({
    ...row,
    label: Math.max(
      0,
      row.clicked ? (grade.click ?? 0) : 0,
      row.added_to_cart ? (grade.add_to_cart ?? 0) : 0,
      row.purchased ? (grade.purchase ?? 0) : 0,
    ),
  }));
}

/**
 * The valid rows of a `--from` file, labelled again with `--grades` when given; the others are
 * counted by reason, as an export counts the impressions it leaves out.
 */
async function fromRows(
  from: string,
  grades: string | undefined,
  cwd: string,
): Promise<{ rows: TrainingRow[]; what: string; skipped: SkippedRows }> {
  const skipped = new SkippedRows();
  const read = (await readRows(resolve(cwd, from))).filter((row) => {
    const isObject = typeof row === 'object' && row !== null && !Array.isArray(row);
    if (!isObject) skipped.add('not a JSON object');
    return isObject;
  });
  const rows = relabel(read, grades).filter((row) => {
    const problem = rowProblem(row);
    if (problem !== undefined) skipped.add(problem);
    return problem === undefined;
  });
  return { rows, what: from, skipped };
}

/** The rows of the event stream (or an event file) joined as `rankd events export` joins them. */
async function joinedRows(
  options: TrainCommandOptions,
  cwd: string,
): Promise<{ rows: TrainingRow[]; what: string; skipped: SkippedRows }> {
  if (options.since === undefined)
    throw new CliError('give --since (the event stream) or --from (an exported file)', ErrorCode.CLI_USAGE);
  const now = Date.now();
  const { sinceMs, untilMs, windowMs } = timeRangeOptions({ ...options, since: options.since }, now);
  const config = loadConfig(readEnvFiles(cwd));
  const grades = gradesOption(options.grades, config.EVENTS_LABEL_GRADES);
  const readUntil = Math.min(untilMs + windowMs, now);
  const { source, close } = await openEventSource(config, cwd, options.input, sinceMs, readUntil);
  const what = options.input ?? `the event stream since ${new Date(sinceMs).toISOString()}`;
  try {
    const join = new TrainingJoin({ sinceMs, untilMs, windowMs, grades });
    const rows: TrainingRow[] = [];
    for await (const { timeMs, event } of source) rows.push(...join.add(timeMs, event));
    rows.push(...join.finish());
    return { rows, what, skipped: join.skipped };
  } finally {
    await close();
  }
}

/** A bar redrawn on a terminal, a line per tenth otherwise; on standard error. */
function progressOf(stream: NonNullable<TrainOutput['progress']>, enabled: boolean) {
  let lastTenth = -1;
  return ({ tree: done, trees: total, validNdcg }: TrainProgress) => {
    if (!enabled || total <= 0) return;
    const ndcg = validNdcg === undefined ? '' : `, validation NDCG ${validNdcg.toFixed(4)}`;
    const share = Math.min(1, done / total);
    if (stream.isTTY) {
      const width = 30;
      const filled = Math.round(share * width);
      stream.write(
        `\rtraining [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${done}/${total} trees${ndcg}`,
      );
      if (done >= total) stream.write('\n');
    } else {
      const tenth = Math.floor(share * 10);
      if (tenth > lastTenth) {
        lastTenth = tenth;
        stream.write(`training: ${done}/${total} trees${ndcg}\n`);
      }
    }
  };
}

/** Writes `text` to `path` by renaming a finished copy over it: a watcher never reads half a file. */
async function writeWhole(path: string, text: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const partial = `${path}.${process.pid}.partial`;
  await writeFile(partial, text);
  await rename(partial, path);
}

/** The trainer's options from the command line; what is not given keeps the trainer's default. */
function trainingOptions(options: TrainCommandOptions): TrainOptions {
  const number = (name: string, text: string | undefined) => {
    if (text === undefined) return undefined;
    const value = Number(text);
    if (!Number.isFinite(value))
      throw new CliError(`--${name} ${JSON.stringify(text)}: expected a number`, ErrorCode.CLI_USAGE);
    return value;
  };
  const picked: Record<string, number | undefined> = {
    trees: number('trees', options.trees),
    learningRate: number('learning-rate', options.learningRate),
    maxDepth: number('max-depth', options.maxDepth),
    maxLeaves: number('max-leaves', options.maxLeaves),
    minDataInLeaf: number('min-data-in-leaf', options.minDataInLeaf),
    lambdaL2: number('l2', options.l2),
    featureFraction: number('feature-fraction', options.featureFraction),
    earlyStoppingRounds: number('early-stopping', options.earlyStopping),
  };
  return Object.fromEntries(Object.entries(picked).filter(([, v]) => v !== undefined)) as TrainOptions;
}

/** `rankd train`: see {@link HELP}. */
export async function runTrain(
  options: TrainCommandOptions,
  output: TrainOutput,
  cwd = process.cwd(),
): Promise<TrainCommandResult> {
  const share = Number(options.validation);
  if (!(share > 0 && share < 1))
    throw new CliError(
      `--validation ${options.validation}: expected a share between 0 and 1`,
      ErrorCode.CLI_USAGE,
    );
  const app = await loadApp(resolveAppPath(options.app, cwd));
  const { trainRanker } = await import('../app/train-ranker.js');
  const { rows, what, skipped } =
    options.from === undefined
      ? await joinedRows(options, cwd)
      : await fromRows(options.from, options.grades, cwd);
  let result: TrainRankerResult;
  try {
    result = await trainRanker({
      app,
      pipeline: options.pipeline,
      rows,
      source: what,
      training: trainingOptions(options),
      validationShare: share,
      skipped,
      onProgress: progressOf(output.progress ?? process.stderr, options.progress),
    });
  } catch (error) {
    if (error instanceof TrainingDataError) throw new CliError(error.message, ErrorCode.INPUT_INVALID);
    throw error;
  } finally {
    await app.close();
  }
  const { report, stage } = result;
  const modelFile = resolve(cwd, options.out);
  if (modelFile === stage.file && options.promote !== true)
    throw new CliError(
      `--out ${options.out} is the file ${stage.name} serves: write elsewhere, or use --promote to install it after the comparison`,
      ErrorCode.CLI_USAGE,
    );
  const reportFile = modelFile.replace(/(\.json)?$/, '.report.json');
  const modelText = result.model.toXGBoostJsonText();
  await writeWhole(modelFile, modelText);
  await writeWhole(reportFile, `${JSON.stringify(report, null, 2)}\n`);
  const { trained, serving, servingModel } = report.ndcg;
  output.log(
    `data: ${report.data.rows} impressions of ${report.data.requests} requests (${report.data.labelled} with feedback); ` +
      `validation: the latest ${report.data.validation.requests} requests` +
      `${skipped.total === 0 ? '' : `; ${skipped.describe('impressions')}`}`,
  );
  output.log(
    `NDCG@${report.k} on validation: trained ${trained.toFixed(4)}, serving (${servingModel}) ${serving.toFixed(4)}`,
  );
  output.log(`wrote ${options.out} and ${reportFile.slice(dirname(modelFile).length + 1)}`);
  let promoted: string | undefined;
  if (options.promote === true) {
    if (trained > serving || options.force === true) {
      if (modelFile !== stage.file) await writeWhole(stage.file, modelText);
      promoted = stage.file;
      output.log(
        `promoted: installed as ${relative(cwd, stage.file)}${trained > serving ? '' : ' (--force)'}; running servers reload it`,
      );
    } else {
      throw new CliError(
        `not promoted: the trained model's NDCG@${report.k} ${trained.toFixed(4)} does not beat the serving model's ${serving.toFixed(4)} (--force installs it anyway)`,
        ErrorCode.CLI_FAILED,
      );
    }
  }
  return { ...result, modelFile, reportFile, promoted };
}

/** Adds `rankd train` to `program`. */
export function registerTrainCommand(program: Command, output: { log: Log; warn: Log }): void {
  program
    .command('train')
    .description("train a pipeline's GBDT stage on logged events and feedback; compare; promote")
    .option('--app <path>', 'app module (default: pipelines/main.ts, else dist/pipelines/main.js)')
    .option('--pipeline <name>', 'the pipeline (default: the one with a GBDT stage)')
    .option('--since <time>', 'first request time read from the event stream (ISO date, ms, or 7d ago)')
    .option('--until <time>', 'last request time (default: now)')
    .option('--window <duration>', 'how long after a request its feedback counts', '1h')
    .option('--input <file>', 'read a JSONL event file (EVENTS_SINK=file) instead of the stream')
    .option('--from <file>', 'read rows exported by rankd events export --format jsonl instead')
    .option('--grades <grades>', 'label per feedback type, e.g. purchase=3,add_to_cart=2,click=1')
    .option('--out <file>', 'where the model is written (XGBoost JSON)', 'models/ranker-candidate.json')
    .option('--validation <share>', 'share of the latest requests held out for validation', '0.2')
    .option('--promote', "install the model as the GBDT stage's file if it beats the serving model")
    .option('--force', 'with --promote: install it even when it does not')
    .option('--trees <n>', 'the most trees (default 300; early stopping on validation NDCG)')
    .option('--learning-rate <x>', 'shrinkage of each tree (default 0.1)')
    .option('--max-depth <n>', 'deepest leaf (default 6)')
    .option('--max-leaves <n>', 'most leaves per tree (default 2^max-depth)')
    .option('--min-data-in-leaf <n>', 'fewest rows in a leaf (default 20)')
    .option('--l2 <x>', 'L2 regularisation of leaf values (default 1)')
    .option('--feature-fraction <x>', 'share of features each tree may use (default 1)')
    .option('--early-stopping <n>', 'trees without validation gain before stopping; 0: off (default 20)')
    .option('--no-progress', 'no progress bar or lines')
    .addHelpText('after', HELP)
    .action(async (options: TrainCommandOptions) => {
      await runTrain(options, output);
    });
}
