import type { RankdEvent } from '../recorder.js';
import { DEFAULT_LABEL_GRADES, gradeOf } from './label-grades.js';
import { MAX_IMPRESSIONS_PER_REQUEST, rowProblem, SkippedRows } from './row-checks.js';

/** One exported row: an impression, what produced it, and what the user did about it. */
export interface TrainingRow {
  request_id: string;
  /** The request's `event_timestamp`. */
  timestamp: string;
  api_source: string;
  run_id: string | null;
  entity_type: string;
  entity_id: string;
  /** Position in the page shown (`impression_order`, from 0). */
  position: number;
  score: number;
  model_name: string | null;
  model_version: string | null;
  /** Variant per experiment id. */
  experiments: Record<string, string>;
  /**
   * What the request asked apart from its candidates (FEATURE_ROWS' `request_context`: a hash of
   * its query, user and fields): the same for requests that asked the same; absent when not logged.
   */
  context?: string;
  /**
   * `view:feature` → value: what the model read for this candidate, and the features of the
   * request's own entities (`user_profile:*`); null when the request logged no features.
   */
  features: Record<string, unknown> | null;
  clicked: 0 | 1;
  added_to_cart: 0 | 1;
  purchased: 0 | 1;
  /** The highest grade of the feedback (by default purchase 3 > add_to_cart 2 > click 1), else 0. */
  label: number;
}

/** How events are joined. Times are stream times (ms): when each event reached the stream. */
export interface JoinOptions {
  /** Impressions from this time on are exported. */
  readonly sinceMs: number;
  /** ... up to this time (inclusive). */
  readonly untilMs: number;
  /** Feedback counts when it arrives at most this long after the request's first event. */
  readonly windowMs: number;
  /**
   * After this long, a request's MODEL/FEATURE events of entities it did not show are let go: a
   * request's events are written together, within a flush or two. @defaultValue 10 s
   */
  readonly settleMs?: number;
  /**
   * Most impressions kept waiting for feedback; past it the oldest requests are written before
   * their window ends (counted in `cutShort`), so memory stays bounded. @defaultValue 2,000,000
   */
  readonly maxPendingImpressions?: number;
  /** The label per feedback type; a row's is the highest of its feedback's. @defaultValue purchase 3, add_to_cart 2, click 1 */
  readonly grades?: Readonly<Record<string, number>>;
}

interface Impression {
  key: string;
  type: string;
  /** '' when the event names no entity (the row is then skipped). */
  id: string;
  /** NaN when the event's is not a number (the row is then skipped). */
  position: number;
  score: number;
  inRange: boolean;
}

interface RequestState {
  readonly requestId: string;
  readonly firstSeen: number;
  settled: boolean;
  closed: boolean;
  envelope: RankdEvent | undefined;
  impressions: Impression[];
  models: Map<string, { name: string | null; version: string | null }>;
  features: Map<string, Record<string, unknown>>;
  /** Features of the request's own entities (FEATURE_ROWS' `request_features`): every row of the request gets them. */
  requestFeatures: Record<string, unknown> | undefined;
  requestContext: string | null;
  experiments: Record<string, string>;
  /** An interleaved page's experiment and the ranker that placed each item shown (INTERLEAVING). */
  placedBy: { experiment: string; teams: Map<string, string> } | undefined;
  feedback: Map<string, Set<string>>;
}

const keyOf = (type: unknown, id: unknown) => `${String(type)}\u0000${String(id)}`;
/** An entity id as logged: text, or a number as its decimal text; '' when there is none. */
const idOf = (value: unknown) =>
  typeof value === 'string' ? value : typeof value === 'number' ? String(value) : '';
/** Tables keyed by names from the stream: no name reaches `Object.prototype` (`__proto__`, `constructor`). */
const table = <T>(): Record<string, T> => Object.create(null);
const asString = (value: unknown) =>
  typeof value === 'string' ? value : value == null ? null : String(value);

/**
 * Joins a stream of events, in stream order, into training rows: each IMPRESSION with the MODEL
 * and FEATURE events of the same request and entity, the request's EXPERIMENTATION results and
 * the FEEDBACK on that request and entity that arrives within the window. Only requests still in
 * their window are held; a request's rows are written when its window closes (or at the end).
 */
export class TrainingJoin {
  readonly #options: Required<JoinOptions>;
  /** Open requests in arrival order: the oldest is always first. */
  readonly #open = new Map<string, RequestState>();
  /** Requests not yet settled, oldest first, from index `#head` on (a queue without shifting). */
  #unsettled: RequestState[] = [];
  #head = 0;
  #pendingImpressions = 0;
  /** Requests written before their window ended, to bound memory. */
  cutShort = 0;
  /** Impressions that made no row, by reason (see {@link rowProblem}). */
  readonly skipped = new SkippedRows();

