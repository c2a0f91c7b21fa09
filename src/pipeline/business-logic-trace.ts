import type {
  BusinessLogicStep,
  ScoredCandidate,
  StepChange,
  StepNote,
  StepTrace,
} from '../business-logic/define-business-logic.js';
import { figure } from '../business-logic/keys.js';
import type { RankdRequest } from '../request/component.js';

/** What one business-logic step did to one candidate of the page. Positions count from 1. */
export interface StepEntry {
  readonly step: string;
  readonly action: string;
  readonly description: string;
  readonly score_before: number | null;
  readonly score_after: number | null;
  readonly position_before: number;
  readonly position_after: number;
}

/** A candidate dropped by a step, and why. */
export interface DroppedCandidate {
  readonly id: string;
  readonly step: string;
  readonly reason: string;
}

/** Where a candidate stood: its position (from 1) and its score. */
interface Standing {
  readonly id: string;
  readonly position: number;
  readonly score: number;
}

interface StepRecord {
  readonly step: string;
  readonly before: ReadonlyMap<object, Standing>;
  readonly after: ReadonlyMap<object, Standing>;
  readonly notes: ReadonlyMap<object, StepNote>;
}

function standings(candidates: readonly ScoredCandidate[]): Map<object, Standing> {
  const map = new Map<object, Standing>();
  candidates.forEach((c, i) => {
    if (!map.has(c.entity)) map.set(c.entity, { id: c.id, position: i + 1, score: c.score });
  });
  return map;
}

function noteOf(described: string | StepNote | undefined): StepNote | undefined {
  if (described === undefined) return undefined;
  return typeof described === 'string' ? { action: 'custom', description: described } : described;
}

/** Said of a candidate the step left alone, or moved only by moving others. */
function untouched(before: Standing, after: Standing): StepNote {
  if (after.score !== before.score)
    return { action: 'custom', description: `score ${figure(before.score)} → ${figure(after.score)}` };
  if (after.position === before.position) return { action: 'none', description: 'unchanged' };
  const direction = after.position < before.position ? 'up' : 'down';
  return { action: 'none', description: `moved ${direction} by other candidates` };
}

/**
 * Records, for an explained request only, what each business-logic step did: every candidate's
 * score and position before and after each step, the steps' own notes (through {@link stepTrace}),
 * and the candidates dropped. A request without `explain` makes none.
 */
export class BusinessLogicTrace {
  /** Position (from 1) of each candidate by model score alone. */
  readonly modelPositions = new Map<object, number>();
  readonly dropped: DroppedCandidate[] = [];
  readonly #steps: StepRecord[] = [];
  #notes = new Map<object, StepNote>();
  /** Handed to each step's `apply`. */
  readonly stepTrace: StepTrace = {
    note: (candidate, action, description) => {
      this.#notes.set(candidate.entity, { action, description });
    },
  };

  /** The candidates sorted by model score, before the first step. */
  start(sorted: readonly ScoredCandidate[]): void {
    sorted.forEach((c, i) => {
      if (!this.modelPositions.has(c.entity)) this.modelPositions.set(c.entity, i + 1);
    });
  }

  /** Where the candidates stand before a step (taken before `apply`: a step may change scores in place). */
  before(candidates: readonly ScoredCandidate[]): Map<object, Standing> {
    this.#notes = new Map();
    return standings(candidates);
  }

  /** Records a step's effect: `after` is its result, re-sorted as the pipeline keeps it. */
  after(
    step: BusinessLogicStep,
    before: ReadonlyMap<object, Standing>,
    after: readonly ScoredCandidate[],
    request: RankdRequest,
  ): void {
    const now = standings(after);
    const notes = this.#notes;
    for (const [entity, was] of before) {
      const is = now.get(entity);
      if (is !== undefined && (notes.has(entity) || (is.score === was.score && is.position === was.position)))
        continue;
      const change: StepChange = {
        entity: entity as StepChange['entity'],
        id: was.id,
        score_before: was.score,
        score_after: is?.score ?? null,
        position_before: was.position,
        position_after: is?.position ?? null,
      };
      const described = notes.get(entity) ?? noteOf(step.describe?.(change, request));
      if (is === undefined)
        this.dropped.push({
          id: was.id,
          step: step.name,
          reason: described?.description ?? `removed by ${step.name}`,
        });
      else if (described !== undefined) notes.set(entity, described);
    }
    this.#steps.push({ step: step.name, before, after: now, notes });
  }

  /** What each step did to a candidate still ranked (one on the page). */
  entriesFor(entity: object): StepEntry[] {
    const entries: StepEntry[] = [];
    for (const { step, before, after, notes } of this.#steps) {
      const was = before.get(entity);
      const is = after.get(entity);
      if (was === undefined || is === undefined) continue;
      const note = notes.get(entity) ?? untouched(was, is);
      entries.push({
        step,
        action: note.action,
        description: note.description,
        score_before: was.score,
        score_after: is.score,
        position_before: was.position,
        position_after: is.position,
      });
    }
    return entries;
  }
}
