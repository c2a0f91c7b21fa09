import { type EventJson, FAST_EVENT_JSON } from '../fast-paths/event-json.js';

/**
 * One logged event, in the envelope every event shares (docs/reference/events.md). `event_data` depends on
 * `event_type`; app-defined types carry whatever the app logged.
 */
export interface RankdEvent {
  request_id: string;
  /** The route that served the request, e.g. `/api/v1/ranking`. */
  api_source: string;
  /** When the request was served (ISO 8601, UTC). */
  event_timestamp: string;
  event_type: string;
  event_data: Record<string, unknown>;
  /** The `x-rankd-run-id` header of the request (an offline run, a replay), else null. */
  run_id: string | null;
}

/**
 * The event types rankd itself records; any other type is an app's custom event.
 *
 * @example
 * ```ts
 * import { BUILT_IN_EVENT_TYPES } from 'rankd/server';
 *
 * // An app's own event types must not take these names.
 * console.log(BUILT_IN_EVENT_TYPES.has('IMPRESSION')); // true
 * ```
 */
export const BUILT_IN_EVENT_TYPES: ReadonlySet<string> = new Set([
  'FEATURE',
  'MODEL',
  'BUSINESS_LOGIC',
  'CANDIDATE',
  'IMPRESSION',
  'EXPERIMENTATION',
  'FEEDBACK',
  'FEATURE_ROWS',
  'INTERLEAVING',
  'SHADOW',
]);

/** The kind an event type counts as in `EVENTS_KINDS`: itself when built in, else `CUSTOM`. */
export function kindOf(eventType: string): string {
  return BUILT_IN_EVENT_TYPES.has(eventType) ? eventType : 'CUSTOM';
}

const NO_KINDS: ReadonlySet<string> = new Set();

/**
 * One per interleaved ranking request: which ranker of an interleaving experiment placed each
 * item shown (docs/reference/events.md). Sent whenever the sink takes any kind: an app that
 * declares an interleaving experiment wants its report.
 */
export const INTERLEAVING = 'INTERLEAVING';

/**
 * One per ranking request a shadow model ran on, after its response: both models' rankings and
 * the items they disagree on most, explained. Sent whenever the sink takes any kind, as
 * {@link INTERLEAVING} is.
 */
export const SHADOW = 'SHADOW';

/**
 * One event per request: the model's inputs for each candidate shown and the features of the
 * request's own entities (`EVENTS_FEATURES=shown`), as rows of values under one list of names.
 */
export const FEATURE_ROWS = 'FEATURE_ROWS';

/**
 * Which events of a request go to the sink, from `EVENTS_KINDS` and `EVENTS_FEATURES`.
 * Built once per server; per request it only draws whether FEATURE events are sampled.
 */
export class EventPolicy {
  /** Sends nothing to a sink (`EVENTS_SINK=off`, or code that runs a pipeline without a server). */
  static readonly NONE = new EventPolicy([], 0);
  /** How the pipeline's own events are written as JSON: chosen once, when the server is built (DR-005). */
  readonly json: EventJson;
  readonly #kinds: ReadonlySet<string>;
  readonly #withFeatures: ReadonlySet<string>;
  readonly #rate: number;
  readonly #random: () => number;

  /**
   * `shownFeatures` (`EVENTS_FEATURES=shown`): every request sends a {@link FEATURE_ROWS} event, the
   * shown candidates' inputs (training data); `featureSampleRate` samples the per-value FEATURE
   * events of all candidates. Nothing is sent without a kind. `json`: the fast writers, or the plain
   * ones with `FAST_PATHS=false`.
   */
  constructor(
    kinds: readonly string[],
    featureSampleRate: number,
    random: () => number = Math.random,
    shownFeatures = false,
    json: EventJson = FAST_EVENT_JSON,
  ) {
    this.json = json;
    const all =
      kinds.length === 0 ? kinds : [...kinds, ...(shownFeatures ? [FEATURE_ROWS] : []), INTERLEAVING, SHADOW];
    this.#kinds = all.length === 0 ? NO_KINDS : new Set(all);
    this.#withFeatures = new Set([...all, 'FEATURE']);
    // FEATURE listed in EVENTS_KINDS means every request, as a rate of 1 does.
    this.#rate = this.#kinds.has('FEATURE') ? 1 : featureSampleRate;
    this.#random = random;
  }