  constructor(options: JoinOptions) {
    this.#options = {
      settleMs: 10_000,
      maxPendingImpressions: 2_000_000,
      grades: DEFAULT_LABEL_GRADES,
      ...options,
    };
  }

  /** Requests waiting for feedback now. */
  get pendingRequests(): number {
    return this.#open.size;
  }

  /** Adds one event that reached the stream at `timeMs`; returns the rows that are complete. */
  add(timeMs: number, event: RankdEvent): TrainingRow[] {
    const rows = this.#advance(timeMs);
    const data = event.event_data ?? {};
    let state = this.#open.get(event.request_id);
    if (event.event_type === 'FEEDBACK') {
      // Feedback that overtook its impressions (written before the request's events were flushed) still joins.
      state ??= this.#openRequest(event.request_id, timeMs);
      const key = keyOf(data.entity_identifier_type, data.entity_identifier);
      const types = state.feedback.get(key) ?? new Set<string>();
      state.feedback.set(key, types);
      types.add(String(data.feedback_type));
      return rows;
    }
    if (state === undefined) {
      // A request after `until` yields no rows; only its feedback window was still being read.
      if (timeMs > this.#options.untilMs) return rows;
      state = this.#openRequest(event.request_id, timeMs);
    }
    state.envelope ??= event;
    const key = keyOf(
      data.entity_identifier_type ?? data.feature_identifier_type,
      data.entity_identifier ?? data.feature_identifier,
    );
    switch (event.event_type) {
      case 'IMPRESSION': {
        state.envelope = event;
        const inRange = timeMs >= this.#options.sinceMs && timeMs <= this.#options.untilMs;
        // One request shows at most a page: an entry claiming more is bounded as a request is.
        if (state.impressions.length >= MAX_IMPRESSIONS_PER_REQUEST) {
          if (inRange)
            this.skipped.add(`past the ${MAX_IMPRESSIONS_PER_REQUEST} impressions a request shows`);
          break;
        }
        const order = data.impression_order;
        state.impressions.push({
          key,
          type: typeof data.entity_identifier_type === 'string' ? data.entity_identifier_type : '',
          id: idOf(data.entity_identifier),
          position: typeof order === 'number' ? order : Number.NaN,
          score: Number(data.impression_score),
          inRange,
        });
        this.#pendingImpressions += 1;
        break;
      }
      case 'MODEL':
        if (this.#keeps(state, key))
          state.models.set(key, { name: asString(data.model_name), version: asString(data.model_version) });
        break;
      case 'FEATURE':
        if (this.#keeps(state, key)) {
          const values = state.features.get(key) ?? table<unknown>();
          state.features.set(key, values);
          values[String(data.feature_name)] = data.feature_value ?? null;
        }
        break;
      case 'FEATURE_ROWS':
        this.#addRows(state, data);
        break;
      case 'EXPERIMENTATION':
        state.experiments[String(data.experiment_id)] = String(data.result);
        break;
      case 'INTERLEAVING': {
        const teams = new Map<string, string>();
        for (const item of Array.isArray(data.page) ? (data.page as unknown[]) : [])
          if (Array.isArray(item)) teams.set(keyOf(data.entity_identifier_type, item[0]), String(item[1]));
        state.placedBy = { experiment: String(data.experiment_id), teams };
        break;
      }
    }
    if (this.#pendingImpressions > this.#options.maxPendingImpressions) rows.push(...this.#cutOldest());
    return rows;
  }

  /** A FEATURE_ROWS event: each shown candidate's inputs, and the request's own entities' features. */
  #addRows(state: RequestState, data: Record<string, unknown>): void {
    const names = Array.isArray(data.feature_names) ? (data.feature_names as unknown[]).map(String) : [];
    const type = data.entity_identifier_type;
    // Rows of the shown candidates: a page's worth at most, as for impressions.
    const rows = Array.isArray(data.rows)
      ? (data.rows as unknown[]).slice(0, MAX_IMPRESSIONS_PER_REQUEST)
      : [];
    for (const row of rows) {
      if (!Array.isArray(row) || !Array.isArray(row[1])) continue;
      const key = keyOf(type, row[0]);
      const values = state.features.get(key) ?? table<unknown>();
      state.features.set(key, values);
      names.forEach((name, i) => {
        values[name] = (row[1] as unknown[])[i] ?? null;
      });
    }
    const shared = data.request_features;
    if (shared !== null && typeof shared === 'object')
      state.requestFeatures = Object.assign(table<unknown>(), shared as Record<string, unknown>);
    if (typeof data.request_context === 'string') state.requestContext = data.request_context;
  }

  /** The rows of every request still open: the end of the stream closes all windows. */
  finish(): TrainingRow[] {
    const rows: TrainingRow[] = [];
    for (const state of this.#open.values()) rows.push(...this.#rowsOf(state));
    this.#open.clear();
    this.#unsettled = [];
    this.#head = 0;
    this.#pendingImpressions = 0;
    return rows;
  }

  #openRequest(requestId: string, timeMs: number): RequestState {
    const state: RequestState = {
      requestId,
      firstSeen: timeMs,
      settled: false,
      closed: false,
      envelope: undefined,
      impressions: [],
      models: new Map(),
      features: new Map(),
      requestFeatures: undefined,
      requestContext: null,
      experiments: table<string>(),
      placedBy: undefined,
      feedback: new Map(),
    };
    this.#open.set(requestId, state);
    this.#unsettled.push(state);
    return state;
  }

  /** Before settling, every entity's details are kept (its IMPRESSION may come later); after, only shown ones'. */
  #keeps(state: RequestState, key: string): boolean {
    return !state.settled || state.impressions.some((i) => i.key === key);
  }

  #advance(now: number): TrainingRow[] {
    const { settleMs, windowMs } = this.#options;
    while (this.#head < this.#unsettled.length) {
      const state = this.#unsettled[this.#head] as RequestState;
      if (state.firstSeen + settleMs > now) break;
      this.#head += 1;
      if (state.closed) continue;
      state.settled = true;
      const shown = new Set(state.impressions.map((i) => i.key));
      for (const key of state.models.keys()) if (!shown.has(key)) state.models.delete(key);
      for (const key of state.features.keys()) if (!shown.has(key)) state.features.delete(key);
    }
    if (this.#head > 1024 && this.#head * 2 > this.#unsettled.length) {
      this.#unsettled = this.#unsettled.slice(this.#head);
      this.#head = 0;
    }
    const rows: TrainingRow[] = [];
    for (const state of this.#open.values()) {
      if (state.firstSeen + windowMs >= now) break;
      rows.push(...this.#close(state));
    }
    return rows;
  }

  #cutOldest(): TrainingRow[] {
    const oldest = this.#open.values().next().value as RequestState;
    this.cutShort += 1;
    return this.#close(oldest);
  }

  #close(state: RequestState): TrainingRow[] {
    this.#open.delete(state.requestId);
    state.closed = true;
    this.#pendingImpressions -= state.impressions.length;
    return this.#rowsOf(state);
  }

  #rowsOf(state: RequestState): TrainingRow[] {
    const envelope = state.envelope;
    if (envelope === undefined) return [];
    const grades = this.#options.grades;
    const shared = state.requestFeatures;
    const rows: TrainingRow[] = [];
    for (const impression of state.impressions) {
      if (!impression.inRange) continue;
      const types = state.feedback.get(impression.key);
      const model = state.models.get(impression.key);
      let label = 0;
      for (const type of types ?? []) label = Math.max(label, gradeOf(grades, type));
      const own = state.features.get(impression.key);
      const features = shared === undefined ? (own ?? null) : Object.assign(table<unknown>(), shared, own);
      // On an interleaved page the experiment's column names the ranker that placed the item.
      const team = state.placedBy?.teams.get(impression.key);
      const experiments =
        team === undefined || state.placedBy === undefined
          ? state.experiments
          : Object.assign(table<string>(), state.experiments, { [state.placedBy.experiment]: team });
      const row: TrainingRow = {
        request_id: state.requestId,
        timestamp: envelope.event_timestamp,
        api_source: envelope.api_source,
        run_id: envelope.run_id ?? null,
        entity_type: impression.type,
        entity_id: impression.id,
        position: impression.position,
        score: impression.score,
        model_name: model?.name ?? null,
        model_version: model?.version ?? null,
        experiments,
        ...(state.requestContext === null ? {} : { context: state.requestContext }),
        features,
        clicked: types?.has('click') ? 1 : 0,
        added_to_cart: types?.has('add_to_cart') ? 1 : 0,
        purchased: types?.has('purchase') ? 1 : 0,
        label,
      };
      const problem = rowProblem(row);
      if (problem === undefined) rows.push(row);
      else this.skipped.add(problem);
    }
    return rows;
  }
}
