/**
 * What a request costs, worked out from its parsed body before any work starts. A unit is about
 * what ranking one candidate costs, some 10 µs of one core: a request costs at least
 * {@link BASE_COST} (routing, parsing, answering), a ranking request one unit per candidate,
 * `include_events` ten more per candidate (every candidate's events are in the answer: 4.6 MB for
 * 1000), `explain` a hundred plus three per candidate of the page, and every body one unit per KiB.
 * The weights were measured on the template app (docs/reference/configuration.md, "Admission
 * control"); they need only be right in proportion, not to the microsecond.
 */

/** Every request's cost at least. */
export const BASE_COST = 100;
/** Per candidate of a ranking request. */
const PER_CANDIDATE = 1;
/** Per candidate more with `include_events`. */
const PER_CANDIDATE_EVENTS = 10;
/** With `explain`: once, and per candidate of the page. */
const EXPLAIN_COST = 100;
const PER_EXPLAINED = 3;
/** The page size of a ranking request that sends none (the pipelines' default). */
const DEFAULT_PAGE = 10;

/** From this cost on a request is expensive: about 20 ms of one core (a 1000-candidate ranking is 1,100). */
export const EXPENSIVE_COST = 2000;

/**
 * The cost of a request with `body` (as parsed, or undefined) of `bodyBytes` bytes. Only fields
 * every ranking request has are read, and only when they have the expected types: a body that
 * failed validation never gets here.
 */
export function requestCost(body: unknown, bodyBytes: number): number {
  let cost = BASE_COST + Math.ceil(bodyBytes / 1024);
  if (typeof body !== 'object' || body === null) return cost;
  const {
    candidates,
    include_events: events,
    explain,
    user_page_size: page,
  } = body as Record<string, unknown>;
  if (!Array.isArray(candidates)) return cost;
  cost += candidates.length * (events === true ? PER_CANDIDATE + PER_CANDIDATE_EVENTS : PER_CANDIDATE);
  if (explain === true) {
    const shown = Math.min(candidates.length, typeof page === 'number' ? page : DEFAULT_PAGE);
    cost += EXPLAIN_COST + PER_EXPLAINED * shown;
  }
  return cost;
}
