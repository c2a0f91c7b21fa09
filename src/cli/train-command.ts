import { dirname, relative, resolve } from 'node:path';
import type { Command } from 'commander';
import { gbdtStageOf } from '../app/logged-requests.js';
import type { TrainRankerResult } from '../app/train-ranker.js';
import { ErrorCode, TrainingInputError } from '../errors/index.js';
import { parseDuration } from '../events/export/time-range.js';
import type { TrainOptions, TrainProgress } from '../training/index.js';
import { CliError, type Log } from './cli-error.js';
import { loadApp, projectRootOf, resolveAppPath } from './load-app.js';
import { loggedRows } from './logged-rows.js';
import { numberFlag } from './options.js';
import { promotableInterleaving, startPromotion } from './promotion-command.js';
import {
  comparisonLine,
  gateOptions,
  NOT_BETTER_EXIT_CODE,
  notBetterReason,
  positionBiasLine,
} from './promotion-gate.js';
import { writeWhole } from './write-whole.js';

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
  /** Default: models/ranker-candidate.json of the app's project. */
  out?: string;
  validation: string;
  promote?: boolean;
  /** How `--promote` decides: `logs` (the offline gate, now) or `interleave` (an online trial). */
  via: string;
  /** With `--via interleave`: the interleaving experiment, when the pipeline has several. */
  experiment?: string;
  /** With `--via interleave`: how long the trial may run before it is withdrawn undecided. */
  timeLimit: string;
  force?: boolean;
  /** False with `--no-debias`: clicks as logged, not weighted by 1/examination. */
  debias: boolean;
  maxWeight?: string;
  confidence?: string;
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
  /** With `--via interleave`: the challenger file installed, when the trial started. */
  readonly challenger: string | undefined;
  /** 0: better (or promoted with --force); 3: not better. */
  readonly exitCode: number;
}

const HELP = `
Builds a learning-to-rank data set from the logged impressions of a pipeline (the event stream from
--since, or a file of --from rows written by rankd events export --format jsonl), one group per
request, labelled by feedback (purchase 3 > add_to_cart 2 > click 1 > 0; --grades). The latest
--validation share of the requests is held out. It estimates from the logs how often users look
at each position, and trains the pipeline's GBDT stage on the rest with LambdaMART, each click
weighted by 1/that (at most --max-weight; --no-debias: clicks as logged). Then both the new model
and the model the stage serves now re-rank the held-out pages from their logged inputs; the gate
compares them position-corrected, with a bootstrap interval of the difference. Writes the model
(XGBoost JSON) to --out (default: models/ranker-candidate.json in the app's project) and a report
next to it (.report.json). --promote installs it as the stage's file, which running servers
reload, if the interval says it is better (or with --force). Model files resolve against the
app's project: the nearest directory above the app module holding a package.json.

--promote --via interleave waits for users instead: unless the gate finds the model worse (or with
--force), it is installed as the challenger of the pipeline's interleaving experiment (a gbdtModel
with whenMissing as its challenger), which then serves its share of requests interleaved, and the
promotion is recorded in Redis. rankd promotion decide promotes it when a sequential test says it
wins, and withdraws it when it loses or after --time-limit (docs/guides/train-a-model.md).

Exit codes: 0 better (or promoted, or the trial started), 3 not better (worse or inconclusive:
nothing installed), 1 error.`;

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

