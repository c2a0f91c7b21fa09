/** The shapes of rankd's answers that the console reads (docs/explain.md, the OpenAPI document). */

/** Where a model input came from. */
export type InputSource = 'stored' | 'realtime' | 'default' | 'missing';

/** What the model did for one candidate. */
export interface ModelExplanation {
  name: string;
  score: number;
  margin: number;
  bias: number;
  available: boolean;
  reason?: string;
  contributions: Record<string, number> | null;
  inputs: Record<string, { value: unknown; source: InputSource }>;
  stages?: ModelExplanation[];
  /** Present when another model scored in this one's place (a file model's `whenMissing`). */
  fallback?: { model: string; reason: string };
}

/** What one business-logic step did to one candidate. */
export interface StepTrace {
  step: string;
  action: string;
  description: string;
  score_before: number;
  score_after: number;
  position_before: number;
  position_after: number;
}

/** One candidate of the returned page. */
export interface RankedCandidate {
  candidate_id: string | number;
  ranked_score: number;
  explanation?: { model: ModelExplanation; business_logic: StepTrace[]; model_position: number };
}

/** A ranking answer, with `explain: true`. */
export interface RankingResponse {
  ranked_candidates: RankedCandidate[];
  explanation?: {
    variants: Record<string, string>;
    overrides_applied?: Record<string, unknown>;
    stage_ms: Record<string, number>;
    dropped: Array<{ id: string | number; step: string; reason: string }>;
  };
}

/** `GET /console/app.json`: what the OpenAPI document does not say. */
export interface AppMetadata {
  app: string;
  entity_types: EntityTypeInfo[];
  feature_views: Array<{ name: string; entity_types: string[] }>;
  /** Per pipeline route, the models `overrides.model` accepts. */
  pipelines: Array<{ route: string; models: string[] }>;
}

/** An entity type as `/console/app.json` describes it. */
export interface EntityTypeInfo {
  name: string;
  id_field: string;
  /** The field that names an entity to a person; absent when the type declares no text field. */
  title_field?: string;
}

/** `GET /console/sample-ids`'s answer: a few ids of one type found in the index. */
export interface SampleIdsResponse {
  entity_type: string;
  ids: string[];
}

/** `POST /api/v1/entities/get`'s answer. */
export interface EntityGetResponse {
  entity_type: string;
  entities: Record<string, Record<string, unknown>>;
}

/** `POST /api/v1/features/get`'s answer. */
export interface FeatureGetResponse {
  results: Array<{
    entity_id: unknown;
    values: Record<string, unknown>;
    defaulted: string[];
    views: Record<string, { state: string; event_timestamp?: string; reason?: string; from_cache?: boolean }>;
  }>;
}
