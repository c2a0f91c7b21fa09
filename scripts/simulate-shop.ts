/**
 * `node --import tsx scripts/simulate-shop.ts [--requests N] [--fresh N] [--seed S] [--eta E]
 * [--force] [--no-debias] [--via interleave [--challenger worse | --serving worse]]`: the whole training loop on a
 * simulated shop (scripts/shop/). Hidden shoppers search, rankd (`rankd run` of the template app,
 * in a project of its own) ranks, they click, add to cart and buy following a utility rankd never
 * sees, with position bias
 * (examination 1/(k+1)^η, k from 0), and the shop posts their feedback. Then `rankd train
 * --promote` (the real CLI, a child process) estimates the position bias, trains, and the gate
 * decides; when it promotes, the server reloads the model. `rankd evaluate` judges the trained trees
 * with their leaves negated (the gate's negative control). The same fresh visits are ranked before
 * and after: NDCG@8 against the hidden utility, and clicks per page. `--via interleave`: the
 * promotion waits for the shoppers instead (see simulateInterleavePromotion); `--challenger
 * worse`: the model tried is trained on the clicks of shoppers of the opposite taste; `--serving
 * worse`: such a model serves first, and the one tried is trained on the shop's own shoppers. Needs
 * `npm run build`.
 */

import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { seededRandom } from '../src/training/random.js';
import { negateLeaves } from './shop/model-edits.js';
import { type CommandRun, type FeedbackCounts, type ModelFigures, ShopSession } from './shop/session.js';
import { ContraryShoppers } from './shop/shoppers.js';

/** What a simulation run is given. */
export interface SimulationOptions {
  /** Requests logged before training. @defaultValue 3000 */
  requests?: number;
  /** Fresh visits ranked by each model afterwards. @defaultValue 1000 */
  fresh?: number;
  seed?: number;
  /** The shoppers' position bias. @defaultValue 1 */
  eta?: number;
  /** `rankd train --force`: install the model whatever the gate says. */
  force?: boolean;
  /** False: `rankd train --no-debias`. */
  debias?: boolean;
  /** Told each line of progress and of the CLI's output. */
  log?: (line: string) => void;
}

/** What a simulation run measured, and the CLI's output. */
export interface SimulationResult {
  handWeighted: ModelFigures;
  /** The trained model's figures when it was promoted (or forced in). */
  trained: ModelFigures | undefined;
  train: CommandRun;
  /** `rankd evaluate` of the trained model with its leaves negated. */
  negated: CommandRun;
  /** The examination curve `rankd train` estimated, and the shoppers' true one. */
  curve: { estimated: number[] | null; truth: number[] };
  feedback: FeedbackCounts;
}

/** A line of figures of one model. */
export function figuresLine(name: string, figures: ModelFigures): string {
  return `${name.padEnd(16)} NDCG@8 ${figures.ndcg.toFixed(3)}   clicks per page ${figures.clicksPerPage.toFixed(3)}`;
}

/**
 * A run's shop, opened: its seeded draws, the number of requests to log first (said in the log), and
 * who clicks on those (`contrary`: shoppers of the opposite taste, said too).
 */
async function openShop(options: {
  seed?: number;
  eta?: number;
  requests?: number;
  contrary?: boolean;
  log?: (line: string) => void;
}) {
  const log = options.log ?? (() => undefined);
  const seed = options.seed ?? 7;
  const eta = options.eta ?? 1;
  const session = await ShopSession.open({ seed, eta, log });
  const requests = options.requests ?? 3000;
  const contrary = options.contrary === true;
  log(
    `logging ${requests} requests of simulated shoppers${contrary ? ' of the opposite taste' : ''} (position bias η = ${eta})`,
  );
  const trainedOn = contrary ? new ContraryShoppers(seed, eta) : session.shoppers;
  return { log, random: seededRandom(seed), session, requests, eta, trainedOn };
}

