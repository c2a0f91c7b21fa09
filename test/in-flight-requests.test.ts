/**
 * The slots the loop watchdog reads the requests in flight from (src/http/in-flight-requests.ts):
 * whatever the order of claims and releases, what a reader lists is exactly the requests claimed
 * and not released (none lost, none twice), plus a count of those that found every slot taken;
 * and a Fastify server records each request once, aborted ones included.
 */
import assert from 'node:assert/strict';
import { request as httpRequest, METHODS } from 'node:http';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import Fastify from 'fastify';
import {
  InFlightRequests,
  installInFlightRecording,
  OVERFLOW_SLOT,
  readInFlightRequests,
} from '../src/http/in-flight-requests.js';

const utf8 = new TextEncoder();

/** A request as the model of the slots keeps it. */
interface Live {
  token: number;
  id: string;
  method: string;
  url: string;
}

/** Ids as rankd accepts them (`requestIdOf`): 1–128 visible ASCII characters. */
const anyId = fc.string({
  unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)),
  minLength: 1,
  maxLength: 128,
});
/** URLs of any text, long ones (cut at 256 bytes) included. */
const anyUrl = fc.string({ unit: 'binary', maxLength: 300 });
const anyMethod = fc.constantFrom(...METHODS);

type Step = { kind: 'claim'; id: string; method: string; url: string } | { kind: 'release'; pick: number };
const anyStep: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant('claim' as const), id: anyId, method: anyMethod, url: anyUrl }),
  fc.record({ kind: fc.constant('release' as const), pick: fc.nat() }),
);

/** Whether `listed` is how `url` reads back: whole when it fits in 256 bytes, else a prefix that fits, marked `…`. */
function readsBackAs(listed: string, url: string): boolean {
  if (utf8.encode(url).length <= 256) return listed === url;
  if (!listed.endsWith('…')) return false;
  const kept = listed.slice(0, -1);
  return url.startsWith(kept) && utf8.encode(kept).length <= 256 && utf8.encode(kept).length > 252;
}

function key(entry: { id: string; method: string }): string {
  return `${entry.method} ${entry.id}`;
}

/** Checks the reader's view against the model: same requests, the overflow counted. */
function checkAgainst(requests: InFlightRequests, live: readonly Live[]): void {
  const { requests: listed, notListed } = readInFlightRequests(requests.buffer);
  const inSlots = live.filter((entry) => entry.token >= 0);
  const tokens = inSlots.map((entry) => entry.token);
  assert.equal(new Set(tokens).size, tokens.length, 'two live requests share a slot');
  assert.equal(notListed, live.length - inSlots.length);
  assert.equal(listed.length, inSlots.length);
  // As multisets: requests claimed in the same millisecond are listed in any order.
  const expected = [...inSlots].sort((a, b) => key(a).localeCompare(key(b)) || a.url.localeCompare(b.url));
  const remaining = [...listed];
  for (const entry of expected) {
    const at = remaining.findIndex(
      (r) => r.id === entry.id && r.method === entry.method && readsBackAs(r.url, entry.url),
    );
    assert.notEqual(at, -1, `${entry.method} ${entry.url} (${entry.id}) is not listed`);
    remaining.splice(at, 1);
  }
}

describe('InFlightRequests', () => {
  test('lists exactly the requests claimed and not released; counts the ones past the slots', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 6 }), fc.array(anyStep, { maxLength: 60 }), (slots, steps) => {
        const requests = new InFlightRequests(slots);
        const live: Live[] = [];
        for (const step of steps) {
          if (step.kind === 'claim') {
            const token = requests.claim(step.id, step.method, step.url);
            const inUse = live.filter((entry) => entry.token >= 0).length;
            assert.equal(
              token === OVERFLOW_SLOT,
              inUse === slots,
              'overflow exactly when every slot is taken',
            );
            live.push({ token, id: step.id, method: step.method, url: step.url });
          } else if (live.length > 0) {
            const [entry] = live.splice(step.pick % live.length, 1);
            requests.release((entry as Live).token);
          }
          checkAgainst(requests, live);
        }
        for (const entry of live.splice(0)) requests.release(entry.token);
        checkAgainst(requests, live);
      }),
    );
  });

  test('lists the oldest first, at most the limit asked for; the rest are counted', () => {
    const requests = new InFlightRequests(4);
    for (const id of ['a', 'b', 'c']) requests.claim(id, 'GET', `/${id}`);
    requests.claim('over', 'POST', '/x'); // the 4th slot
    requests.claim('past-the-slots', 'POST', '/y'); // counted only
    const { requests: listed, notListed } = readInFlightRequests(requests.buffer, 2);
    assert.equal(listed.length, 2);
    assert.equal(notListed, 3);
    for (let i = 1; i < listed.length; i++)
      assert.ok((listed[i - 1]?.startedAt ?? 0) <= (listed[i]?.startedAt ?? 0));
  });

  test('a Fastify server records each request until its answer, and an aborted one until the abort', async () => {
    const requests = new InFlightRequests(2);
    const server = Fastify({ requestIdHeader: 'x-request-id' });
    installInFlightRecording(server, requests);
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let arrived: () => void = () => undefined;
    const arrival = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    server.get('/hold', async () => {
      arrived();
      await held;
      return { ok: true };
    });
    server.get('/now', async () => ({
      listed: readInFlightRequests(requests.buffer).requests.map((r) => r.url),
    }));
    await server.listen({ port: 0, host: '127.0.0.1' });
    try {
      const { port } = server.server.address() as { port: number };
      // A client that goes away while its request is held: onResponse never runs for it.
      const aborted = httpRequest({
        port,
        host: '127.0.0.1',
        path: '/hold?aborted',
        headers: { 'x-request-id': 'gone' },
      });
      aborted.on('error', () => undefined);
      aborted.end();
      await arrival;
      assert.deepEqual(
        readInFlightRequests(requests.buffer).requests.map((r) => [r.id, r.url]),
        [['gone', '/hold?aborted']],
      );
      aborted.destroy();
      await waitUntil(() => readInFlightRequests(requests.buffer).requests.length === 0);
      // Its handler finishes later: the slot must not be freed a second time (it would then be
      // handed to two requests at once).
      release();
      await new Promise((resolve) => setTimeout(resolve, 50));
      const base = `http://127.0.0.1:${port}`;
      const answers = await Promise.all([
        fetch(`${base}/now?first`).then((r) => r.json()),
        fetch(`${base}/now?second`).then((r) => r.json()),
      ]);
      // Each sees itself (and maybe the other) in its own slot.
      for (const [i, answer] of answers.entries()) {
        const listed = (answer as { listed: string[] }).listed;
        assert.ok(listed.includes(i === 0 ? '/now?first' : '/now?second'), JSON.stringify(answers));
        assert.equal(new Set(listed).size, listed.length);
      }
      assert.deepEqual(readInFlightRequests(requests.buffer), { requests: [], notListed: 0 });
    } finally {
      release();
      await server.close();
    }
  });
});

async function waitUntil(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 10));
}
