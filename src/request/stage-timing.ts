/**
 * The stages of a pipeline request, as metrics and traces name them. `hydrate` and `features`
 * overlap: the stored-feature read starts with hydration (they share the first round trip), so
 * both are timed from the start of the request and their sum exceeds the time they took together.
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
 */
export interface StageObserver {
  /** One stage of one request: its pipeline, which stage, and `performance.now()` at its start and end. */
  stage(pipeline: string, stage: PipelineStage, start: number, end: number): void;
}
