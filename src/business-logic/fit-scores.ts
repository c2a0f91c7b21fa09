import type { EntityType } from '../entities/define-entity.js';
import type { ScoredCandidate } from './define-business-logic.js';

/**
 * Gives a list already in its final order scores that never increase along it, so the pipeline's
 * stable descending re-sort leaves it as it is.
 *
 * `anchored(i)` marks the candidates that keep their score; their scores must already be
 * non-increasing in `ordered` (they are when those candidates kept their relative order). Every
 * other candidate keeps its own score if it fits between the score above it and the next anchored
 * score below; otherwise it gets one between them, spread evenly over the run of unanchored
 * candidates there. Above the first anchor the scores step up by 1 from it, below the last they
 * step down by 1. Equal neighbours give equal scores: the stable sort keeps their order.
 */
export function fitScores<E extends EntityType>(
  ordered: ReadonlyArray<ScoredCandidate<E>>,
  anchored: (index: number) => boolean,
): Array<ScoredCandidate<E>> {
  const result: Array<ScoredCandidate<E>> = [];
  // The score of the next anchored candidate below each position (undefined: none below).
  const anchorBelow: Array<number | undefined> = new Array(ordered.length);
  let nextAnchor: number | undefined;
  let runLength = 0;
  const runRemaining: number[] = new Array(ordered.length);
  for (let i = ordered.length - 1; i >= 0; i--) {
    anchorBelow[i] = nextAnchor;
    if (anchored(i)) {
      nextAnchor = ordered[i]?.score;
      runLength = 0;
    } else {
      runLength += 1;
    }
    runRemaining[i] = runLength;
  }
  let previous: number | undefined;
  for (const [i, candidate] of ordered.entries()) {
    const score = anchored(i)
      ? candidate.score
      : scoreBetween(candidate.score, previous, anchorBelow[i], runRemaining[i] ?? 1);
    result.push(score === candidate.score ? candidate : { ...candidate, score });
    previous = score;
  }
  return result;
}

/** A score for the first of `remaining` unanchored candidates between `above` and `below`. */
function scoreBetween(own: number, above: number | undefined, below: number | undefined, remaining: number) {
  if ((above === undefined || own <= above) && (below === undefined || own >= below)) return own;
  let score: number;
  if (above !== undefined && below !== undefined) {
    // Evenly spaced: the rest of the run still finds room between this score and `below`. The gap
    // of two huge scores of opposite signs overflows; divided first, it does not.
    const gap = above - below;
    score =
      above -
      (Number.isFinite(gap) ? gap / (remaining + 1) : above / (remaining + 1) - below / (remaining + 1));
    // Rounding (or an overflowing difference) must not leave the interval.
    score = Number.isFinite(score) ? Math.min(above, Math.max(below, score)) : below;
  } else if (below !== undefined) {
    score = below + remaining;
  } else if (above !== undefined) {
    score = above - 1;
  } else {
    return own;
  }
  // Near the limits of doubles ±1 can overflow; a tie with the bound still keeps the order.
  return Number.isFinite(score) ? score : (below ?? above ?? own);
}

/**
 * Marks a longest run of `scores` (not necessarily contiguous) that never increases: the most
 * candidates of a reordered list that can keep their scores. O(n log n).
 */
export function longestNonIncreasing(scores: readonly number[]): boolean[] {
  // Patience sorting: tails[k] is the index ending the best run of length k + 1 found so far.
  const tails: number[] = [];
  const previous: number[] = new Array(scores.length).fill(-1);
  for (const [i, score] of scores.entries()) {
    let low = 0;
    let high = tails.length;
    // The first run whose last score is below this one cannot take it; the one before can.
    while (low < high) {
      const middle = (low + high) >> 1;
      if ((scores[tails[middle] as number] as number) >= score) low = middle + 1;
      else high = middle;
    }
    if (low > 0) previous[i] = tails[low - 1] as number;
    tails[low] = i;
  }
  const marked = new Array<boolean>(scores.length).fill(false);
  for (let i = tails.at(-1) ?? -1; i >= 0; i = previous[i] as number) marked[i] = true;
  return marked;
}