/** Runs the loop; see the module's comment. */
export async function simulateShop(options: SimulationOptions = {}): Promise<SimulationResult> {
  const { log, random, session, requests } = await openShop(options);
  try {
    const heldOut = Math.round(requests * 0.8);
    const { marks, end } = await session.logVisits(session.shop.visits(requests, 'train', random), random, [
      heldOut,
    ]);
    const fresh = session.shop.visits(options.fresh ?? 1000, 'fresh', random);
    const handWeighted = await session.measure(fresh, 'hand');
    const args = ['train', '--since', '1h', '--until', end, '--promote', '--no-progress'];
    if (options.force === true) args.push('--force');
    if (options.debias === false) args.push('--no-debias');
    const train = await session.cli(args);
    for (const line of `${train.stdout}${train.stderr}`.trim().split('\n')) log(line);
    if (train.code !== 0 && train.code !== 3)
      throw new Error(`rankd train failed (${train.code}): ${train.stderr}`);
    // The negative control: the trained trees with their leaves negated, judged on the held-out requests.
    negateLeaves(
      join(session.project, 'models/ranker-candidate.json'),
      join(session.project, 'models/negated.json'),
    );
    const since = marks.get(heldOut) as string;
    const negated = await session.cli([
      'evaluate',
      '--model',
      'models/negated.json',
      '--since',
      since,
      '--until',
      end,
      '--bias-since',
      '1h',
    ]);
    for (const line of `${negated.stdout}${negated.stderr}`.trim().split('\n')) log(line);
    let trained: ModelFigures | undefined;
    if (/^promoted: /m.test(train.stdout)) {
      const { createHash } = await import('node:crypto');
      await session.waitForModel(
        createHash('sha256').update(session.read('models/ranker.json')).digest('hex'),
      );
      trained = await session.measure(fresh, 'trained');
    }
    const report = JSON.parse(session.read('models/ranker-candidate.report.json')) as {
      positionBias: { curve: number[] | null };
    };
    const estimated = report.positionBias.curve;
    const truth = Array.from({ length: 8 }, (_, k) => session.shoppers.examination(k));
    log(`feedback logged: ${JSON.stringify(session.feedback)}`);
    log(`true examination: ${truth.map((x) => x.toFixed(2)).join(' ')}`);
    log(figuresLine('hand-weighted', handWeighted));
    if (trained !== undefined) log(figuresLine('trained', trained));
    return { handWeighted, trained, train, negated, curve: { estimated, truth }, feedback: session.feedback };
  } finally {
    await session.close();
  }
}

/** What a run of promotion by interleaving is given. */
export interface InterleaveOptions {
  /** Requests logged before training. @defaultValue 3000 */
  requests?: number;
  /** Fresh visits ranked by each model to measure the truth. @defaultValue 1000 */
  fresh?: number;
  /** Visits between two `rankd promotion decide`. @defaultValue 500 */
  round?: number;
  /** The most rounds before giving up (the time limit is not reached in a run). @defaultValue 20 */
  rounds?: number;
  seed?: number;
  eta?: number;
  /** `rankd train --force`: start the trial even when the gate finds the model worse. */
  force?: boolean;
  /**
   * `worse`: the requests logged before training are clicked by shoppers of the opposite taste
   * (ContraryShoppers), so the model `rankd train` makes, and the trial tries on the shop's own
   * shoppers, ranks backwards for them. @defaultValue 'trained'
   */
  challenger?: 'trained' | 'worse';
  /**
   * `worse`: before the trial, a model trained on the clicks of shoppers of the opposite taste is
   * promoted (`--force`) and serves, so the candidate, trained on the shop's own shoppers under
   * it, is the better one: the trial must promote it. @defaultValue 'hand' (the template's model)
   */
  serving?: 'hand' | 'worse';
  log?: (line: string) => void;
}

/** What a run of promotion by interleaving did. */
export interface InterleaveResult {
  train: CommandRun;
  /** Each `rankd promotion decide`, in order; the last one decided, unless it ran out of rounds. */
  decides: CommandRun[];
  /** Visits served while the promotion ran. */
  visits: number;
  /** The serving model's figures on the fresh visits: the hand-weighted one's, unless `serving: 'worse'`. */
  handWeighted: ModelFigures;
  /** The candidate's figures on the same fresh visits (served by hand for the measure, whatever was decided). */
  candidate: ModelFigures;
  /** Whether the server serves the candidate at the end. */
  promoted: boolean;
}

/**
 * Promotion by interleaving on the simulated shop: log requests under the hand-weighted model,
 * `rankd train --promote --via interleave` (the candidate becomes the challenger of the template's
 * `ranker_challenge` interleaving, a fifth of requests), then shoppers keep visiting and, after
 * every round of visits, `rankd promotion decide` looks; once it decides, the result is what the
 * server serves. The truth: both models measured on the same fresh visits (NDCG@8 against the
 * hidden utility). With `challenger: 'worse'` only the logs the model is trained on change: the
 * trial's shoppers are the shop's own, who find it worse.
 */
