import { createContext } from 'preact';
import type { AppMetadata } from './types.js';

/**
 * `/console/app.json` for every view that needs it (titles, the model list) without passing it
 * down through views that do not; undefined until it has loaded.
 */
export const AppMeta = createContext<AppMetadata | undefined>(undefined);

/** The models a pipeline's `overrides.model` accepts, as the app says. */
export function modelsOf(meta: AppMetadata | undefined, route: string): string[] {
  return meta?.pipelines?.find((p) => p.route === route)?.models ?? [];
}
