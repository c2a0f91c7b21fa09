import { basename } from 'node:path';
import { ModelInvalidError, TrainingInputError } from '../errors/index.js';
import type { SkippedRows } from '../events/export/row-checks.js';
import type { TrainingRow } from '../events/export/training-join.js';
import { gbdtModel } from '../models/gbdt-model.js';
import type { RankdApp } from './define-app.js';
import { compareOnLogs, DEFAULT_MAX_WEIGHT, positionBiasOf } from './logged-comparison.js';
import { loggedRequestsOf, scoreRequests } from './logged-requests.js';
import { positionBiasReport, type TrainingReport } from './train-ranker.js';

/** What {@link evaluateModel} is given. */
export interface EvaluateModelOptions {
  readonly app: RankdApp;
  /** The pipeline's name; may be left out when one ranking pipeline has a GBDT stage. */
  readonly pipeline?: string | undefined;
  readonly rows: readonly TrainingRow[];
  /** Rows already left out while reading (invalid ones); those the stage cannot use are added. */
  readonly skipped?: SkippedRows;
  /** Where the rows come from, for messages. */
  readonly source: string;
  /** The model file to evaluate (absolute): XGBoost JSON or LightGBM text over the stage's inputs. */
  readonly modelFile: string;
  /** The most a click's weight may be. @defaultValue 10 */
  readonly maxWeight?: number;
  /** The confidence of the interval. @defaultValue 0.95 */
  readonly confidence?: number;
  /** How many of the most changed requests to give. @defaultValue 5 */
  readonly changes?: number;
  /**
   * Requests before this time (ms) only feed the position-bias estimate; those from it on are
   * judged. @defaultValue every request is judged
   */
  readonly judgedFromMs?: number;
}

/** One product whose rank the model changes: ranks from 1, as the serving model and the model rank it. */
export interface RankChange {
  readonly entityId: string;
  readonly from: number;
  readonly to: number;
}

/** A logged request the model would order differently. */
export interface RequestChange {
  readonly requestId: string;
  /** Σ |rank moved| over the page's products (Spearman's footrule). */
  readonly moved: number;
  /** Its largest moves, largest first. */
  readonly top: readonly RankChange[];
}

/** What `rankd evaluate --model` found. */
export interface ModelEvaluation {
  readonly pipeline: string;
  readonly stage: string;
  readonly data: { requests: number; impressions: number; labelled: number };
  readonly positionBias: TrainingReport['positionBias'];
  readonly gate: TrainingReport['gate'];
  /** The requests whose order the model changes most, most first. */
  readonly changes: readonly RequestChange[];
}

/** Each row's rank (from 1) when `scores` order its request; ties keep the logged order. */
function ranksOf(requests: readonly TrainingRow[][], scores: ArrayLike<number>): Int32Array {
  const ranks = new Int32Array(scores.length);
  let start = 0;
  for (const rows of requests) {
    const order = rows.map((_, i) => start + i);
    const score = (r: number) => {
      const s = scores[r] as number;
      return Number.isNaN(s) ? Number.NEGATIVE_INFINITY : s;
    };
    order.sort((a, b) => score(b) - score(a) || a - b);
    order.forEach((row, rank) => {
      ranks[row] = rank + 1;
    });
    start += rows.length;
  }
  return ranks;
}

/** The `count` requests whose order moves most from `serving`'s to `candidate`'s, with their 3 largest moves. */
function mostChanged(
  requests: readonly TrainingRow[][],
  serving: ArrayLike<number>,
  candidate: ArrayLike<number>,
  count: number,
): RequestChange[] {
  const from = ranksOf(requests, serving);
  const to = ranksOf(requests, candidate);
  const changes: RequestChange[] = [];
  let start = 0;
  for (const rows of requests) {
    const moves = rows.map((row, i) => ({
      entityId: row.entity_id,
      from: from[start + i] as number,
      to: to[start + i] as number,
    }));
    const moved = moves.reduce((sum, m) => sum + Math.abs(m.to - m.from), 0);
    if (moved > 0) {
      const top = moves
        .filter((m) => m.to !== m.from)
        .sort((a, b) => Math.abs(b.to - b.from) - Math.abs(a.to - a.from) || a.to - b.to)
        .slice(0, 3);
      changes.push({ requestId: (rows[0] as TrainingRow).request_id, moved, top });
    }
    start += rows.length;
  }
  return changes.sort((a, b) => b.moved - a.moved).slice(0, count);
}

/**
 * Compares a model file with the model a pipeline's GBDT stage serves, on logged requests: both
 * re-rank each logged page from its logged inputs, and the gate of `rankd train` (position-
 * corrected DCG share, bootstrap interval of the difference) says whether the file is better.
 * Also finds the requests whose order it would change most.
 */
export async function evaluateModel(options: EvaluateModelOptions): Promise<ModelEvaluation> {
  const all = loggedRequestsOf(options.app, options.pipeline, options.rows, options.source, options.skipped);
  const from = options.judgedFromMs;
  const judged =
    from === undefined
      ? all.requests
      : all.requests.filter((rows) => Date.parse((rows[0] as TrainingRow).timestamp) >= from);
  if (judged.length === 0)
    throw new TrainingInputError(`no request to judge: none of ${options.source} is from --since on`);
  const logged = { ...all, requests: judged };
  const { stage, requests } = logged;
  const model = gbdtModel({
    name: basename(options.modelFile),
    file: options.modelFile,
    features: stage.inputs,
    watch: false,
  });
  let candidate: Float64Array;
  try {
    candidate = await scoreRequests(logged, model);
  } catch (error) {
    if (error instanceof ModelInvalidError) throw new TrainingInputError(error.message);
    throw error;
  } finally {
    await model.dispose();
  }
  const serving = await scoreRequests(logged, stage);
  const bias = positionBiasOf(all.requests);
  const maxWeight = options.maxWeight ?? DEFAULT_MAX_WEIGHT;
  const gate = compareOnLogs(
    { requests, candidate, serving, bias, maxWeight },
    options.confidence === undefined ? {} : { confidence: options.confidence },
  );
  return {
    pipeline: logged.planned.pipeline.name,
    stage: stage.name,
    data: {
      requests: requests.length,
      impressions: requests.reduce((n, rows) => n + rows.length, 0),
      labelled: requests.reduce((n, rows) => n + rows.filter((row) => row.label > 0).length, 0),
    },
    positionBias: positionBiasReport(bias),
    gate: {
      ...gate,
      servingModel: `${stage.name}@${stage.version ?? '-'}`,
      positionCorrected: bias.curve !== undefined,
    },
    changes: mostChanged(requests, serving, candidate, options.changes ?? 5),
  };
}