export async function simulateInterleavePromotion(
  options: InterleaveOptions = {},
): Promise<InterleaveResult> {
  const { log, random, session, requests, eta, trainedOn } = await openShop({
    ...options,
    contrary: options.challenger === 'worse',
  });
  try {
    let since = '1h';
    if (options.serving === 'worse')
      since = await serveContraryModel(session, requests, random, eta, options);
    const logged = session.shop.visits(requests, 'train', random);
    const { end } = await session.logVisits(logged, random, [], trainedOn);
    const fresh = session.shop.visits(options.fresh ?? 1000, 'fresh', random);
    const handWeighted = await session.measure(fresh, 'hand');
    const args = [
      'train',
      '--since',
      since,
      '--until',
      end,
      '--promote',
      '--via',
      'interleave',
      '--no-progress',
    ];
    if (options.force === true) args.push('--force');
    const train = await session.cli(args);
    for (const line of `${train.stdout}${train.stderr}`.trim().split('\n')) log(line);
    if (train.code !== 0)
      throw new Error(`rankd train --via interleave did not start a promotion (${train.code})`);
    await session.waitForInterleaving('ranker_challenge');
    const decides: CommandRun[] = [];
    const round = options.round ?? 500;
    let visits = 0;
    log(`$ rankd promotion decide    (after each round of ${round} visits)`);
    for (let r = 1; r <= (options.rounds ?? 20); r++) {
      await session.logVisits(session.shop.visits(round, `trial-${r}`, random), random);
      visits += round;
      const decide = await session.cli(['promotion', 'decide'], true);
      decides.push(decide);
      if (decide.code !== 4) {
        for (const line of `${decide.stdout}${decide.stderr}`.trim().split('\n')) log(line);
        break;
      }
      log(
        decide.stdout
          .trim()
          .replace(/^promotion of \S+: running since .*? at the latest: /, `after ${visits} visits: `),
      );
    }
    const last = decides.at(-1);
    const promoted = last?.code === 0;
    const candidateFile = 'models/ranker-candidate.json';
    const { createHash } = await import('node:crypto');
    if (promoted)
      await session.waitForModel(createHash('sha256').update(session.read(candidateFile)).digest('hex'));
    // The truth, whatever was decided: the candidate served to the same fresh visits.
    if (!promoted) await session.install(candidateFile);
    const candidate = await session.measure(fresh, 'candidate');
    log(figuresLine(options.serving === 'worse' ? 'serving' : 'hand-weighted', handWeighted));
    log(figuresLine('candidate', candidate));
    const change = candidate.ndcg - handWeighted.ndcg;
    log(
      `decision after ${visits} visits: ${promoted ? 'promoted' : last?.code === 3 ? 'withdrawn' : 'undecided'}; ` +
        `true NDCG@8 change of the candidate ${change >= 0 ? '+' : '−'}${Math.abs(change).toFixed(3)}`,
    );
    return { train, decides, visits, handWeighted, candidate, promoted };
  } finally {
    await session.close();
  }
}

/**
 * Logs `requests` visits clicked by shoppers of the opposite taste, then `rankd train --promote
 * --force` installs the model trained on them, which then serves; resolves with when those logs
 * ended, for the next training to start there.
 */
async function serveContraryModel(
  session: ShopSession,
  requests: number,
  random: () => number,
  eta: number,
  options: { seed?: number; log?: (line: string) => void },
): Promise<string> {
  options.log?.(`serving first: a model trained on ${requests} requests of shoppers of the opposite taste`);
  const contrary = new ContraryShoppers(options.seed ?? 7, eta);
  const { end } = await session.logVisits(
    session.shop.visits(requests, 'contrary', random),
    random,
    [],
    contrary,
  );
  const train = await session.cli([
    'train',
    '--since',
    '1h',
    '--until',
    end,
    '--promote',
    '--force',
    '--no-progress',
  ]);
  if (train.code !== 0)
    throw new Error(`rankd train --force did not install the contrary model (${train.code})`);
  const { createHash } = await import('node:crypto');
  await session.waitForModel(createHash('sha256').update(session.read('models/ranker.json')).digest('hex'));
  return end;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      requests: { type: 'string' },
      fresh: { type: 'string' },
      seed: { type: 'string' },
      eta: { type: 'string' },
      force: { type: 'boolean' },
      'no-debias': { type: 'boolean' },
      via: { type: 'string', default: 'logs' },
      challenger: { type: 'string', default: 'trained' },
      serving: { type: 'string', default: 'hand' },
    },
  });
  if (values.serving !== 'hand' && values.serving !== 'worse')
    throw new Error(`--serving ${values.serving}: expected hand or worse`);
  if (values.serving === 'worse' && values.via !== 'interleave')
    throw new Error('--serving worse: a challenger is tried --via interleave only');
  if (values.serving === 'worse' && values.challenger === 'worse')
    throw new Error('--serving worse and --challenger worse: one or the other');
  if (values.challenger !== 'trained' && values.challenger !== 'worse')
    throw new Error(`--challenger ${values.challenger}: expected trained or worse`);
  if (values.challenger === 'worse' && values.via !== 'interleave')
    throw new Error('--challenger worse: a challenger is tried --via interleave only');
  if (values.via === 'interleave')
    await simulateInterleavePromotion({
      ...(values.requests ? { requests: Number(values.requests) } : {}),
      ...(values.fresh ? { fresh: Number(values.fresh) } : {}),
      ...(values.seed ? { seed: Number(values.seed) } : {}),
      ...(values.eta ? { eta: Number(values.eta) } : {}),
      ...(values.force ? { force: true } : {}),
      challenger: values.challenger,
      serving: values.serving,
      log: (line) => console.log(line),
    });
  else
    await simulateShop({
      ...(values.requests ? { requests: Number(values.requests) } : {}),
      ...(values.fresh ? { fresh: Number(values.fresh) } : {}),
      ...(values.seed ? { seed: Number(values.seed) } : {}),
      ...(values.eta ? { eta: Number(values.eta) } : {}),
      ...(values.force ? { force: true } : {}),
      ...(values['no-debias'] ? { debias: false } : {}),
      log: (line) => console.log(line),
    });
}
