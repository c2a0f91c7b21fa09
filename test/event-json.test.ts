/**
 * Events as recorded: the ranking pipeline's own events written as JSON text straight from their
 * values (src/fast-paths/event-json.ts) must be exactly the text of the plain path, which builds
 * each event's object and `JSON.stringify`s it (PLAIN_EVENT_JSON, what FAST_PATHS=false uses), for
 * any text and any score; and an app's event whose data is not JSON is left out alone and counted.
 * (On and off over HTTP, stream entries compared: test/fast-paths.test.ts.)
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { recordOf } from '../src/events/event-record.js';
import { EventSink } from '../src/events/event-sink.js';
import { NullEventWriter } from '../src/events/event-writer.js';
import { EventPolicy, EventRecorder } from '../src/events/recorder.js';
import { FAST_EVENT_JSON as fast, PLAIN_EVENT_JSON as plain } from '../src/fast-paths/event-json.js';

/** Any text: quotes, backslashes, control characters, any code unit (lone surrogates included). */
const anyText = fc.string({ unit: 'binary' });
/** Scores as a model or a step may give them, the odd ones included. */
const anyScore = fc.oneof(fc.double(), fc.constantFrom(0, -0, 1e21, 1e-7, -1.5, Number.MAX_VALUE));

describe('the pipeline’s events as JSON text: the plain path’s text, byte for byte', () => {
  test('MODEL: score as a string, keys in order', () => {
    fc.assert(
      fc.property(
        anyText,
        fc.option(anyText),
        anyText,
        anyText,
        anyScore,
        (name, version, type, id, score) => {
          assert.equal(
            fast.modelEventData(name, version, type)(id, score),
            plain.modelEventData(name, version, type)(id, score),
          );
        },
      ),
    );
  });

  test('CANDIDATE and IMPRESSION: a score that is not finite written as null', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('candidate', 'impression' as const),
        anyText,
        anyText,
        anyScore,
        fc.nat(),
        (prefix, type, id, score, order) => {
          assert.equal(
            fast.placementEventData(prefix, type)(id, score, order),
            plain.placementEventData(prefix, type)(id, score, order),
          );
        },
      ),
    );
  });

  test('FEATURE: every kind of value, a vector as an array of numbers', () => {
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
          fast.featureEventData(type)(id, name, value),
          plain.featureEventData(type)(id, name, value),
        );
      }),
    );
  });

  test('BUSINESS_LOGIC: scores as strings', () => {
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
            fast.businessLogicEventData(type, order, step)(id, before, now),
            plain.businessLogicEventData(type, order, step)(id, before, now),
          );
        },
      ),
    );
  });

  test('the plain path’s objects are the documented ones (docs/reference/events.md)', () => {
    assert.deepEqual(JSON.parse(plain.modelEventData('M', null, 'product')('p1', 0.5)), {
      model_name: 'M',
      model_version: null,
      model_output: '0.5',
      entity_identifier: 'p1',
      entity_identifier_type: 'product',
    });
    assert.deepEqual(JSON.parse(plain.placementEventData('impression', 'product')('p1', Number.NaN, 2)), {
      entity_identifier: 'p1',
      entity_identifier_type: 'product',
      impression_score: null,
      impression_order: 2,
    });
    assert.deepEqual(JSON.parse(plain.businessLogicEventData('product', 0, 'Boost')('p1', 1, 2.5)), {
      entity_identifier: 'p1',
      entity_identifier_type: 'product',
      business_logic_pipeline_order: 0,
      business_logic_name: 'Boost',
      old_score: '1',
      new_score: '2.5',
    });
    assert.deepEqual(JSON.parse(plain.featureEventData('product')('p1', 'v:emb', Float32Array.of(0.5, 2))), {
      feature_identifier: 'p1',
      feature_identifier_type: 'product',
      feature_name: 'v:emb',
      feature_value: [0.5, 2],
    });
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
    events.addJson('MODEL', events.json.modelEventData('M', '1', 'product')('p"1', 0.5));
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