  /** The kinds one request sends: the configured ones, plus FEATURE when this request is sampled. */
  kindsForRequest(): ReadonlySet<string> {
    if (this.#rate <= 0) return this.#kinds;
    return this.#rate >= 1 || this.#random() < this.#rate ? this.#withFeatures : this.#kinds;
  }
}

/**
 * An event as a request records it: already serialised, as the sink writes it, since nearly every
 * recorded event goes to the sink and only a request asking for `include_events` reads them back.
 * Its envelope is the request's, kept once (see {@link RequestEvents}).
 */
export interface RecordedEvent {
  readonly event_type: string;
  /** `{"event_type":…,"event_data":…}`. */
  readonly json: string;
  /** For the sink only: the response's events leave it out (see {@link EventRecorder.addForSink}). */
  readonly sinkOnly?: true;
}

/** `{"event_type":<type>,"event_data":` per event type (the built-in ones and an app's few). */
const eventPrefixes = new Map<string, string>();
/** An app that makes up types as it goes does not grow the cache past this. */
const MAX_CACHED_PREFIXES = 1000;

/** An event whose data is already JSON text (`dataJson`, the JSON of an object), recorded. */
function recordedEvent(eventType: string, dataJson: string): RecordedEvent {
  let prefix = eventPrefixes.get(eventType);
  if (prefix === undefined) {
    prefix = `{"event_type":${JSON.stringify(eventType)},"event_data":`;
    if (eventPrefixes.size < MAX_CACHED_PREFIXES) eventPrefixes.set(eventType, prefix);
  }
  return { event_type: eventType, json: `${prefix}${dataJson}}` };
}

/**
 * An event recorded from its data, or undefined when the data is not JSON (a BigInt or a cycle in
 * an app's custom event): such an event is left out alone, not its request.
 */
export function recordedEventOf(
  eventType: string,
  eventData: Record<string, unknown>,
): RecordedEvent | undefined {
  let dataJson: string | undefined;
  try {
    dataJson = JSON.stringify(eventData);
  } catch {
    return undefined;
  }
  return dataJson === undefined ? undefined : recordedEvent(eventType, dataJson);
}

/** What every event of one request shares. */
interface EventEnvelope {
  readonly request_id: string;
  readonly api_source: string;
  readonly event_timestamp: string;
  readonly run_id: string | null;
}

/** One request's events for the sink: the envelope once, then the events. */
export interface RequestEvents {
  readonly envelope: EventEnvelope;
  readonly events: readonly RecordedEvent[];
  /** Events the request logged that are not JSON, left out (the sink counts them as dropped). */
  readonly failed: number;
}

/**
 * Records the events of one request. Callers ask {@link wants} before building an event, so a
 * kind nobody reads (not in the response, not for the sink) costs one set look-up, not an object
 * per candidate. Events are kept without their envelope, which is the request's: it is added once
 * per request for the sink, and per event only for the response.
 */
export class EventRecorder {
  /** Whether the response returns the events (`include_events: true`). */
  readonly respond: boolean;
  /** Writes the pipeline's own events as JSON text, for {@link addJson}: the policy's (DR-005). */
  readonly json: EventJson;
  readonly #recorded: RecordedEvent[] = [];
  #failed = 0;
  readonly #sinkKinds: ReadonlySet<string>;
  readonly #requestId: string;
  readonly #apiSource: string;
  readonly #runId: string | null;
  readonly #startedAt = Date.now();

  constructor(
    envelope: { requestId: string; apiSource: string; runId?: string | null },
    options: { respond: boolean; sinkKinds?: ReadonlySet<string>; json?: EventJson },
  ) {
    this.#requestId = envelope.requestId;
    this.#apiSource = envelope.apiSource;
    this.#runId = envelope.runId ?? null;
    this.respond = options.respond;
    this.json = options.json ?? FAST_EVENT_JSON;
    this.#sinkKinds = options.sinkKinds ?? NO_KINDS;
  }

  /** Whether an event of `eventType` would be read by anyone (the response or the sink). */
  wants(eventType: string): boolean {
    return this.respond || this.#sinkKinds.has(eventType) || this.#sinkKinds.has(kindOf(eventType));
  }

  /** Whether the sink takes events of `eventType`. */
  sends(eventType: string): boolean {
    return this.#sinkKinds.has(eventType);
  }

  /**
   * Records an event for the sink only, when it takes the type: the response (`include_events`)
   * does not show it. {@link FEATURE_ROWS} repeats what the response's FEATURE events show.
   */
  addForSink(eventType: string, eventData: Record<string, unknown>): void {
    if (!this.#sinkKinds.has(eventType)) return;
    const recorded = recordedEventOf(eventType, eventData);
    if (recorded === undefined) this.#failed += 1;
    else this.#recorded.push({ ...recorded, sinkOnly: true });
  }

  /** Records one event if anyone wants its type; one whose data is not JSON is counted and left out. */
  add(eventType: string, eventData: Record<string, unknown>): void {
    if (!this.wants(eventType)) return;
    const recorded = recordedEventOf(eventType, eventData);
    if (recorded === undefined) this.#failed += 1;
    else this.#recorded.push(recorded);
  }

  /**
   * {@link add} for data already written as JSON text, the JSON of an object (the pipeline's own
   * events, written by {@link json}).
   */
  addJson(eventType: string, dataJson: string): void {
    if (this.wants(eventType)) this.#recorded.push(recordedEvent(eventType, dataJson));
  }

  /** The request's envelope; `event_timestamp` is when the request started. */
  get envelope(): EventEnvelope {
    return {
      request_id: this.#requestId,
      api_source: this.#apiSource,
      event_timestamp: new Date(this.#startedAt).toISOString(),
      run_id: this.#runId,
    };
  }

  /**
   * Every event recorded, in order, each with the envelope: what `include_events` returns, read
   * back from the JSON the sink gets, so that both say the same.
   */
  get events(): RankdEvent[] {
    const { request_id, api_source, event_timestamp, run_id } = this.envelope;
    return this.#recorded.flatMap(({ json, sinkOnly }) => {
      if (sinkOnly) return [];
      const { event_type, event_data } = JSON.parse(json) as Pick<RankdEvent, 'event_type' | 'event_data'>;
      return [{ request_id, api_source, event_timestamp, event_type, event_data, run_id }];
    });
  }

  /**
   * The events the sink takes: all of them, unless some were recorded only for the response;
   * undefined when there are none (most requests, when only some are sampled: no envelope to make).
   */
  forSink(): RequestEvents | undefined {
    if (this.#recorded.length === 0 && this.#failed === 0) return undefined;
    const events = !this.respond
      ? this.#recorded
      : this.#recorded.filter(
          (e) => this.#sinkKinds.has(e.event_type) || this.#sinkKinds.has(kindOf(e.event_type)),
        );
    return events.length === 0 && this.#failed === 0
      ? undefined
      : { envelope: this.envelope, events, failed: this.#failed };
  }
}
