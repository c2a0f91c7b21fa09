import type { EntityType } from '../entities/define-entity.js';
import { AppDefinitionError, AppMisuseError } from '../errors/index.js';
import type { RankdRequest } from '../request/component.js';
import {
  type BusinessLogicStep,
  defineBusinessLogic,
  type ScoredCandidate,
} from './define-business-logic.js';
import { fitScores } from './fit-scores.js';
import { componentOf, type StepOptions, sortedByScore } from './step-options.js';

/**
 * Zero-based positions by candidate id, applied in the order listed: a Map's insertion order, or an
 * object's key order, where JavaScript lists integer-like keys (`"10"`, `"2"`) first, ascending; use
 * a Map when such ids must keep another order.
 */
export type PinPositions = Readonly<Record<string, number>> | ReadonlyMap<string, number>;

/** How {@link pin} is configured. */
export interface PinOptions<E extends EntityType = EntityType> extends StepOptions<E> {
  /** The positions, fixed or computed per request. */
  positions: PinPositions | ((request: RankdRequest) => PinPositions | Promise<PinPositions>);
  /** Lets a pin move a candidate down, below where its score put it. @defaultValue false */
  allowDownRanking?: boolean;
}

/**
 * The positions as entries, checked: fixed ones when the step is defined, a positions function's
 * result in each request.
 */
function entriesOf(positions: PinPositions, step: string, inRequest: boolean): Array<[string, number]> {
  const entries = positions instanceof Map ? [...positions.entries()] : Object.entries(positions);
  for (const [id, position] of entries) {
    if (!Number.isInteger(position) || position < 0) {
      const problem = `the position of ${JSON.stringify(id)} must be an integer ≥ 0, got ${position}`;
      if (inRequest) throw new AppMisuseError(`${step}: ${problem} (returned by its positions function)`);
      throw new AppDefinitionError(`${step}: ${problem}`);
    }
  }
  return entries;
}

/**
 * The final order: pinned candidates at their slots, the others in score order in the free ones.
 * `pinnedAt` maps a slot to the index (in score order) of the candidate pinned there.
 */
function placePins(
  count: number,
  pins: Array<[string, number]>,
  indexOf: Map<string, number>,
  allowDown: boolean,
) {
  const last = count - 1;
  const pinnedAt = new Map<number, number>();
  const pinned = new Set<number>();
  for (const [id, wanted] of pins) {
    const index = indexOf.get(id);
    if (index === undefined || pinned.has(index)) continue;
    const position = Math.min(wanted, last);
    if (!allowDown && position > index) continue;
    let slot = position;
    while (slot <= last && pinnedAt.has(slot)) slot += 1;
    if (slot > last) {
      // Every slot from `position` to the end is taken (several pins beyond the list): the nearest
      // free one before it. There is one: there are no more pins than candidates.
      slot = position;
      while (pinnedAt.has(slot)) slot -= 1;
    }
    pinnedAt.set(slot, index);
    pinned.add(index);
  }
  return { pinnedAt, pinned };
}

/**
 * Puts candidates at given zero-based positions of the ranked list (the whole candidate list of
 * the request, before pagination).
 *
 * - A position beyond the list means last.
 * - Pins are applied in the order listed; a pin whose position is taken by an earlier one gets
 *   the next free position after it (the nearest free one before it when none is left after).
 * - Without `allowDownRanking`, a pin that would put a candidate below its current position is
 *   ignored: the candidate stays among the unpinned ones, in score order.
 * - An id that is not among the candidates is ignored; an id present twice pins its first (best) one.
 * - The unpinned candidates keep their order and their scores; a pinned candidate keeps its score
 *   when it already fits between its new neighbours, and otherwise gets one between them (the
 *   first unpinned score + 1 when pinned first, the score above it − 1 when pinned last), so the pipeline's
 *   stable re-sort keeps exactly this order.
 *
 * @example
 * ```ts
 * import { pin } from 'rankd';
 *
 * // p42 first on every request; or positions computed per request from its fields.
 * export const Promoted = pin({ positions: { p42: 0 } });
 * export const Sponsored = pin({
 *   positions: (request) => (typeof request.sponsored === 'string' ? { [request.sponsored]: 1 } : {}),
 * });
 * ```
 */
export function pin<E extends EntityType = EntityType>(options: PinOptions<E>): BusinessLogicStep<E> {
  const component = componentOf(options, 'pin');
  const fixed =
    typeof options.positions === 'function' ? undefined : entriesOf(options.positions, component.name, false);
  const allowDown = options.allowDownRanking ?? false;
  return defineBusinessLogic<E>({
    ...component,
    positional: true,
    async apply(input, request, trace) {
      const pins =
        fixed ??
        entriesOf(
          await (options.positions as (request: RankdRequest) => PinPositions)(request),
          component.name,
          true,
        );
      if (pins.length === 0 || input.length === 0) return input;
      // Positions count in score order; sorted again for a caller that did not sort.
      const candidates = sortedByScore(input);
      const indexOf = new Map<string, number>();
      for (const [index, candidate] of candidates.entries())
        if (!indexOf.has(candidate.id)) indexOf.set(candidate.id, index);
      const { pinnedAt, pinned } = placePins(candidates.length, pins, indexOf, allowDown);
      const free = candidates.filter((_, index) => !pinned.has(index));
      const ordered: Array<ScoredCandidate<E>> = [];
      let nextFree = 0;
      for (let slot = 0; slot < candidates.length; slot++) {
        const index = pinnedAt.get(slot);
        const candidate = index === undefined ? free[nextFree++] : candidates[index];
        if (candidate) ordered.push(candidate);
        if (candidate && index !== undefined) trace?.note(candidate, 'pin', `pinned to position ${slot + 1}`);
      }
      // Every slot is filled, so slot numbers are indexes of `ordered`.
      return fitScores(ordered, (slot) => !pinnedAt.has(slot));
    },
  });
}
