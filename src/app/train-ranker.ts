import { SkippedRows } from '../events/export/row-checks.js';
import type { TrainingRow } from '../events/export/training-join.js';
import type { FileModel } from '../models/file-model.js';
import type { ComparisonResult } from '../training/counterfactual-comparison.js';
import {
  datasetFromRows,
  type FeatureImportance,
  ndcgAt,
  type RankingDataset,
  splitByGroups,
  type TrainedModel,
  type TrainOptions,
  type TrainProgress,
  trainLambdaMart,
} from '../training/index.js';
import type { PositionBiasEstimate } from '../training/position-bias.js';
import type { RankdApp } from './define-app.js';
import { compareOnLogs, DEFAULT_MAX_WEIGHT, positionBiasOf, weightsOf } from './logged-comparison.js';
import { loggedRequestsOf, scoreRequests } from './logged-requests.js';
import { rankingRowsOf } from './training-data.js';

/** What {@link trainRanker} is given. */
export interface TrainRankerOptions {
  readonly app: RankdApp;
  /** The pipeline's name; may be left out when the app has one ranking pipeline with a GBDT stage. */
  readonly pipeline?: string | undefined;
  readonly rows: readonly TrainingRow[];
  /** Where the rows come from, for messages: "the event stream since …", "export.jsonl". */
  readonly source: string;
  /** How the trees are grown (`ndcgAt` is the page size, whatever is given). */
  readonly training?: TrainOptions;
  /** Share of the latest requests held out for validation. @defaultValue 0.2 */
  readonly validationShare?: number;
  /**
   * Weight clicks by the inverse of their position's estimated examination (when the logs give an
   * estimate); false trains on the clicks as logged. @defaultValue true
   */
  readonly debias?: boolean;
  /** The most a click's weight may be (1/examination, clipped). @defaultValue 10 */
  readonly maxWeight?: number;
  /** The confidence of the gate's interval. @defaultValue 0.95 */
  readonly confidence?: number;
  readonly onProgress?: (progress: TrainProgress) => void;
  /** Rows already left out while reading (invalid ones); those this stage cannot use are added. */
  readonly skipped?: SkippedRows;
}

/** What training gave: the model, its file's text, and the report written next to it. */
export interface TrainRankerResult {
  readonly model: TrainedModel;
  /** The stage the model is for: its file is where `--promote` installs it. */
  readonly stage: FileModel;
  readonly pipeline: string;
  readonly report: TrainingReport;
}

/** The report `rankd train` writes next to the model (JSON). */
export interface TrainingReport {
  pipeline: string;
  stage: string;
  features: string[];
  data: {
    requests: number;
    rows: number;
    labelled: number;
    train: { requests: number; rows: number };
    validation: { requests: number; rows: number };
    /** Rows left out, by reason: invalid, logged for other model inputs, past a request's page. */
    leftOut: Record<string, number>;
  };
  /** k of NDCG@k: the page size, the most impressions a logged request has. */
  k: number;
  /** Validation NDCG@k of the clicks as logged (not position-corrected: it favours the serving model). */
  ndcg: { trained: number; serving: number; servingModel: string };
  /** The examination curve estimated from the logs, relative to the top position. */
  positionBias: {
    curve: number[] | null;
    /** Standard error of each position's log estimate (null where not estimated). */
    logStandardErrors: Array<number | null>;
    estimatedPositions: number;
    contexts: number;
    impressions: number;
    reason: string | null;
  };
  /** Whether clicks were weighted by 1/examination (at most `maxWeight`). */
  debiased: boolean;
  maxWeight: number;
  /** The promotion gate: position-corrected DCG share of both models on the validation requests. */
  gate: ComparisonResult & { servingModel: string; positionCorrected: boolean };
  /** Trees kept (early stopping keeps those up to the best validation NDCG). */
  trees: number;
  featureImportance: FeatureImportance[];
}

/** The report's account of a position-bias estimate. */
export function positionBiasReport(bias: PositionBiasEstimate): TrainingReport['positionBias'] {
  return {
    curve: bias.curve === undefined ? null : [...bias.curve],
    logStandardErrors: bias.logStandardErrors.map((e) => (Number.isFinite(e) ? e : null)),
    estimatedPositions: bias.estimated,
    contexts: bias.contexts,
    impressions: bias.impressions,
    reason: bias.reason ?? null,
  };
}

/**
 * Builds the data set of a pipeline's GBDT stage from logged impressions, splits it by time,
 * estimates the position bias, trains (clicks weighted by 1/examination unless `debias` is
 * false), and compares the model with the one the stage serves now on the validation requests,
 * both scored from the same logged inputs: the position-corrected gate, and NDCG@k as logged.
 */
export async function trainRanker(options: TrainRankerOptions): Promise<TrainRankerResult> {
  const skipped = options.skipped ?? new SkippedRows();
  const logged = loggedRequestsOf(options.app, options.pipeline, options.rows, options.source, skipped);
  const { stage, requests } = logged;
  const pipeline = logged.planned.pipeline;
  const features = [...stage.inputs];
  const bias = positionBiasOf(requests);
  const maxWeight = options.maxWeight ?? DEFAULT_MAX_WEIGHT;
  const debiased = options.debias !== false && bias.curve !== undefined;
  // Requests are in time order: the split by query group holds out the latest.
  const dataset: RankingDataset = datasetFromRows(features, rankingRowsOf(requests));
  const { train: trainSet, validation: validationSet } = splitByGroups(
    debiased ? { ...dataset, weights: weightsOf(requests, bias, maxWeight) } : dataset,
    options.validationShare ?? 0.2,
  );
  const train = requests.slice(0, trainSet.groups.length);
  const validation = requests.slice(trainSet.groups.length);
  const k = Math.max(...requests.map((r) => r.length));
  const model = trainLambdaMart(
    trainSet,
    { ...options.training, ndcgAt: k },
    validationSet,
    options.onProgress,
  );
  const trainedScores = model.predict(validationSet.values, validationSet.rows);
  const trained = ndcgAt(trainedScores, validationSet.labels, validationSet.groups, k);
  const servingScores = await scoreRequests(logged, stage, validation);
  const serving = ndcgAt(servingScores, validationSet.labels, validationSet.groups, k);
  const servingModel = `${stage.name}@${stage.version ?? '-'}`;
  const gate: ComparisonResult = compareOnLogs(
    { requests: validation, candidate: trainedScores, serving: servingScores, bias, maxWeight },
    options.confidence === undefined ? {} : { confidence: options.confidence },
  );
  const count = (groups: TrainingRow[][]) => ({
    requests: groups.length,
    rows: groups.reduce((n, g) => n + g.length, 0),
  });
  return {
    model,
    stage,
    pipeline: pipeline.name,
    report: {
      pipeline: pipeline.name,
      stage: stage.name,
      features,
      data: {
        requests: requests.length,
        rows: trainSet.rows + validationSet.rows,
        labelled: logged.labelled,
        train: count(train),
        validation: count(validation),
        leftOut: Object.fromEntries(skipped.reasons()),
      },
      k,
      ndcg: { trained, serving, servingModel },
      positionBias: positionBiasReport(bias),
      debiased,
      maxWeight,
      gate: { ...gate, servingModel, positionCorrected: bias.curve !== undefined },
      trees: model.bestIteration + 1,
      featureImportance: model.featureImportance(),
    },
  };
}
