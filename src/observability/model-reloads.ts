/** Told of each model reload: the model's name and the outcome (e.g. `reloaded`, `failed`, `unchanged`). */
type ModelReloadListener = (model: string, result: string) => void;

/**
 * Shared through the global object, like the request context: a model defined in an app module
 * may come from a second copy of rankd (the built package) while the server runs from source,
 * and its reloads must still reach the server's metrics.
 */
const LISTENERS_KEY = Symbol.for('rankd.modelReloadListeners');
const globals = globalThis as Record<symbol, unknown>;
globals[LISTENERS_KEY] ??= new Set<ModelReloadListener>();
const listeners = globals[LISTENERS_KEY] as Set<ModelReloadListener>;

/**
 * Reports that `model` was reloaded (or tried to be), once per attempt, whatever started it: every
 * server in the process counts it in `rankd_model_reloads_total{model,result}`. A listener that
 * throws is ignored: a reload never fails because of metrics.
 *
 * @example
 * import { reportModelReload } from 'rankd/server';
 * // In a model of your own that reloads its parameters.
 * reportModelReload('custom', 'reloaded');
 */
export function reportModelReload(model: string, result: string): void {
  for (const listener of listeners) {
    try {
      listener(model, result);
    } catch {
      // Metrics must not break a reload.
    }
  }
}

/** Listens to {@link reportModelReload}; returns the function that stops listening. */
export function onModelReload(listener: ModelReloadListener): () => void {
  listeners.add(listener);
  return () => {
    listeners.delete(listener);
  };
}
