/**
 * The stages of a pipeline request, as metrics and traces name them. `hydrate` and `features`
 * overlap: the stored-feature read starts with hydration (they share the first round trip), so
 * both are timed from the start of the request and their sum exceeds the time they took together.
 *
 * @example
 * ```ts
 * import type { PipelineStage } from 'rankd/server';
 *
 * const stages: PipelineStage[] = ['hydrate', 'features', 'realtime_features', 'model', 'business_logic', 'paginate'];
 * console.log(stages.join(' → '));
 * ```
 */
export type PipelineStage =
  | 'hydrate'
  | 'features'
  | 'realtime_features'
  | 'model'
  | 'business_logic'
  | 'paginate';

/** Every stage, in the order a ranking request runs them. */
export const PIPELINE_STAGES: readonly PipelineStage[] = [
  'hydrate',
  'features',
  'realtime_features',
  'model',
  'business_logic',
  'paginate',
];

/**
 * Told when a stage of a request ends; the server's metrics and tracing implement it. Times are
 * `performance.now()` readings (ms), so an observer can make a span after the fact at no cost
 * to requests nobody traces.
 *
 * @example
 * ```ts
 * import type { StageObserver } from 'rankd/server';
 *
 * // Receives each stage's start and end (performance.now() ms) of every request it observes.
 * const slowStages: StageObserver = {
 *   stage(pipeline, stage, start, end) {
 *     if (end - start > 50) console.warn(`${pipeline}: ${stage} took ${(end - start).toFixed(1)} ms`);
 *   },
 * };
 * slowStages.stage('MyRankingPipeline', 'model', 0, 80);
 * ```
 */
export interface StageObserver {
  /** One stage of one request: its pipeline, which stage, and `performance.now()` at its start and end. */
  stage(pipeline: string, stage: PipelineStage, start: number, end: number): void;
}
