/**
 * Promotion by interleaving: its state in Redis, and the one decision each promotion gets
 * (docs/reference/experiments.md, "Promotion by interleaving"). The files it moves are the CLI's
 * (src/cli/promotion-files.ts).
 * @module
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { streamEvents } from '../events/export/event-sources.js';
import { type InterleavingReport, interleavingReport } from '../experiments/interleaving-report.js';
import { type SequentialTestResult, sequentialTest } from '../experiments/sequential-test.js';
import type { RedisConnection } from '../redis/connection.js';
import type { RedisKeys } from '../redis/keys.js';

/** A promotion, as `rankd train --promote --via interleave` started it. Written once. */
export interface PromotionState {
  /** Unique: a later promotion of the same experiment has another id, and its own decision. */
  readonly id: string;
  /** The interleaving experiment whose challenger the candidate is. */
  readonly experiment: string;
  readonly pipeline: string;
  /** Pages from this time (ms) on count. */
  readonly startedMs: number;
  /** After this time (ms), a promotion still undecided is withdrawn. */
  readonly deadlineMs: number;
  /** How long after a page its clicks count. */
  readonly windowMs: number;
  readonly feedbackTypes: readonly string[];
  /** The challenger's model file, relative to the app's project: the candidate while it runs. */
  readonly challengerFile: string;
  /** The serving model's file, relative to the app's project: where a winner is installed. */
  readonly servingFile: string;
  /** SHA-256 of the candidate's file. */
  readonly candidateSha256: string;
}

/** Why a promotion ended as it did. */
export type PromotionReason = 'challenger_wins' | 'challenger_loses' | 'time_limit' | 'withdrawn_by_hand';

/** The one decision of a promotion, recorded once (HSETNX): every later look reads it. */
export interface PromotionDecision {
  readonly promotionId: string;
  /** `promoted`: the candidate serves; `withdrawn`: it does not. */
  readonly outcome: 'promoted' | 'withdrawn';
  readonly reason: PromotionReason;
  readonly decidedMs: number;
  /** The figures the decision was made on. */
  readonly impressions: number;
  readonly wins: number;
  readonly losses: number;
  readonly ties: number;
  readonly likelihoodRatio: number;
  readonly alwaysValidPValue: number;
  /** The process that made it, and the call: `host:pid:random`. */
  readonly decidedBy: string;
}

/** A promotion and its decision, if it has one. */
export interface Promotion {
  readonly state: PromotionState;
  readonly decision: PromotionDecision | undefined;
}

/**
 * Starts a promotion unless one of the same experiment is running (has no decision): the check
 * and the write are one step, so two `rankd train --via interleave` cannot both start one.
 * Returns the id of the running promotion that refused it, or nothing when it started.
 */
const START = `
local current = redis.call('HGET', KEYS[1], 'current:' .. ARGV[1])
if current and redis.call('HEXISTS', KEYS[1], 'decision:' .. current) == 0 then return current end
redis.call('HSET', KEYS[1], 'state:' .. ARGV[2], ARGV[3], 'current:' .. ARGV[1], ARGV[2])
return false`;

