import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import type { ModelEvaluation } from '../app/evaluate-model.js';
import { ErrorCode, TrainingInputError } from '../errors/index.js';
import { CliError, type Log } from './cli-error.js';
import type { EvaluateShadowOptions } from './evaluate-shadow.js';
import { loadApp, resolveAppPath } from './load-app.js';
import { loggedRows } from './logged-rows.js';
import { comparisonLine, gateOptions, NOT_BETTER_EXIT_CODE, positionBiasLine } from './promotion-gate.js';
import { timeRangeOptions } from './time-range-options.js';

const SHADOW_HELP = `
--shadow reads the SHADOW events of the event stream (or --input): for each request a shadow model ran
on, the served model's ranking and the shadow's (docs/reference/models.md, "Shadow runs"). It prints how
often the top k (the request's page) is in another order or holds other items, the rank-biased overlap
of the two rankings (mean, median, 10th percentile), and the --top requests that differ most, with the
items that moved most explained by both models. Times: ISO 8601, ms since the epoch, or a duration
meaning that long ago (24h, 7d).`;

/** `rankd evaluate`'s options, as commander parses them. */
export interface EvaluateCommandOptions extends Omit<EvaluateShadowOptions, 'since'> {
  /** Compare the rankings of shadow runs with the served ones instead of a model file. */
  shadow?: boolean;
  app?: string;
  pipeline?: string;
  /** The model file to compare with the serving one. */
  model?: string;
  since?: string;
  until?: string;
  /** The position-bias estimate also reads the requests from this earlier time. */
  biasSince?: string;
  window: string;
  input?: string;
  from?: string;
  grades?: string;
  maxWeight?: string;
  confidence?: string;
}

/** What `rankd evaluate` did, and the exit code it ends with. */
export interface EvaluateCommandResult {
  readonly evaluation: ModelEvaluation;
  /** 0: better; 3: not better. */
  readonly exitCode: number;
}

const HELP = `
--model FILE: compares a model file (XGBoost JSON or LightGBM text over the inputs of the
pipeline's GBDT stage, in order) with the model the stage serves, on the logged requests from
--since to --until (or --from rows of rankd events export): both re-rank each logged page from
its logged inputs, and the gate of rankd train judges them, position-corrected, with a bootstrap
interval of the difference. Prints the verdict and the requests whose order the model would
change most, each with its largest moves (ranks from 1: serving → model). --bias-since T: the
position bias is estimated from the requests since T (longer history, a better estimate), the
models judged on those from --since on.

Exit codes: 0 better, 3 not better (worse or inconclusive), 1 error.`;

/** The lines of an evaluation, as the command prints them. */
export function evaluationLines(evaluation: ModelEvaluation, model: string): string[] {
  const { data, gate } = evaluation;
  const lines = [
    `data: ${data.impressions} impressions of ${data.requests} requests (${data.labelled} with feedback)`,
    positionBiasLine(evaluation.positionBias),
    comparisonLine(`gate on ${gate.pages} requests`, model, gate),
  ];
  if (evaluation.changes.length === 0) lines.push('no request would be ordered differently');
  else {
    lines.push(`requests whose order changes most (ranks: serving → ${model}):`);
    for (const change of evaluation.changes) {
      const moves = change.top.map((m) => `${m.entityId} ${m.from}→${m.to}`).join(', ');
      lines.push(`  ${change.requestId}: ${moves}`);
    }
  }
  return lines;
}

