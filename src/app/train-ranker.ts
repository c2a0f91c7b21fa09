import { SkippedRows } from '../events/export/row-checks.js';
import type { TrainingRow } from '../events/export/training-join.js';
import { type FileModel, isFileModel } from '../models/file-model.js';
import { allComponents, initializeComponents } from '../request/component.js';
import {
  type FeatureImportance,
  ndcgAt,
  type TrainedModel,
  TrainingInputError,
  type TrainOptions,
  type TrainProgress,
  trainLambdaMart,
} from '../training/index.js';
import type { PlannedPipeline, RankdApp } from './define-app.js';
import { scoreLogged } from './score-logged.js';
import { datasetOf, groupByRequest, splitByTime, TrainingDataError, usableRows } from './training-data.js';

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
  ndcg: { trained: number; serving: number; servingModel: string };
  /** Trees kept (early stopping keeps those up to the best validation NDCG). */
  trees: number;
  featureImportance: FeatureImportance[];
}

/** The pipeline trained for, and its GBDT stage. */
export function gbdtStageOf(
  app: RankdApp,
  name: string | undefined,
): { planned: PlannedPipeline; stage: FileModel } {
  const candidates =
    name === undefined ? app.pipelines : app.pipelines.filter((p) => p.pipeline.name === name);
  if (candidates.length === 0)
    throw new TrainingDataError(
      `no pipeline ${JSON.stringify(name)}: the app has ${app.pipelines.map((p) => p.pipeline.name).join(', ')}`,
    );
  const withStage = candidates.flatMap((planned) => {
    const stage = allComponents(planned.pipeline.components).find(
      (c): c is FileModel => isFileModel(c) && c.format === 'gbdt',
    );
    return stage === undefined ? [] : [{ planned, stage }];
  });
  const found = withStage[0];
  if (found === undefined)
    throw new TrainingDataError(
      `${name === undefined ? 'no pipeline of the app has' : `pipeline ${name} has no`} GBDT stage: its model (or a part of it) must be a gbdtModel, whose file rankd train writes`,
    );
  if (name === undefined && withStage.length > 1)
    throw new TrainingDataError(
      `several pipelines have a GBDT stage (${withStage.map((w) => w.planned.pipeline.name).join(', ')}): choose one with --pipeline`,
    );
  return found;
}

/**
 * Builds the data set of a pipeline's GBDT stage from logged impressions, splits it by time,
 * trains, and compares NDCG@k (k = the page size) on the validation requests with the model the
 * stage serves now, scored from the same logged inputs.
 */
export async function trainRanker(options: TrainRankerOptions): Promise<TrainRankerResult> {
  const { planned, stage } = gbdtStageOf(options.app, options.pipeline);
  const pipeline = planned.pipeline;
  const rows = options.rows.filter((row) => row.api_source === planned.route);
  const features = [...stage.inputs];
  const skipped = options.skipped ?? new SkippedRows();
  const usable = usableRows(rows, stage.features, options.source, skipped);
  const requests = groupByRequest(usable);
  const { train, validation } = splitByTime(requests, options.validationShare ?? 0.2);
  const trainSet = datasetOf(train, features);
  const validationSet = datasetOf(validation, features);
  const k = Math.max(...requests.map((r) => r.length));
  let model: TrainedModel;
  try {
    model = trainLambdaMart(trainSet, { ...options.training, ndcgAt: k }, validationSet, options.onProgress);
  } catch (error) {
    if (error instanceof TrainingInputError) throw new TrainingDataError(error.message);
    throw error;
  }
  const trained = ndcgAt(
    model.predict(validationSet.values, validationSet.rows),
    validationSet.labels,
    validationSet.groups,
    k,
  );
  const candidate = pipeline.slots.find((slot) => slot.field === 'candidates')?.type;
  if (candidate === undefined) throw new TrainingDataError(`pipeline ${pipeline.name} ranks no candidates`);
  await initializeComponents([stage], { log: { info: () => undefined, warn: () => undefined } });
  const servingScores = await scoreLogged(stage, pipeline.name, candidate, validation);
  const serving = ndcgAt(servingScores, validationSet.labels, validationSet.groups, k);
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
        labelled: usable.filter((row) => row.label > 0).length,
        train: count(train),
        validation: count(validation),
        leftOut: Object.fromEntries(skipped.reasons()),
      },
      k,
      ndcg: { trained, serving, servingModel: `${stage.name}@${stage.version ?? '-'}` },
      trees: model.bestIteration + 1,
      featureImportance: model.featureImportance(),
    },
  };
}
