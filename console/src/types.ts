/**
 * The shapes of rankd's answers that the console reads: rankd/client's types, and what an
 * explained ranking adds to them (docs/guides/explain-a-ranking.md).
 */
import type { RankedCandidate as PlainCandidate, RankingResponse as PlainRanking } from 'rankd/client';

export type { EntityGetResponse, FeatureGetResponse } from 'rankd/client';

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

/** One candidate of the returned page, with its explanation when the request asked for one. */
export interface RankedCandidate extends PlainCandidate {
  explanation?: { model: ModelExplanation; business_logic: StepTrace[]; model_position: number };
}

/** A ranking answer, with `explain: true`. */
export interface RankingResponse extends PlainRanking {
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
