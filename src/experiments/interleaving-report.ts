import type { TimedEvent } from '../events/export/event-sources.js';
import { INTERLEAVING } from '../events/recorder.js';
import {
  type InterleavingCounts,
  type InterleavingStatistics,
  interleavingStatistics,
} from './interleaving-statistics.js';
import type { InterleavingTeam } from './team-draft.js';

/** Which events an interleaving report reads. Times are stream times (ms): when each event reached the stream. */
export interface InterleavingReportOptions {
  readonly experimentId: string;
  /** Interleaved pages from this time on count... */
  readonly sinceMs: number;
  /** ... up to this time (inclusive). */
  readonly untilMs: number;
  /** A click counts when it arrives at most this long after its page (as for `rankd events export`). */
  readonly windowMs: number;
  /** The feedback types credited as clicks. @defaultValue `click` */
  readonly feedbackTypes?: readonly string[];
}

/** The rankers a page was interleaved from, as its INTERLEAVING event names them, and how many pages they served. */
export interface RankersSeen {
  readonly control: Record<string, unknown>;
  readonly challenger: Record<string, unknown>;
  readonly impressions: number;
}

/**
 * What `rankd experiment report` says of an interleaving experiment: the counts, the statistics
 * and the decision at 95% (`challenger_wins`, `challenger_loses`, `undecided`).
 */
export interface InterleavingReport extends InterleavingCounts, InterleavingStatistics {
  readonly experimentId: string;
  readonly sinceMs: number;
  readonly untilMs: number;
  readonly windowMs: number;
  readonly feedbackTypes: readonly string[];
  /** Each pair of rankers seen (a challenger retrained meanwhile shows as a second pair). */
  readonly rankers: readonly RankersSeen[];
}

interface PageState {
  readonly firstSeen: number;
  /** The ranker of each item shown, from the page's INTERLEAVING event; undefined while only feedback is known. */
  teams: Map<string, InterleavingTeam> | undefined;
  clicked: Set<string>;
}

const keyOf = (type: unknown, id: unknown) => `${String(type)}\u0000${String(id)}`;

/**
 * Credits clicks to rankers, reading events in stream order: each page of the experiment's
 * INTERLEAVING events from `sinceMs` to `untilMs`, with the FEEDBACK on its items that arrives
 * within `windowMs` of it. Each clicked item counts once, for the ranker that placed it. A page
 * is counted when its window closes (or at the end), then forgotten: memory holds one window.
 */
class ClickCredit {
  readonly #options: InterleavingReportOptions;
  readonly #credited: ReadonlySet<string>;
  readonly #open = new Map<string, PageState>();
  readonly #rankers = new Map<
    string,
    { control: Record<string, unknown>; challenger: Record<string, unknown>; impressions: number }
  >();
  #impressions = 0;
  #withClicks = 0;
  #wins = 0;
  #losses = 0;
  #ties = 0;
  readonly #clicks = { control: 0, challenger: 0 };

  constructor(options: InterleavingReportOptions, credited: ReadonlySet<string>) {
    this.#options = options;
    this.#credited = credited;
  }

  add({ timeMs, event }: TimedEvent): void {
    this.#advance(timeMs);
    const data = event.event_data ?? {};
    if (event.event_type === 'FEEDBACK') {
      if (!this.#credited.has(String(data.feedback_type))) return;
      const state = this.#open.get(event.request_id) ?? this.#openPage(event.request_id, timeMs);
      state.clicked.add(keyOf(data.entity_identifier_type, data.entity_identifier));
      return;
    }
    if (event.event_type !== INTERLEAVING || data.experiment_id !== this.#options.experimentId) return;
    if (timeMs < this.#options.sinceMs || timeMs > this.#options.untilMs) return;
    const state = this.#open.get(event.request_id) ?? this.#openPage(event.request_id, timeMs);
    const type = data.entity_identifier_type;
    state.teams = new Map();
    for (const item of Array.isArray(data.page) ? (data.page as unknown[]) : []) {
      if (!Array.isArray(item) || (item[1] !== 'control' && item[1] !== 'challenger')) continue;
      state.teams.set(keyOf(type, item[0]), item[1]);
    }
    const rankers = (data.rankers ?? {}) as {
      control?: Record<string, unknown>;
      challenger?: Record<string, unknown>;
    };
    const pair = JSON.stringify([rankers.control ?? null, rankers.challenger ?? null]);
    const seen = this.#rankers.get(pair) ?? {
      control: rankers.control ?? {},
      challenger: rankers.challenger ?? {},
      impressions: 0,
    };
    seen.impressions += 1;
    this.#rankers.set(pair, seen);
  }

  /** Counts every page still open: the end of the events closes all windows. */
  finish(): InterleavingCounts & { rankers: RankersSeen[] } {
    for (const state of this.#open.values()) this.#count(state);
    this.#open.clear();
    return {
      impressions: this.#impressions,
      withClicks: this.#withClicks,
      wins: this.#wins,
      losses: this.#losses,
      ties: this.#ties,
      clicks: { ...this.#clicks },
      rankers: [...this.#rankers.values()],
    };
  }

  #openPage(requestId: string, timeMs: number): PageState {
    const state: PageState = { firstSeen: timeMs, teams: undefined, clicked: new Set() };
    this.#open.set(requestId, state);
    return state;
  }

  #advance(now: number): void {
    for (const [requestId, state] of this.#open) {
      if (state.firstSeen + this.#options.windowMs >= now) return;
      this.#open.delete(requestId);
      this.#count(state);
    }
  }

  #count(state: PageState): void {
    if (state.teams === undefined) return;
    this.#impressions += 1;
    let control = 0;
    let challenger = 0;
    for (const key of state.clicked) {
      const team = state.teams.get(key);
      if (team === 'control') control += 1;
      else if (team === 'challenger') challenger += 1;
    }
    this.#clicks.control += control;
    this.#clicks.challenger += challenger;
    if (control + challenger === 0) return;
    this.#withClicks += 1;
    if (challenger > control) this.#wins += 1;
    else if (challenger < control) this.#losses += 1;
    else this.#ties += 1;
  }
}

/**
 * The report of interleaving experiment `options.experimentId` from `events` (the event stream
 * or an event file, read from `sinceMs` to `untilMs + windowMs`): impressions, wins, losses and
 * ties of the challenger, the preference Δ with its 95% interval, the sign test's p-value and the
 * decision. Everything it reads is in the stream, so any process, after any restart, gets the
 * same answer from the same events: what promotion by interleaving decides on.
 */
export async function interleavingReport(
  events: AsyncIterable<TimedEvent>,
  options: InterleavingReportOptions,
): Promise<InterleavingReport> {
  const feedbackTypes = options.feedbackTypes ?? ['click'];
  const credit = new ClickCredit(options, new Set(feedbackTypes));
  for await (const timed of events) credit.add(timed);
  const counts = credit.finish();
  return {
    experimentId: options.experimentId,
    sinceMs: options.sinceMs,
    untilMs: options.untilMs,
    windowMs: options.windowMs,
    feedbackTypes,
    ...counts,
    ...interleavingStatistics(counts),
  };
}
