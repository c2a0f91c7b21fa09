import type { EntityType } from '../entities/define-entity.js';
import { TrainingInputError } from '../errors/index.js';
import { SkippedRows } from '../events/export/row-checks.js';
import type { TrainingRow } from '../events/export/training-join.js';
import type { Model } from '../models/define-model.js';
import { type FileModel, isFileModel } from '../models/file-model.js';
import { allComponents, initializeComponents } from '../request/component.js';
import type { PlannedPipeline, RankdApp } from './define-app.js';
import { scoreLogged } from './score-logged.js';
import { groupByRequest, usableRows } from './training-data.js';

/** The pipeline trained for, and its GBDT stage. */
export function gbdtStageOf(
  app: RankdApp,
  name: string | undefined,
): { planned: PlannedPipeline; stage: FileModel } {
  const candidates =
    name === undefined ? app.pipelines : app.pipelines.filter((p) => p.pipeline.name === name);
  if (candidates.length === 0)
    throw new TrainingInputError(
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
    throw new TrainingInputError(
      `${name === undefined ? 'no pipeline of the app has' : `pipeline ${name} has no`} GBDT stage: its model (or a part of it) must be a gbdtModel, whose file rankd train writes`,
    );
  if (name === undefined && withStage.length > 1)
    throw new TrainingInputError(
      `several pipelines have a GBDT stage (${withStage.map((w) => w.planned.pipeline.name).join(', ')}): choose one with --pipeline`,
    );
  return found;
}

/** A pipeline's logged requests, as `rankd train` and `rankd evaluate` read them. */
export interface LoggedRequests {
  readonly planned: PlannedPipeline;
  /** The pipeline's GBDT stage: what is trained, the serving model compared with. */
  readonly stage: FileModel;
  /** The entity type the pipeline ranks. */
  readonly candidate: EntityType;
  /** Requests with logged inputs, by time; each one's rows by position. */
  readonly requests: TrainingRow[][];
  /** Impressions of the pipeline's requests, and how many got feedback graded above 0. */
  readonly impressions: number;
  readonly labelled: number;
}

/**
 * The logged rows of the pipeline with a GBDT stage (`name`, or the only one) that the stage can
 * use (the others counted in `skipped` by reason), grouped by request; throws a
 * {@link TrainingInputError} saying what is missing.
 */
export function loggedRequestsOf(
  app: RankdApp,
  name: string | undefined,
  all: readonly TrainingRow[],
  source: string,
  skipped: SkippedRows = new SkippedRows(),
): LoggedRequests {
  const { planned, stage } = gbdtStageOf(app, name);
  const rows = all.filter((row) => row.api_source === planned.route);
  const usable = usableRows(rows, stage.features, source, skipped);
  const candidate = planned.pipeline.slots.find((slot) => slot.field === 'candidates')?.type;
  if (candidate === undefined)
    throw new TrainingInputError(`pipeline ${planned.pipeline.name} ranks no candidates`);
  return {
    planned,
    stage,
    candidate,
    requests: groupByRequest(usable),
    impressions: rows.length,
    labelled: usable.filter((row) => row.label > 0).length,
  };
}

/** Loads `model` (quietly) and scores the logged requests with it, as `scoreLogged` does. */
export async function scoreRequests(
  logged: LoggedRequests,
  model: Model,
  requests: readonly TrainingRow[][] = logged.requests,
): Promise<Float64Array> {
  await initializeComponents([model], { log: { info: () => undefined, warn: () => undefined } });
  return scoreLogged(model, logged.planned.pipeline.name, logged.candidate, requests);
}
