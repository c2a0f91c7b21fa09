import { type RankdEvent, type RecordedEvent, type RequestEvents, recordedEventOf } from './recorder.js';

/**
 * One stream entry (one line of the event file): the events of one request, which share their
 * envelope, serialised once. One entry per request rather than per event is what keeps logging
 * cheap: a request of the spec's example has 32 events or more, and each XADD costs Redis and the
 * client more than the JSON it carries (docs/reference/events.md, "The stream"; DR-006).
 */
export interface EventRecord {
  readonly requestId: string;
  readonly apiSource: string;
  readonly timestamp: string;
  readonly runId: string | null;
  /** How many events `events` holds. */
  readonly count: number;
  /** JSON array of `{"event_type": ..., "event_data": ...}`, in recording order. */
  readonly events: string;
}

/**
 * A request's events as one record: their JSON, made when each was recorded, joined into an array.
 * Undefined when there are none.
 */
export function recordOf(batch: RequestEvents): EventRecord | undefined {
  const { envelope, events } = batch;
  if (events.length === 0) return undefined;
  return {
    requestId: envelope.request_id,
    apiSource: envelope.api_source,
    timestamp: envelope.event_timestamp,
    runId: envelope.run_id,
    count: events.length,
    events: `[${events.map((event) => event.json).join(',')}]`,
  };
}

/** Records of events with envelopes (feedback): consecutive events sharing an envelope share a record. */
export function recordsOf(events: readonly RankdEvent[]): { records: EventRecord[]; failed: number } {
  const records: EventRecord[] = [];
  let failed = 0;
  let group: RankdEvent[] = [];
  const close = () => {
    const first = group[0];
    if (first === undefined) return;
    const recorded: RecordedEvent[] = [];
    for (const { event_type, event_data } of group) {
      const event = recordedEventOf(event_type, event_data);
      if (event === undefined) failed += 1;
      else recorded.push(event);
    }
    const record = recordOf({ envelope: first, events: recorded, failed: 0 });
    if (record) records.push(record);
    group = [];
  };
  for (const event of events) {
    const first = group[0];
    if (
      first !== undefined &&
      (event.request_id !== first.request_id ||
        event.api_source !== first.api_source ||
        event.event_timestamp !== first.event_timestamp ||
        event.run_id !== first.run_id)
    )
      close();
    group.push(event);
  }
  close();
  return { records, failed };
}

/** The stream entry's fields, in order: `request_id`, `api_source`, `event_timestamp`, `run_id` (when set), `events`. */
export function recordFields(record: EventRecord): string[] {
  const fields = [
    'request_id',
    record.requestId,
    'api_source',
    record.apiSource,
    'event_timestamp',
    record.timestamp,
  ];
  if (record.runId !== null) fields.push('run_id', record.runId);
  fields.push('events', record.events);
  return fields;
}

/** The record as one JSON object (a line of the event file), with the stream entry's field names. */
export function recordJson(record: EventRecord): string {
  return (
    `{"request_id":${JSON.stringify(record.requestId)},"api_source":${JSON.stringify(record.apiSource)},` +
    `"event_timestamp":${JSON.stringify(record.timestamp)},"run_id":${JSON.stringify(record.runId)},` +
    `"events":${record.events}}`
  );
}

/**
 * The events of a stream entry's fields or of a file line's object, with their envelopes, or
 * undefined when it is not a record.
 */
export function eventsOfRecord(record: Record<string, unknown>): RankdEvent[] | undefined {
  const { request_id, api_source, event_timestamp, run_id } = record;
  if (typeof request_id !== 'string' || typeof event_timestamp !== 'string') return undefined;
  let events: unknown;
  try {
    events = typeof record.events === 'string' ? JSON.parse(record.events) : record.events;
  } catch {
    return undefined;
  }
  if (!Array.isArray(events)) return undefined;
  return events.map((e: { event_type?: unknown; event_data?: unknown }) => ({
    request_id,
    api_source: typeof api_source === 'string' ? api_source : '',
    event_timestamp,
    event_type: String(e?.event_type),
    event_data: (e?.event_data ?? {}) as Record<string, unknown>,
    run_id: typeof run_id === 'string' ? run_id : null,
  }));
}
