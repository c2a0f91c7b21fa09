/**
 * Events as recorded: the ranking pipeline's own events written as JSON text straight from their
 * values (event-json.ts) must be exactly what `JSON.stringify` makes of the event objects, and an
 * app's event whose data is not JSON is left out alone and counted.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { recordOf } from '../src/events/event-record.js';
import { EventSink } from '../src/events/event-sink.js';
import { NullEventWriter } from '../src/events/event-writer.js';
import { EventPolicy, EventRecorder } from '../src/events/recorder.js';
import {
  businessLogicEventData,
  featureEventData,
  modelEventData,
  placementEventData,
} from '../src/fast-paths/event-json.js';

/** Any text: quotes, backslashes, control characters, any code unit (lone surrogates included). */
const anyText = fc.string({ unit: 'binary' });
/** Scores as a model or a step may give them, the odd ones included. */
const anyScore = fc.oneof(fc.double(), fc.constantFrom(0, -0, 1e21, 1e-7, -1.5, Number.MAX_VALUE));

describe('the pipeline’s events as JSON text', () => {
  test('MODEL: the same text as JSON.stringify of the event data, keys in order', () => {
    fc.assert(
      fc.property(
        anyText,
        fc.option(anyText),
        anyText,
        anyText,
        anyScore,
        (name, version, type, id, score) => {
          assert.equal(
            modelEventData(name, version, type)(id, score),
            JSON.stringify({
              model_name: name,
              model_version: version,
              model_output: String(score),
              entity_identifier: id,
              entity_identifier_type: type,
            }),
          );
        },
      ),
    );
  });

  test('CANDIDATE and IMPRESSION: the same text, a score that is not finite written as null', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('candidate', 'impression' as const),
        anyText,
        anyText,
        anyScore,
        fc.nat(),
        (prefix, type, id, score, order) => {
          assert.equal(
            placementEventData(prefix, type)(id, score, order),
            JSON.stringify({
              entity_identifier: id,
              entity_identifier_type: type,
              [`${prefix}_score`]: score,
              [`${prefix}_order`]: order,
            }),
          );
        },
      ),
    );
  });

  test('FEATURE: the same text for every kind of value, a vector as an array of numbers', () => {
    const anyValue = fc.oneof(
      anyScore,
      fc.boolean(),
      anyText,
      fc.constant(null),
      fc.array(fc.float(), { maxLength: 8 }).map((values) => Float32Array.from(values)),
    );
    fc.assert(
      fc.property(anyText, anyText, anyText, anyValue, (type, id, name, value) => {
        assert.equal(
          featureEventData(type)(id, name, value),
          JSON.stringify({
            feature_identifier: id,
            feature_identifier_type: type,
            feature_name: name,
            feature_value: value instanceof Float32Array ? Array.from(value) : value,
          }),
        );
      }),
    );
  });

  test('BUSINESS_LOGIC: the same text, scores as strings', () => {
    fc.assert(
      fc.property(
        anyText,
        fc.nat(),
        anyText,
        anyText,
        anyScore,
        anyScore,
        (type, order, step, id, before, now) => {
          assert.equal(
            businessLogicEventData(type, order, step)(id, before, now),
            JSON.stringify({
              entity_identifier: id,
              entity_identifier_type: type,
              business_logic_pipeline_order: order,
              business_logic_name: step,
              old_score: String(before),
              new_score: String(now),
            }),
          );
        },
      ),
    );
  });
});

describe('recording', () => {
  const recorder = () =>
    new EventRecorder(
      { requestId: 'r-1', apiSource: '/api/v1/ranking' },
      { respond: true, sinkKinds: new Set(['MODEL', 'CUSTOM']) },
    );

  test('an event recorded as text and one recorded as an object read back alike, and reach the sink as one JSON array', () => {
    const events = recorder();
    events.addJson('MODEL', modelEventData('M', '1', 'product')('p"1', 0.5));
    events.add('MY_EVENT', { entity_identifier: 'p"1', note: 'é\n', nested: { list: [1, null] } });
    assert.deepEqual(
      events.events.map(({ event_type, event_data }) => ({ event_type, event_data })),
      [
        {
          event_type: 'MODEL',
          event_data: {
            model_name: 'M',
            model_version: '1',
            model_output: '0.5',
            entity_identifier: 'p"1',
            entity_identifier_type: 'product',
          },
        },
        {
          event_type: 'MY_EVENT',
          event_data: { entity_identifier: 'p"1', note: 'é\n', nested: { list: [1, null] } },
        },
      ],
    );
    const batch = events.forSink();
    assert.ok(batch);
    assert.equal(
      recordOf(batch)?.events,
      JSON.stringify(events.events.map(({ event_type, event_data }) => ({ event_type, event_data }))),
    );
  });

  test('an event whose data is not JSON (a BigInt, a cycle) is left out alone, and the sink counts it as dropped', async () => {
    const events = recorder();
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    events.add('MY_EVENT', { big: 10n });
    events.add('MY_EVENT', cycle);
    events.add('MY_EVENT', { fine: true });
    assert.deepEqual(
      events.events.map((e) => e.event_data),
      [{ fine: true }],
    );
    const sink = new EventSink({
      writer: new NullEventWriter(),
      policy: EventPolicy.NONE,
      bufferMax: 100,
      batchSize: 100,
      flushIntervalMs: 60_000,
      closeTimeoutMs: 100,
    });
    const batch = events.forSink();
    assert.ok(batch);
    assert.equal(batch.failed, 2);
    sink.enqueue(batch);
    assert.deepEqual(sink.stats(), { written: 0, dropped: 2, failedBatches: 0, pending: 1 });
    await sink.close();
  });
});
