import type { RankdRequest } from '../features/define-realtime-features.js';

/** The default `user_page_size` of a ranking request (as the ranking pipeline applies it). */
const DEFAULT_USER_PAGE_SIZE = 10;

function positiveInteger(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : undefined;
}

function nonNegativeInteger(value: unknown): number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : 0;
}

/**
 * Where the user pages of a ranking request fall on its candidate list: their size, and the
 * position of the first page boundary (`offset`, below `size`).
 *
 * The returned page starts at user_page × user_page_size − candidate_page × candidate_page_size
 * (docs/reference/ranking.md), so every user page of this candidate page starts at that same offset modulo
 * the page size: 0 unless candidate_page_size is not a multiple of user_page_size. Defaults are
 * those of the ranking pipeline.
 */
export function pageLayout(request: RankdRequest): { size: number; offset: number } {
  const size = positiveInteger(request.user_page_size) ?? DEFAULT_USER_PAGE_SIZE;
  const count = Array.isArray(request.candidates) ? request.candidates.length : 0;
  const candidatePageSize = positiveInteger(request.candidate_page_size) ?? Math.max(count, size);
  const start =
    nonNegativeInteger(request.user_page) * size -
    nonNegativeInteger(request.candidate_page) * candidatePageSize;
  return { size, offset: ((start % size) + size) % size };
}
