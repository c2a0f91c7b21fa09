import { postJson } from './api.js';
import type { PipelineInfo } from './openapi.js';
import type { RankingResponse } from './types.js';

/** What a run changes besides the request: `overrides` (docs/explain.md). */
export interface Overrides {
  variants?: Record<string, string>;
  skip_business_logic?: string[];
  model?: string;
}

/**
 * Sends `text` to the pipeline, with `explain: true` (when its schema has it) and `overrides`.
 * Text that is not a JSON object is sent as it is: rankd's own error then says what is wrong.
 */
export function runPipeline(
  pipeline: PipelineInfo,
  text: string,
  overrides?: Overrides,
): Promise<RankingResponse> {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return postJson<RankingResponse>(pipeline.path, text);
  }
  if (
    typeof body !== 'object' ||
    body === null ||
    Array.isArray(body) ||
    pipeline.schema.properties?.explain === undefined
  )
    return postJson<RankingResponse>(pipeline.path, body);
  const hasOverrides = overrides !== undefined && Object.keys(overrides).length > 0;
  return postJson<RankingResponse>(pipeline.path, {
    ...body,
    explain: true,
    ...(hasOverrides ? { overrides } : {}),
  });
}