/** The trainer's options from the command line; what is not given keeps the trainer's default. */
function trainingOptions(options: TrainCommandOptions): TrainOptions {
  const number = numberFlag;
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

/** The default `--out`: next to the stage's file, in the app's project. */
const DEFAULT_OUT = 'models/ranker-candidate.json';

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
  const gate = gateOptions(options);
  if (options.via !== 'logs' && options.via !== 'interleave')
    throw new CliError(`--via ${options.via}: expected logs or interleave`, ErrorCode.CLI_USAGE);
  const interleave = options.via === 'interleave';
  if (interleave && options.promote !== true)
    throw new CliError('--via interleave says how to promote: give --promote too', ErrorCode.CLI_USAGE);
  const timeLimitMs = parseDuration(options.timeLimit);
  if (timeLimitMs === undefined || timeLimitMs <= 0)
    throw new CliError(
      `--time-limit ${options.timeLimit}: expected a duration such as 7d`,
      ErrorCode.CLI_USAGE,
    );
  const windowMs = parseDuration(options.window) ?? 0;
  const appPath = resolveAppPath(options.app, cwd);
  const app = await loadApp(appPath);
  const { trainRanker } = await import('../app/train-ranker.js');
  let trial: ReturnType<typeof promotableInterleaving> | undefined;
  if (interleave) {
    try {
      const { planned, stage } = gbdtStageOf(app, options.pipeline);
      trial = promotableInterleaving(app, planned.pipeline.name, options.experiment);
      if (trial.challenger.file === stage.file)
        throw new CliError(
          `interleaving ${trial.experiment.id}: its challenger's file is the serving model's (${stage.file})`,
          ErrorCode.CLI_USAGE,
        );
    } catch (error) {
      await app.close();
      if (error instanceof TrainingInputError) throw new CliError(error.message, ErrorCode.INPUT_INVALID);
      throw error;
    }
  }
  const { rows, what, skipped } = await loggedRows(options, cwd);
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
      debias: options.debias,
      ...gate,
      onProgress: progressOf(output.progress ?? process.stderr, options.progress),
    });
  } catch (error) {
    if (error instanceof TrainingInputError) throw new CliError(error.message, ErrorCode.INPUT_INVALID);
    throw error;
  } finally {
    await app.close();
  }
  const { report, stage } = result;
  const modelFile =
    options.out === undefined ? resolve(projectRootOf(appPath), DEFAULT_OUT) : resolve(cwd, options.out);
  const shown = (path: string) => relative(cwd, path) || path;
  if (modelFile === stage.file && options.promote !== true)
    throw new CliError(
      `--out ${options.out} is the file ${stage.name} serves: write elsewhere, or use --promote to install it after the comparison`,
      ErrorCode.CLI_USAGE,
    );
  const reportFile = modelFile.replace(/(\.json)?$/, '.report.json');
  const modelText = result.model.toXGBoostJsonText();
  await writeWhole(modelFile, modelText);
  await writeWhole(reportFile, `${JSON.stringify(report, null, 2)}\n`);
  output.log(
    `data: ${report.data.rows} impressions of ${report.data.requests} requests (${report.data.labelled} with feedback); ` +
      `validation: the latest ${report.data.validation.requests} requests` +
      `${skipped.total === 0 ? '' : `; ${skipped.describe('impressions')}`}`,
  );
  output.log(positionBiasLine(report.positionBias));
  output.log(
    report.debiased
      ? `training: each click weighted by 1/examination of its position (at most ${report.maxWeight})`
      : `training: clicks as logged${options.debias === false ? ' (--no-debias)' : ''}`,
  );
  output.log(`wrote ${shown(modelFile)} and ${reportFile.slice(dirname(modelFile).length + 1)}`);
  const better = report.gate.verdict === 'better';
  output.log(comparisonLine(`gate on the ${report.gate.pages} validation requests`, 'trained', report.gate));
  let promoted: string | undefined;
  let challenger: string | undefined;
  if (trial !== undefined && (report.gate.verdict !== 'worse' || options.force === true)) {
    const lines = await startPromotion(
      {
        appPath,
        pipeline: result.pipeline,
        experiment: trial.experiment,
        challenger: trial.challenger,
        serving: stage,
        modelText,
        timeLimitMs,
        windowMs,
        feedbackTypes: ['click'],
      },
      cwd,
    );
    challenger = trial.challenger.file;
    for (const line of lines) output.log(line);
  } else if (trial !== undefined) {
    output.warn(
      `rankd: not tried: the gate finds the trained model worse than the serving one: ${notBetterReason(report.gate)} (--force tries it anyway)`,
    );
  } else if (options.promote === true && (better || options.force === true)) {
    if (modelFile !== stage.file) await writeWhole(stage.file, modelText);
    promoted = stage.file;
    output.log(
      `promoted: installed as ${shown(stage.file)}${better ? '' : ' (--force)'}; running servers reload it`,
    );
  } else if (options.promote === true) {
    output.warn(
      `rankd: not promoted: the trained model is not better than the serving one: ${notBetterReason(report.gate)} (--force installs it anyway)`,
    );
  }
  const started = challenger !== undefined;
  const exitCode = better || promoted !== undefined || started ? 0 : NOT_BETTER_EXIT_CODE;
  return { ...result, modelFile, reportFile, promoted, challenger, exitCode };
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
    .option(
      '--out <file>',
      "where the model is written (XGBoost JSON; default: the project's models/ranker-candidate.json)",
    )
    .option('--validation <share>', 'share of the latest requests held out for validation', '0.2')
    .option('--promote', "install the model as the GBDT stage's file if the gate finds it better")
    .option(
      '--via <how>',
      'with --promote: logs (the gate decides now) or interleave (an online trial decides: rankd promotion decide)',
      'logs',
    )
    .option(
      '--experiment <id>',
      'with --via interleave: the interleaving experiment (when there are several)',
    )
    .option(
      '--time-limit <duration>',
      'with --via interleave: withdraw the candidate if still undecided after this (within the day the stream keeps beside the index)',
      '23h',
    )
    .option(
      '--force',
      'with --promote: install it even when it is not (--via interleave: try it even when worse)',
    )
    .option('--no-debias', 'train on clicks as logged, not weighted by 1/examination of their position')
    .option('--max-weight <x>', 'the most a click weighs (1/examination, clipped; default 10)')
    .option('--confidence <share>', "the gate's interval (default 0.95)")
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
      const result = await runTrain(options, output);
      process.exitCode = result.exitCode;
    });
}
