import { ModelNotFoundError } from '../errors/index.js';
import { type FileModel, isFileModel, type ReloadResult } from '../models/file-model.js';
import { allComponents } from '../request/component.js';
import type { RankdApp } from './define-app.js';

/** The app's file-backed models, those inside chains and fallbacks included; each once. */
function fileModelsOf(app: RankdApp): FileModel[] {
  return allComponents(app.pipelines.flatMap(({ pipeline }) => pipeline.components)).filter(isFileModel);
}

/**
 * Reloads the app's file models named `name`, or all of them, concurrently (each model's own
 * reloads stay in order). Throws {@link ModelNotFoundError} for a name no file model has.
 */
export async function reloadModels(app: RankdApp, name?: string): Promise<ReloadResult[]> {
  const models = fileModelsOf(app);
  const chosen = name === undefined ? models : models.filter((model) => model.name === name);
  if (name !== undefined && chosen.length === 0)
    throw new ModelNotFoundError(name, [...new Set(models.map((model) => model.name))]);
  return Promise.all(chosen.map((model) => model.reload()));
}
