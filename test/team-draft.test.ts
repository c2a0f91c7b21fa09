/**
 * The team-draft merge as properties (fast-check): every item shown comes from one of the two
 * lists, once; each ranker's top item is in the first two places; and the attribution is
 * balanced in expectation over the coin flips — exactly, by going through every sequence of flips.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { type InterleavingTeam, teamDraft } from '../src/experiments/team-draft.js';

const identity = (item: string) => item;

/** Two rankings of the same items (what two rankers make of one request's candidates). */
const samePool = fc
  .uniqueArray(fc.string({ minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 9 })
  .chain((items) =>
    fc.tuple(
      fc.shuffledSubarray(items, { minLength: items.length }),
      fc.shuffledSubarray(items, { minLength: items.length }),
    ),
  );

/** Two lists that may share some items or none, of different lengths (a ranker's steps may drop others). */
const anyLists = fc.tuple(
  fc.uniqueArray(fc.integer({ min: 0, max: 20 }).map(String), { maxLength: 12 }),
  fc.uniqueArray(fc.integer({ min: 0, max: 20 }).map(String), { maxLength: 12 }),
);

test('every item shown comes from one of the two lists, credited to a ranker whose list has it, once', () => {
  fc.assert(
    fc.property(anyLists, fc.infiniteStream(fc.boolean()), ([control, challenger], flips) => {
      const coin = () => (flips.next().value ? 0.25 : 0.75);
      const merged = teamDraft(control, challenger, identity, coin);
      const ids = merged.map((p) => p.item);
      assert.equal(new Set(ids).size, ids.length, 'no item twice');
      assert.deepEqual(new Set(ids), new Set([...control, ...challenger]), 'every item of either list');
      for (const { item, team } of merged)
        assert.ok((team === 'control' ? control : challenger).includes(item));
    }),
  );
});

test("each ranker's top item is in the first two places", () => {
  fc.assert(
    fc.property(anyLists, fc.infiniteStream(fc.boolean()), ([control, challenger], flips) => {
      fc.pre(control.length > 0 && challenger.length > 0);
      const merged = teamDraft(control, challenger, identity, () => (flips.next().value ? 0.25 : 0.75));
      const firstTwo = merged.slice(0, 2).map((p) => p.item);
      assert.ok(firstTwo.includes(control[0] as string), `${control[0]} in ${firstTwo}`);
      assert.ok(firstTwo.includes(challenger[0] as string), `${challenger[0]} in ${firstTwo}`);
    }),
  );
});

/** Thrown by the coin when the flips given run out: the caller then tries both values of the next one. */
class MoreFlips extends Error {}

/**
 * Every way the coin can fall, each with its probability: the merges of `control` and
 * `challenger` under each sequence of flips the merge asks for.
 */
function allDrafts(
  control: string[],
  challenger: string[],
): Array<{ weight: number; teams: InterleavingTeam[] }> {
  const out: Array<{ weight: number; teams: InterleavingTeam[] }> = [];
  const visit = (flips: boolean[]) => {
    let used = 0;
    try {
      const merged = teamDraft(control, challenger, identity, () => {
        if (used >= flips.length) throw new MoreFlips();
        return flips[used++] ? 0.25 : 0.75;
      });
      out.push({ weight: 2 ** -flips.length, teams: merged.map((p) => p.team) });
    } catch (error) {
      if (!(error instanceof MoreFlips)) throw error;
      visit([...flips, true]);
      visit([...flips, false]);
    }
  };
  visit([]);
  return out;
}

test('over the coin flips, each ranker places as many of the first k items as the other, in expectation, for every k', () => {
  fc.assert(
    fc.property(samePool, ([control, challenger]) => {
      const drafts = allDrafts(control, challenger);
      assert.equal(
        drafts.reduce((sum, d) => sum + d.weight, 0),
        1,
      );
      for (let k = 1; k <= control.length; k++) {
        // Σ P(flips) × (control's items − challenger's) among the first k: exactly 0 (dyadic weights add exactly).
        const lead = drafts.reduce(
          (sum, d) =>
            sum + d.weight * d.teams.slice(0, k).reduce((n, team) => n + (team === 'control' ? 1 : -1), 0),
          0,
        );
        assert.equal(lead, 0, `k = ${k}: expected lead of the control ${lead}`);
      }
    }),
  );
});
