/**
 * One logged event, in the predecessor's envelope (docs/events.md). `event_data` depends on
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

/** The event types rankd itself records; any other type is an app's custom event. */
export const BUILT_IN_EVENT_TYPES: ReadonlySet<string> = new Set([
  'FEATURE',
  'MODEL',
  'BUSINESS_LOGIC',
  'CANDIDATE',
  'IMPRESSION',
  'EXPERIMENTATION',
  'FEEDBACK',
]);

/** The kind an event type counts as in `EVENTS_KINDS`: itself when built in, else `CUSTOM`. */
export function kindOf(eventType: string): string {
  return BUILT_IN_EVENT_TYPES.has(eventType) ? eventType : 'CUSTOM';
}

const NO_KINDS: ReadonlySet<string> = new Set();

/**
 * Which events of a request go to the sink, from `EVENTS_KINDS` and `EVENTS_FEATURE_SAMPLE_RATE`.
 * Built once per server; per request it only draws whether FEATURE events are sampled.
 */
export class EventPolicy {
  /** Sends nothing to a sink (`EVENTS_SINK=off`, or code that runs a pipeline without a server). */
  static readonly NONE = new EventPolicy([], 0);
  readonly #kinds: ReadonlySet<string>;
  readonly #withFeatures: ReadonlySet<string>;
  readonly #rate: number;
  readonly #random: () => number;

  constructor(kinds: readonly string[], featureSampleRate: number, random: () => number = Math.random) {
    this.#kinds = kinds.length === 0 ? NO_KINDS : new Set(kinds);
    this.#withFeatures = new Set([...kinds, 'FEATURE']);
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

/** An event as a request records it: its envelope is the request's, kept once (see {@link RequestEvents}). */
export interface RecordedEvent {
  readonly event_type: string;
  readonly event_data: Record<string, unknown>;
}

/** What every event of one request shares. */
export interface EventEnvelope {
  readonly request_id: string;
  readonly api_source: string;
  readonly event_timestamp: string;
  readonly run_id: string | null;
}

/** One request's events for the sink: the envelope once, then the events. */
export interface RequestEvents {
  readonly envelope: EventEnvelope;
  readonly events: readonly RecordedEvent[];
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
  readonly #recorded: RecordedEvent[] = [];
  readonly #sinkKinds: ReadonlySet<string>;
  readonly #requestId: string;
  readonly #apiSource: string;
  readonly #runId: string | null;
  readonly #startedAt = Date.now();

  constructor(
    envelope: { requestId: string; apiSource: string; runId?: string | null },
    options: { respond: boolean; sinkKinds?: ReadonlySet<string> },
  ) {
    this.#requestId = envelope.requestId;
    this.#apiSource = envelope.apiSource;
    this.#runId = envelope.runId ?? null;
    this.respond = options.respond;
    this.#sinkKinds = options.sinkKinds ?? NO_KINDS;
  }

  /** Whether an event of `eventType` would be read by anyone (the response or the sink). */
  wants(eventType: string): boolean {
    return this.respond || this.#sinkKinds.has(eventType) || this.#sinkKinds.has(kindOf(eventType));
  }

  /** Records one event if anyone wants its type. */
  add(eventType: string, eventData: Record<string, unknown>): void {
    if (this.wants(eventType)) this.#recorded.push({ event_type: eventType, event_data: eventData });
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

  /** Every event recorded, in order, each with the envelope: what `include_events` returns. */
  get events(): RankdEvent[] {
    const { request_id, api_source, event_timestamp, run_id } = this.envelope;
    return this.#recorded.map(({ event_type, event_data }) => ({
      request_id,
      api_source,
      event_timestamp,
      event_type,
      event_data,
      run_id,
    }));
  }

  /**
   * The events the sink takes: all of them, unless some were recorded only for the response;
   * undefined when there are none (most requests, when only some are sampled: no envelope to make).
   */
  forSink(): RequestEvents | undefined {
    if (this.#recorded.length === 0) return undefined;
    const events = !this.respond
      ? this.#recorded
      : this.#recorded.filter(
          (e) => this.#sinkKinds.has(e.event_type) || this.#sinkKinds.has(kindOf(e.event_type)),
        );
    return events.length === 0 ? undefined : { envelope: this.envelope, events };
  }
}
