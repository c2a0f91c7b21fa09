import type { RankdEvent } from './request-context.js';

/** The envelope of an event as returned with `include_events` (docs/events.md). */
export interface EventEnvelope extends RankdEvent {
  request_id: string;
  api_source: string;
  event_timestamp: string;
}

/** Builds the events of one request, all with the same envelope fields. */
export class EventRecorder {
  readonly events: EventEnvelope[] = [];
  readonly #requestId: string;
  readonly #apiSource: string;
  readonly #timestamp = new Date().toISOString();

  constructor(requestId: string, apiSource: string) {
    this.#requestId = requestId;
    this.#apiSource = apiSource;
  }

  /** Records one event. */
  add(eventType: string, eventData: Record<string, unknown>): void {
    this.events.push({
      request_id: this.#requestId,
      api_source: this.#apiSource,
      event_timestamp: this.#timestamp,
      event_type: eventType,
      event_data: eventData,
    });
  }
}
