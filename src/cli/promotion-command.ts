import { relative } from 'node:path';
import type { Command } from 'commander';
import type { RankdApp } from '../app/define-app.js';
import {
  lookAtPromotion,
  type Promotion,
  type PromotionDecision,
  type PromotionState,
  PromotionStore,
} from '../app/promotion.js';
import { loadConfig, readEnvFiles } from '../config/index.js';
import { ErrorCode, RedisUnavailableError } from '../errors/index.js';
import { eventRedisOf, streamMaxAgeMs } from '../events/create-sink.js';
import { INTERLEAVED, type InterleavingExperiment } from '../experiments/define-interleaving.js';
import { type FileModel, isFileModel } from '../models/file-model.js';
import type { RedisConnection } from '../redis/connection.js';
import { RedisKeys } from '../redis/keys.js';
import { CliError, type Log } from './cli-error.js';
import { formatCount } from './load/progress.js';
import { projectRootOf, resolveAppPath } from './load-app.js';
import { applyDecision, candidateHash } from './promotion-files.js';
import { writeWhole } from './write-whole.js';

/** `rankd promotion decide` exits with this while a promotion runs undecided (0 promoted, 3 withdrawn, 1 error). */
export const UNDECIDED_EXIT_CODE = 4;
/** … and with this when it withdrew the candidate (as `rankd train` when not better). */
export const WITHDRAWN_EXIT_CODE = 3;

/** The options of the `rankd promotion` commands, as commander parses them. */
export interface PromotionCommandOptions {
  app?: string;
  experiment?: string;
  json?: boolean;
}

/** What a command of promotions is given: the project, and its Redis. */
interface Session {
  readonly root: string;
  readonly redis: RedisConnection;
  readonly keys: RedisKeys;
  readonly store: PromotionStore;
}

async function withSession<T>(root: string, cwd: string, run: (session: Session) => Promise<T>) {
  const config = loadConfig(readEnvFiles(cwd));
  const redis = eventRedisOf(config);
  try {
    if (!(await redis.waitUntilReady(config.REDIS_COMMAND_TIMEOUT_MS + 1000)))
      throw new RedisUnavailableError(redis.address);
    const keys = new RedisKeys(config.PROJECT_NAME, config.INDEX_VERSION);
    return await run({ root, redis, keys, store: new PromotionStore(redis, keys) });
  } finally {
    await redis.close();
  }
}

const iso = (ms: number) => new Date(ms).toISOString();
const ratio = (x: number) => (x >= 1e4 ? x.toExponential(2) : x.toFixed(2));

function decisionLine(state: PromotionState, decision: PromotionDecision): string {
  const why =
    decision.reason === 'challenger_wins'
      ? 'the challenger won'
      : decision.reason === 'challenger_loses'
        ? 'the challenger lost'
        : decision.reason === 'time_limit'
          ? 'undecided at the time limit'
          : 'withdrawn by hand';
  return (
    `promotion of ${state.experiment}: ${decision.outcome} (${why}) at ${iso(decision.decidedMs)}: ` +
    `${formatCount(decision.impressions)} interleaved pages, challenger wins / losses / ties ` +
    `${formatCount(decision.wins)} / ${formatCount(decision.losses)} / ${formatCount(decision.ties)}, ` +
    `likelihood ratio ${ratio(decision.likelihoodRatio)}`
  );
}

function runningLine(state: PromotionState, look: Awaited<ReturnType<typeof lookAtPromotion>>): string {
  const { report, test } = look;
  return (
    `promotion of ${state.experiment}: running since ${iso(state.startedMs)}, until ${iso(state.deadlineMs)} at the latest: ` +
    `${formatCount(report.impressions)} interleaved pages, challenger wins / losses / ties ` +
    `${formatCount(report.wins)} / ${formatCount(report.losses)} / ${formatCount(report.ties)}, ` +
    `likelihood ratio ${ratio(test.likelihoodRatio)} (decides at ${ratio(1 / test.alpha)}); undecided`
  );
}

function choose(promotions: Promotion[], experiment: string | undefined): Promotion[] {
  if (experiment === undefined) return promotions;
  const chosen = promotions.filter((p) => p.state.experiment === experiment);
  if (chosen.length === 0)
    throw new CliError(`no promotion of experiment ${experiment} was ever started`, ErrorCode.CLI_USAGE);
  return chosen;
}

/** What one promotion came to in `rankd promotion decide`. */
export interface PromotionResult {
  readonly state: PromotionState;
  readonly decision: PromotionDecision | undefined;
  /** Whether this run recorded the decision (false: an earlier run or another process did). */
  readonly decidedHere: boolean;
  /** What was done to the files, in words. */
  readonly files: string | undefined;
}

/**
 * `rankd promotion decide`: for each promotion (or `--experiment`'s), the decision recorded if it
 * has one, else a look now (the interleaving report and the sequential test) and, when that
 * decides, the decision recorded once (the first process to record it wins; every other reads
 * it); then the files made to match it (idempotent). Exit code: 4 while one is undecided, else 3
 * if one was withdrawn, else 0.
 */
