import { ValidationError } from '../errors/index.js';
import type { RankdRequest } from './component.js';

/** The pagination fields of a ranking request, after defaults. */
export interface Pagination {
  user_page_size: number;
  user_page: number;
  candidate_page_size: number;
  candidate_page: number;
}

/** The default `user_page_size` of a ranking request. */
export const DEFAULT_USER_PAGE_SIZE = 10;

function positiveInteger(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : undefined;
}

function nonNegativeInteger(value: unknown): number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : 0;
}

/**
 * A ranking request's pagination after defaults. By default the candidates sent form one page (at
 * least a user page, so the default sizes never clash). Business logic reads it from the request as
 * the pipeline does; a value the request schema would refuse reads as its default.
 */
export function paginationOf(request: RankdRequest): Pagination {
  const userPageSize = positiveInteger(request.user_page_size) ?? DEFAULT_USER_PAGE_SIZE;
  const sent = Array.isArray(request.candidates) ? request.candidates.length : 0;
  return {
    user_page_size: userPageSize,
    user_page: nonNegativeInteger(request.user_page),
    candidate_page_size: positiveInteger(request.candidate_page_size) ?? Math.max(sent, userPageSize),
    candidate_page: nonNegativeInteger(request.candidate_page),
  };
}

/**
 * The slice `[start, end)` of the ranked candidates to return. As the predecessor computed it,
 * `user_page` counts from the first candidate overall while the request carries candidate page
 * `candidate_page`: start = user_page × user_page_size − candidate_page × candidate_page_size.
 * Integer arithmetic here (the predecessor went through floats), and every impossible
 * combination is a 422 naming the field, where the predecessor could answer 500.
 */
export function pageSlice(candidateCount: number, p: Pagination): [start: number, end: number] {
  if (candidateCount === 0) return [0, 0];
  if (p.user_page_size > p.candidate_page_size) {
    throw ValidationError.at(
      ['body', 'user_page_size'],
      `user_page_size (${p.user_page_size}) is greater than candidate_page_size (${p.candidate_page_size})`,
      'page_size',
    );
  }
  if (candidateCount > p.candidate_page_size) {
    throw ValidationError.at(
      ['body', 'candidates'],
      `${candidateCount} candidates were sent but candidate_page_size is ${p.candidate_page_size}`,
      'page_size',
    );
  }
  const firstOnPage = p.candidate_page * p.candidate_page_size;
  const start = p.user_page * p.user_page_size - firstOnPage;
  if (start < 0) {
    throw ValidationError.at(
      ['body', 'user_page'],
      `user_page ${p.user_page} is before candidate_page ${p.candidate_page}: with these page sizes its first ` +
        `user page is ${Math.floor(firstOnPage / p.user_page_size)}`,
      'page_range',
    );
  }
  if (start >= candidateCount) {
    throw ValidationError.at(
      ['body', 'user_page'],
      `user_page ${p.user_page} is past the ${candidateCount} candidates of candidate_page ${p.candidate_page}`,
      'page_range',
    );
  }
  return [start, Math.min(start + p.user_page_size, candidateCount)];
}

/**
 * Where the user pages of a ranking request fall on its candidate list: their size, and the
 * position of the first page boundary (`offset`, below `size`). Every user page of this candidate
 * page starts at the same offset modulo the page size (see {@link pageSlice}): 0 unless
 * candidate_page_size is not a multiple of user_page_size.
 */
export function pageLayout(request: RankdRequest): { size: number; offset: number } {
  const { user_page_size: size, user_page, candidate_page, candidate_page_size } = paginationOf(request);
  const start = user_page * size - candidate_page * candidate_page_size;
  return { size, offset: ((start % size) + size) % size };
}