/** Who makes a decision, as it names them: this process, and the call (two calls of one process differ). */
const decider = () => `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;

/** The promotions of one project, in the hash `RedisKeys.promotions()` of `redis`. */
export class PromotionStore {
  readonly #redis: RedisConnection;
  readonly #key: string;

  constructor(redis: RedisConnection, keys: RedisKeys) {
    this.#redis = redis;
    this.#key = keys.promotions();
  }

  /** Records a new promotion, or returns the running one that stops it. */
  async start(
    state: Omit<PromotionState, 'id'>,
  ): Promise<{ started: PromotionState } | { running: Promotion }> {
    const started: PromotionState = { id: randomUUID(), ...state };
    const refused = await this.#redis.evalOnKey(this.#key, START, [
      state.experiment,
      started.id,
      JSON.stringify(started),
    ]);
    if (refused === null || refused === undefined) return { started };
    const running = await this.byId(String(refused));
    if (running === undefined) throw new Error(`promotion ${String(refused)} has no state`);
    return { running };
  }

  /** The promotion of id `id`. */
  async byId(id: string): Promise<Promotion | undefined> {
    const [state, decision] = await this.#redis.getFields(this.#key, [`state:${id}`, `decision:${id}`]);
    if (state === null || state === undefined) return undefined;
    return {
      state: JSON.parse(state) as PromotionState,
      decision: decision == null ? undefined : (JSON.parse(decision) as PromotionDecision),
    };
  }

  /** The latest promotion of each experiment (running or decided), by experiment id. */
  async latest(): Promise<Promotion[]> {
    const fields = await this.#redis.getAllFields(this.#key);
    const out: Promotion[] = [];
    for (const [field, id] of Object.entries(fields)) {
      if (!field.startsWith('current:')) continue;
      const state = fields[`state:${id}`];
      if (state === undefined) continue;
      const decision = fields[`decision:${id}`];
      out.push({
        state: JSON.parse(state) as PromotionState,
        decision: decision === undefined ? undefined : (JSON.parse(decision) as PromotionDecision),
      });
    }
    return out.sort((a, b) => a.state.experiment.localeCompare(b.state.experiment));
  }

  /**
   * Records `decision` as promotion `id`'s unless it has one already (HSETNX), and returns the
   * decision that holds: this one, or the one another process (or an earlier run) recorded first.
   */
  async decide(
    id: string,
    decision: Omit<PromotionDecision, 'promotionId' | 'decidedBy'>,
  ): Promise<{ decision: PromotionDecision; mine: boolean }> {
    const mine: PromotionDecision = { promotionId: id, ...decision, decidedBy: decider() };
    await this.#redis.setFieldIfAbsent(this.#key, `decision:${id}`, JSON.stringify(mine));
    const [stored] = await this.#redis.getFields(this.#key, [`decision:${id}`]);
    if (stored == null) throw new Error(`promotion ${id}: its decision was not recorded`);
    const held = JSON.parse(stored) as PromotionDecision;
    return { decision: held, mine: held.decidedBy === mine.decidedBy };
  }
}

/** What a look at a running promotion finds: the report, the sequential test and what it means now. */
export interface PromotionLook {
  readonly report: InterleavingReport;
  readonly test: SequentialTestResult;
  /** The decision to record now, or undefined while it must go on. */
  readonly decision: Omit<PromotionDecision, 'promotionId' | 'decidedBy'> | undefined;
}

/**
 * Looks at a running promotion at time `nowMs`: the interleaving report of its experiment from
 * its start (the event stream of `redis`, read up to now), and the sequential test of its wins
 * against its losses. The challenger wins or loses when the test decides; past the deadline,
 * undecided means withdrawn (`time_limit`). The same events give the same answer in any process.
 */
export async function lookAtPromotion(
  redis: RedisConnection,
  keys: RedisKeys,
  state: PromotionState,
  nowMs: number,
  testOptions: { alpha?: number; mixture?: number } = {},
): Promise<PromotionLook> {
  const untilMs = Math.min(nowMs, state.deadlineMs);
  const options = {
    experimentId: state.experiment,
    sinceMs: state.startedMs,
    untilMs,
    windowMs: state.windowMs,
    feedbackTypes: state.feedbackTypes,
  };
  const readUntil = Math.min(untilMs + state.windowMs, nowMs);
  const report = await interleavingReport(
    streamEvents(redis, keys.events(), state.startedMs, readUntil),
    options,
  );
  const test = sequentialTest(report.wins, report.losses, testOptions);
  const figures = {
    decidedMs: nowMs,
    impressions: report.impressions,
    wins: report.wins,
    losses: report.losses,
    ties: report.ties,
    likelihoodRatio: test.likelihoodRatio,
    alwaysValidPValue: test.alwaysValidPValue,
  };
  let decision: PromotionLook['decision'];
  if (test.decision === 'challenger_wins')
    decision = { ...figures, outcome: 'promoted', reason: 'challenger_wins' };
  else if (test.decision === 'challenger_loses')
    decision = { ...figures, outcome: 'withdrawn', reason: 'challenger_loses' };
  else if (nowMs >= state.deadlineMs) decision = { ...figures, outcome: 'withdrawn', reason: 'time_limit' };
  return { report, test, decision };
}
