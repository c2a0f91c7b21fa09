/** A score as ranked: NaN (a model that gave none) ranks below every number. */
function rankable(score: number): number {
  return Number.isNaN(score) ? Number.NEGATIVE_INFINITY : score;
}

/**
 * Ranks the rows `start .. start + count` by score, highest first, writing their indices into
 * `order[0 .. count)`. Ties go to the lower label first, then to the earlier row: a model that
 * cannot tell rows apart gets no credit for the order they happened to arrive in, and the same
 * scores always give the same ranking. NDCG and the LambdaMART gradients both rank with it.
 */
export function rankGroup(
  scores: ArrayLike<number>,
  labels: ArrayLike<number>,
  start: number,
  count: number,
  order: Uint32Array,
): void {
  const before = (a: number, b: number): boolean => {
    const sa = rankable(scores[a] as number);
    const sb = rankable(scores[b] as number);
    if (sa !== sb) return sa > sb;
    const la = labels[a] as number;
    const lb = labels[b] as number;
    return la !== lb ? la < lb : a < b;
  };
  // Insertion sort: groups are short (tens of rows), and it calls no comparator function.
  if (count <= 64) {
    for (let i = 0; i < count; i++) {
      const row = start + i;
      let j = i - 1;
      while (j >= 0 && before(row, order[j] as number)) {
        order[j + 1] = order[j] as number;
        j--;
      }
      order[j + 1] = row;
    }
    return;
  }
  const part = order.subarray(0, count);
  for (let i = 0; i < count; i++) part[i] = start + i;
  part.sort((a, b) => (before(a, b) ? -1 : before(b, a) ? 1 : 0));
}

/**
 * Re-ranks `ranked[start .. start + count)` (row indices of one group, in the order of an earlier
 * ranking) in place, in {@link rankGroup}'s order. Scores move little from one tree to the next, so
 * insertion sort from the last ranking does about one comparison per row.
 */
export function rerankGroup(
  scores: ArrayLike<number>,
  labels: ArrayLike<number>,
  ranked: Uint32Array,
  start: number,
  count: number,
): void {
  const end = start + count;
  for (let i = start + 1; i < end; i++) {
    const row = ranked[i] as number;
    const s = rankable(scores[row] as number);
    const label = labels[row] as number;
    let j = i - 1;
    while (j >= start) {
      const other = ranked[j] as number;
      const so = rankable(scores[other] as number);
      // Does `row` go before `other`? Higher score, then lower label, then earlier row.
      if (
        s > so ||
        (s === so && (label < (labels[other] as number) || (label === labels[other] && row < other)))
      ) {
        ranked[j + 1] = other;
        j--;
      } else {
        break;
      }
    }
    ranked[j + 1] = row;
  }
}
