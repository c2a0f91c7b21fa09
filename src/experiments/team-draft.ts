import { createHash } from 'node:crypto';
import { seededRandom } from '../training/random.js';

/**
 * The two rankers of an interleaving experiment: `control` (the one serving today) and
 * `challenger` (the one being tried).
 */
export type InterleavingTeam = 'control' | 'challenger';

/** An item of an interleaved list and the ranker that placed it. */
export interface PlacedItem<T> {
  readonly item: T;
  readonly team: InterleavingTeam;
}

/**
 * Team-draft interleaving (Radlinski, Kurup and Joachims, CIKM 2008): the two rankers pick in
 * turns, like captains choosing teams. The ranker that has placed fewer items picks next, a coin
 * (`random() < 0.5`: control) deciding when they have placed as many; each picks its best item not
 * yet placed. So each ranker's top item is in the first two places, and after every pair of picks
 * each ranker has placed as many items, which keeps a click's credit unbiased over the coin flips.
 * Items are the same when `keyOf` gives the same value; each appears once, credited to the ranker that picked it.
 * When one list runs out, the other places the rest of its items.
 */
export function teamDraft<T>(
  control: readonly T[],
  challenger: readonly T[],
  keyOf: (item: T) => unknown,
  random: () => number,
): Array<PlacedItem<T>> {
  const merged: Array<PlacedItem<T>> = [];
  const placed = new Set<unknown>();
  let c = 0;
  let h = 0;
  let byControl = 0;
  let byChallenger = 0;
  for (;;) {
    while (c < control.length && placed.has(keyOf(control[c] as T))) c += 1;
    while (h < challenger.length && placed.has(keyOf(challenger[h] as T))) h += 1;
    const controlLeft = c < control.length;
    const challengerLeft = h < challenger.length;
    if (!controlLeft && !challengerLeft) return merged;
    const controlPicks = !challengerLeft
      ? true
      : !controlLeft
        ? false
        : byControl !== byChallenger
          ? byControl < byChallenger
          : random() < 0.5;
    const item = (controlPicks ? control[c] : challenger[h]) as T;
    placed.add(keyOf(item));
    merged.push({ item, team: controlPicks ? 'control' : 'challenger' });
    if (controlPicks) byControl += 1;
    else byChallenger += 1;
  }
}

/**
 * The coin of one request's draft: a generator seeded by the experiment, its salt and the
 * request id, so the same request is merged the same way again (an explained rerun, a test).
 */
export function draftCoin(experimentId: string, salt: string, requestId: string): () => number {
  const hex = createHash('sha1').update(`${experimentId}:${salt}:${requestId}:draft`).digest('hex');
  return seededRandom(Number.parseInt(hex.slice(0, 8), 16));
}