/** `rankd evaluate --model FILE`: see {@link HELP}. */
export async function runEvaluate(
  options: EvaluateCommandOptions,
  log: Log,
  cwd = process.cwd(),
): Promise<EvaluateCommandResult> {
  if (options.model === undefined)
    throw new CliError(
      'give --model <file> (a model to compare with the serving one) or --shadow',
      ErrorCode.CLI_USAGE,
    );
  const modelFile = resolve(cwd, options.model);
  if (!existsSync(modelFile))
    throw new CliError(
      `--model ${options.model}: no such file (looked at ${modelFile})`,
      ErrorCode.CLI_USAGE,
    );
  const changes = Number(options.top);
  if (!(Number.isInteger(changes) && changes >= 0))
    throw new CliError(`--top ${options.top}: expected a whole number`, ErrorCode.CLI_USAGE);
  const gate = gateOptions(options);
  let judgedFromMs: number | undefined;
  if (options.biasSince !== undefined) {
    if (options.since === undefined || options.from !== undefined)
      throw new CliError(
        '--bias-since goes with --since (the event stream), not --from',
        ErrorCode.CLI_USAGE,
      );
    judgedFromMs = timeRangeOptions({ since: options.since, window: options.window }, Date.now()).sinceMs;
  }
  const app = await loadApp(resolveAppPath(options.app, cwd));
  const { evaluateModel } = await import('../app/evaluate-model.js');
  const { rows, what, skipped } = await loggedRows(
    { ...options, since: options.biasSince ?? options.since },
    cwd,
  );
  let evaluation: ModelEvaluation;
  try {
    evaluation = await evaluateModel({
      app,
      pipeline: options.pipeline,
      rows,
      skipped,
      source: what,
      modelFile,
      changes,
      ...(judgedFromMs === undefined ? {} : { judgedFromMs }),
      ...gate,
    });
  } catch (error) {
    if (error instanceof TrainingInputError) throw new CliError(error.message, ErrorCode.INPUT_INVALID);
    throw error;
  } finally {
    await app.close();
  }
  const lines = evaluationLines(evaluation, options.model);
  if (skipped.total > 0) lines[0] += `; ${skipped.describe('impressions')}`;
  for (const line of lines) log(line);
  return { evaluation, exitCode: evaluation.gate.verdict === 'better' ? 0 : NOT_BETTER_EXIT_CODE };
}

/** Adds `rankd evaluate` to `program`. */
export function registerEvaluateCommand(program: Command, output: { log: Log; warn: Log }): void {
  program
    .command('evaluate')
    .description(
      'compare a model file (--model) or shadow runs (--shadow) with the serving model on logged traffic',
    )
    .option(
      '--model <file>',
      'the model file (XGBoost JSON or LightGBM text) to compare with the serving one',
    )
    .option('--shadow', 'compare the rankings of shadow runs with the served ones')
    .option('--app <path>', 'app module (default: pipelines/main.ts, else dist/pipelines/main.js)')
    .option('--pipeline <name>', 'the pipeline (default: the one with a GBDT stage)')
    .option('--since <time>', 'first request time read from the event stream (ISO date, ms, or 7d ago)')
    .option('--until <time>', 'last request time (default: now)')
    .option('--bias-since <time>', 'estimate the position bias from the requests since this earlier time too')
    .option('--window <duration>', 'how long after a request its feedback counts', '1h')
    .option('--input <file>', 'read a JSONL event file (EVENTS_SINK=file) instead of the stream')
    .option('--from <file>', 'read rows exported by rankd events export --format jsonl instead')
    .option('--grades <grades>', 'label per feedback type, e.g. purchase=3,add_to_cart=2,click=1')
    .option('--max-weight <x>', 'the most a click weighs (1/examination, clipped; default 10)')
    .option('--confidence <share>', "the gate's interval (default 0.95)")
    .option('--top <n>', 'how many of the most changed requests to print', '5')
    .option('--json', '--shadow: print the report as JSON')
    .addHelpText('after', HELP + SHADOW_HELP)
    .action(async (options: EvaluateCommandOptions) => {
      if (options.shadow === true) {
        const { runEvaluateShadow } = await import('./evaluate-shadow.js');
        // Shadow runs are compared over the whole stream unless told otherwise.
        await runEvaluateShadow({ ...options, since: options.since ?? '0' }, output);
        return;
      }
      const result = await runEvaluate(options, output.log);
      process.exitCode = result.exitCode;
    });
}