export async function runPromotionDecide(
  options: PromotionCommandOptions,
  output: { log: Log },
  cwd = process.cwd(),
  nowMs = Date.now(),
): Promise<{ results: PromotionResult[]; exitCode: number }> {
  return withSession(
    projectRootOf(resolveAppPath(options.app, cwd)),
    cwd,
    async ({ root, redis, keys, store }) => {
      const promotions = choose(await store.latest(), options.experiment);
      if (promotions.length === 0) output.log('no promotion was ever started');
      const results: PromotionResult[] = [];
      for (const { state, decision: recorded } of promotions) {
        let decision = recorded;
        let decidedHere = false;
        if (decision === undefined) {
          const look = await lookAtPromotion(redis, keys, state, nowMs);
          if (look.decision === undefined) {
            output.log(runningLine(state, look));
            results.push({ state, decision: undefined, decidedHere: false, files: undefined });
            continue;
          }
          const held = await store.decide(state.id, look.decision);
          decision = held.decision;
          decidedHere = held.mine;
        }
        output.log(`${decisionLine(state, decision)}${decidedHere ? '' : ' (decided before)'}`);
        const files = await applyDecision(root, state, decision);
        output.log(`  ${files}`);
        results.push({ state, decision, decidedHere, files });
      }
      if (options.json === true) output.log(JSON.stringify(results, null, 2));
      const exitCode = results.some((r) => r.decision === undefined)
        ? UNDECIDED_EXIT_CODE
        : results.some((r) => r.decision?.outcome === 'withdrawn')
          ? WITHDRAWN_EXIT_CODE
          : 0;
      return { results, exitCode };
    },
  );
}

/** `rankd promotion status`: each promotion's decision, or where a running one stands; decides nothing. */
export async function runPromotionStatus(
  options: PromotionCommandOptions,
  output: { log: Log },
  cwd = process.cwd(),
): Promise<void> {
  await withSession(projectRootOf(resolveAppPath(options.app, cwd)), cwd, async ({ redis, keys, store }) => {
    const promotions = choose(await store.latest(), options.experiment);
    if (promotions.length === 0) output.log('no promotion was ever started');
    const now = Date.now();
    for (const { state, decision } of promotions) {
      if (decision !== undefined) output.log(decisionLine(state, decision));
      else output.log(runningLine(state, await lookAtPromotion(redis, keys, state, now)));
    }
    if (options.json === true) output.log(JSON.stringify(promotions, null, 2));
  });
}

/**
 * `rankd promotion withdraw --experiment ID`: records a withdrawal unless the promotion is decided
 * already (then its decision stands), and makes the files match; nothing started, nothing to do.
 */
export async function runPromotionWithdraw(
  options: PromotionCommandOptions,
  output: { log: Log },
  cwd = process.cwd(),
): Promise<void> {
  if (options.experiment === undefined)
    throw new CliError('name the experiment: --experiment ID', ErrorCode.CLI_USAGE);
  await withSession(projectRootOf(resolveAppPath(options.app, cwd)), cwd, async ({ root, store }) => {
    const promotions = (await store.latest()).filter((p) => p.state.experiment === options.experiment);
    if (promotions.length === 0)
      output.log(`no promotion of ${options.experiment} was ever started: nothing to withdraw`);
    for (const { state, decision: recorded } of promotions) {
      const now = Date.now();
      const decision =
        recorded ??
        (
          await store.decide(state.id, {
            outcome: 'withdrawn',
            reason: 'withdrawn_by_hand',
            decidedMs: now,
            impressions: 0,
            wins: 0,
            losses: 0,
            ties: 0,
            likelihoodRatio: 1,
            alwaysValidPValue: 1,
          })
        ).decision;
      output.log(decisionLine(state, decision));
      output.log(`  ${await applyDecision(root, state, decision)}`);
    }
  });
}

/** The interleaving a trained stage can be the challenger of: its challenger a GBDT file model with `whenMissing`. */
export function promotableInterleaving(
  app: RankdApp,
  pipeline: string,
  experimentId: string | undefined,
): { experiment: InterleavingExperiment; challenger: FileModel } {
  const planned = app.pipelines.find((p) => p.pipeline.name === pipeline);
  const found = (planned?.pipeline.experiments ?? []).flatMap((e) => {
    const rankers = (e as Partial<InterleavingExperiment>).rankers;
    const model = rankers?.challenger.kind === 'model' ? rankers.challenger.model : undefined;
    if (!isFileModel(model) || model.format !== 'gbdt' || model.whenMissing === undefined) return [];
    if (experimentId !== undefined && e.id !== experimentId) return [];
    return [{ experiment: e as InterleavingExperiment, challenger: model }];
  });
  const first = found[0];
  if (first === undefined)
    throw new CliError(
      `pipeline ${pipeline} has no interleaving${experimentId === undefined ? '' : ` ${experimentId}`} whose challenger is a gbdtModel with whenMissing: declare one (docs/guides/train-a-model.md) to promote --via interleave`,
      ErrorCode.CLI_USAGE,
    );
  if (found.length > 1)
    throw new CliError(
      `pipeline ${pipeline} has several interleavings a trained model can challenge (${found.map((f) => f.experiment.id).join(', ')}): choose one with --experiment`,
      ErrorCode.CLI_USAGE,
    );
  return first;
}

