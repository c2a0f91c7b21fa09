import { ValidationError } from '../errors/index.js';

/** The pagination fields of a ranking request, after defaults. */
export interface Pagination {
  user_page_size: number;
  user_page: number;
  candidate_page_size: number;
  candidate_page: number;
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
