/**
 * The sink's buffering on its own, with buffer and batch sizes small enough to reach: a full batch
 * is written without waiting for the interval, the bounded buffer drops whole requests and counts
 * them, and close writes what is waiting. The server's sink uses SINK_BUFFERING (create-sink.ts;
 * test/retired-settings.test.ts checks it keeps the old defaults).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { EventSink, type EventSinkOptions } from '../src/events/event-sink.js';
import { FileEventWriter, RedisStreamWriter } from '../src/events/event-writer.js';
import { EventPolicy, EventRecorder, type RequestEvents } from '../src/events/recorder.js';
import { RedisConnection } from '../src/redis/connection.js';
import { freePort } from './helpers/free-port.js';

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function eventFile(): string {
  const dir = mkdtempSync(join(tmpdir(), 'rankd-event-sink-'));
  dirs.push(dir);
  return join(dir, 'events.jsonl');
}

/** One request's events for the sink: `count` CUSTOM events. */
function requestEvents(requestId: string, count: number): RequestEvents {
  const recorder = new EventRecorder(
    { requestId, apiSource: '/api/v1/ranking' },
    { respond: false, sinkKinds: new Set(['CUSTOM']) },
  );
  for (let i = 0; i < count; i++) recorder.add('MY_EVENT', { i });
  const batch = recorder.forSink();
  assert.ok(batch);
  return batch;
}

/** A sink that writes only when `batchSize` events wait, or when told: its interval is an hour. */
function sink(options: Partial<EventSinkOptions> & Pick<EventSinkOptions, 'writer'>): EventSink {
  return new EventSink({
    policy: EventPolicy.NONE,
    bufferMax: 1000,
    batchSize: 1000,
    flushIntervalMs: 3_600_000,
    closeTimeoutMs: 2000,
    ...options,
  });
}

const linesOf = (file: string) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.length > 0);

describe('the event sink', () => {
  test('a full batch is written without waiting for the interval', async () => {
    const file = eventFile();
    const events = sink({ writer: new FileEventWriter(file), batchSize: 10 });
    try {
      events.enqueue(requestEvents('b1', 5));
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal(events.stats().pending, 5, 'half a batch waits');
      events.enqueue(requestEvents('b2', 5));
      // The write starts on the next turn of the event loop; nothing else runs it (the interval is an hour).
      for (let turn = 0; turn < 1000 && events.stats().written < 10; turn++)
        await new Promise((resolve) => setTimeout(resolve, 5));
      assert.deepEqual(events.stats(), { written: 10, dropped: 0, failedBatches: 0, pending: 0 });
      assert.deepEqual(
        linesOf(file).map((line) => JSON.parse(line).request_id),
        ['b1', 'b2'],
      );
    } finally {
      await events.close();
    }
  });

  test('an unreachable sink fills the bounded buffer, then whole requests are dropped and counted', async () => {
    const redis = new RedisConnection({
      url: `redis://127.0.0.1:${await freePort()}`,
      connectTimeoutMs: 200,
      commandTimeoutMs: 200,
    });
    const writer = new RedisStreamWriter(redis, 'default:events', {
      maxBytes: 0,
      maxAgeMs: 0,
      maxmemoryShare: 1,
    });
    const events = sink({ writer, bufferMax: 40 });
    try {
      for (let i = 0; i < 5; i++) events.enqueue(requestEvents(`down-${i}`, 15));
      // 15 events a request: two requests fit in 40, the other three are dropped whole.
      assert.deepEqual(events.stats(), { written: 0, dropped: 45, failedBatches: 0, pending: 30 });
      assert.equal(events.droppedBy().buffer_full, 45);
    } finally {
      await events.close();
    }
  });

  test('close writes the events still waiting', async () => {
    const file = eventFile();
    const events = sink({ writer: new FileEventWriter(file) });
    events.enqueue(requestEvents('on-close', 15));
    assert.equal(events.stats().pending, 15);
    await events.close();
    assert.deepEqual(events.stats(), { written: 15, dropped: 0, failedBatches: 0, pending: 0 });
    assert.equal(linesOf(file).length, 1);
  });
});