/** What starting a promotion is given by `rankd train --promote --via interleave`. */
export interface PromotionStart {
  readonly appPath: string;
  readonly pipeline: string;
  readonly experiment: InterleavingExperiment;
  readonly challenger: FileModel;
  readonly serving: FileModel;
  readonly modelText: string;
  readonly timeLimitMs: number;
  readonly windowMs: number;
  readonly feedbackTypes: readonly string[];
}

/**
 * Starts a promotion: records it in Redis (refused while one of the experiment runs), then writes
 * the candidate as the challenger's file, which servers load: from then on the experiment's share
 * of requests is interleaved. Returns the lines to print.
 */
export async function startPromotion(start: PromotionStart, cwd = process.cwd()): Promise<string[]> {
  const root = projectRootOf(start.appPath);
  const maxAge = streamMaxAgeMs(loadConfig(readEnvFiles(cwd)));
  // The decision reads the whole trial from the stream: none of it may be trimmed before the end.
  if (maxAge > 0 && start.timeLimitMs + start.windowMs > maxAge)
    throw new CliError(
      `--time-limit: the trial and its clicks' window (${(start.timeLimitMs + start.windowMs) / 3_600_000} h) outlast the event stream, which keeps ${maxAge / 3_600_000} h beside the index: shorten the trial, or give the events a Redis of their own (EVENTS_REDIS_URL)`,
      ErrorCode.CLI_USAGE,
    );
  return withSession(root, cwd, async ({ store }) => {
    const now = Date.now();
    const outcome = await store.start({
      experiment: start.experiment.id,
      pipeline: start.pipeline,
      startedMs: now,
      deadlineMs: now + start.timeLimitMs,
      windowMs: start.windowMs,
      feedbackTypes: start.feedbackTypes,
      challengerFile: relative(root, start.challenger.file),
      servingFile: relative(root, start.serving.file),
      candidateSha256: candidateHash(start.modelText),
    });
    if ('running' in outcome)
      throw new CliError(
        `a promotion of ${start.experiment.id} is running since ${iso(outcome.running.state.startedMs)}: rankd promotion decide (or withdraw --experiment ${start.experiment.id}) ends it first`,
        ErrorCode.CLI_USAGE,
      );
    const state = outcome.started;
    await writeWhole(start.challenger.file, start.modelText);
    const share = start.experiment.variants.find((v) => v.name === INTERLEAVED)?.share ?? 0;
    return [
      `promotion started: installed as ${state.challengerFile}, the challenger of interleaving ${state.experiment} ` +
        `on ${Math.round(share * 100)}% of requests, until ${iso(state.deadlineMs)} at the latest; ` +
        '`rankd promotion decide` promotes it when it wins and withdraws it when it loses or at the time limit',
    ];
  });
}

/** Adds `rankd promotion status|decide|withdraw` to `program`. */
export function registerPromotionCommands(program: Command, output: { log: Log; warn: Log }): void {
  const promotion = program
    .command('promotion')
    .description(
      'promotions by interleaving (rankd train --promote --via interleave): status, decide, withdraw',
    );
  const common = (command: Command) =>
    command
      .option('--app <path>', 'app module (default: pipelines/main.ts, else dist/pipelines/main.js)')
      .option('--experiment <id>', 'only the promotion of this interleaving experiment')
      .option('--json', 'also print the promotions as JSON');
  common(promotion.command('status').description('each promotion: its decision, or where it stands')).action(
    (options: PromotionCommandOptions) => runPromotionStatus(options, output),
  );
  common(
    promotion
      .command('decide')
      .description('decide the running promotions that can be decided, and apply every decision')
      .addHelpText(
        'after',
        `
Looks at each running promotion: the interleaving report of its experiment since it started, and a
sequential test (mSPRT) of the challenger's wins against its losses, valid however often it is run.
When the test decides, or the time limit has passed, the decision is recorded in Redis once (the
first process to record it wins; others, and later runs, read it) and applied: a winner is copied
over the serving model's file and the challenger's file removed (servers reload both); a loser's
file is removed. Safe to run from several machines, on a timer (cron) or by hand.

Exit codes: 0 promoted (or nothing running), 3 withdrawn, 4 still undecided, 1 error.`,
      ),
  ).action(async (options: PromotionCommandOptions) => {
    const { exitCode } = await runPromotionDecide(options, output);
    process.exitCode = exitCode;
  });
  common(promotion.command('withdraw').description('withdraw a running promotion now')).action(
    (options: PromotionCommandOptions) => runPromotionWithdraw(options, output),
  );
}
