import { METHODS } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** Most bytes of a request id kept: every id rankd accepts fits (`requestIdOf`: up to 128 characters). */
const ID_BYTES = 128;
/** Most bytes of a URL kept; a longer one is cut, and flagged as cut. */
const URL_BYTES = 256;
const SLOT_BYTES = ID_BYTES + URL_BYTES;
/** Int32 fields per slot: id length, URL length, method code, whether the URL was cut. */
const FIELDS = 4;
/** GET and POST first: the method is found by `indexOf`, and nearly every request is one of them. */
const METHOD_CODES: readonly string[] = [
  'GET',
  'POST',
  ...METHODS.filter((m) => m !== 'GET' && m !== 'POST'),
];

/** A slot token meaning "holds nothing": never claimed, or already released. */
const NO_SLOT = -1;
/** A slot token meaning "counted in the overflow": every slot was taken when the request came. */
export const OVERFLOW_SLOT = -2;

/** One request in flight, as a reader of the slots sees it. */
interface InFlightRequest {
  /** The request id (`reqId` in the log lines). */
  readonly id: string;
  readonly method: string;
  /** Path and query; cut to 256 bytes (then ending in `…`). */
  readonly url: string;
  /** When the request came in, ms since the epoch. */
  readonly startedAt: number;
}

/** What {@link readInFlightRequests} finds. */
export interface InFlightSnapshot {
  /** Requests in slots, oldest first, at most the limit asked for. */
  readonly requests: InFlightRequest[];
  /** Requests in flight that are not listed: slots were full when they came, or past the limit. */
  readonly notListed: number;
}

/** The typed arrays over one shared buffer; both sides build the same ones. */
interface Layout {
  /** [0]: requests in flight that found no free slot. */
  readonly overflow: Int32Array;
  /** Per slot, a sequence number: odd while the slot holds a request, even while it is free. */
  readonly sequence: Int32Array;
  readonly fields: Int32Array;
  readonly startedAt: Float64Array;
  readonly bytes: Uint8Array;
}

function layoutOf(buffer: SharedArrayBuffer): Layout {
  const slots = slotCountOf(buffer);
  // Float64 fields first: they need 8-byte alignment.
  let offset = 0;
  const startedAt = new Float64Array(buffer, offset, slots);
  offset += 8 * slots;
  const overflow = new Int32Array(buffer, offset, 1);
  offset += 4;
  const sequence = new Int32Array(buffer, offset, slots);
  offset += 4 * slots;
  const fields = new Int32Array(buffer, offset, FIELDS * slots);
  offset += 4 * FIELDS * slots;
  const bytes = new Uint8Array(buffer, offset, SLOT_BYTES * slots);
  return { overflow, sequence, fields, startedAt, bytes };
}

function bufferBytes(slots: number): number {
  return 4 + slots * (8 + 4 + 4 * FIELDS + SLOT_BYTES);
}

function slotCountOf(buffer: SharedArrayBuffer): number {
  return (buffer.byteLength - 4) / (8 + 4 + 4 * FIELDS + SLOT_BYTES);
}

/**
 * The requests a process is running, in a fixed number of slots in a `SharedArrayBuffer`, so that
 * another thread can list them while this one is stuck (the loop watchdog, `loop-watchdog.ts`).
 * The main thread claims a slot when a request comes in and releases it when the request ends;
 * when every slot is taken the request is only counted. Nothing is allocated per request but
 * what `TextEncoder.encodeInto` returns, and there is no per-request `Map` or `Set`
 * (decisions/DR-009): a stack of free slot numbers, and a token the request carries.
 *
 * A reader sees a slot as a seqlock: the writer fills a free slot, then makes its sequence odd;
 * a slot read between two equal odd sequence numbers was not rewritten meanwhile.
 */
export class InFlightRequests {
  /** The memory the slots live in; {@link readInFlightRequests} reads it from any thread. */
  readonly buffer: SharedArrayBuffer;
  readonly #layout: Layout;
  readonly #free: Int32Array;
  #freeCount: number;
  readonly #idViews: Uint8Array[] = [];
  readonly #urlViews: Uint8Array[] = [];
  readonly #encoder = new TextEncoder();

  /** @param slots requests listed at most; more are counted. @defaultValue `256` */
  constructor(slots = 256) {
    if (!Number.isInteger(slots) || slots < 1)
      throw new RangeError(`slots must be a positive integer: ${slots}`);
    this.buffer = new SharedArrayBuffer(bufferBytes(slots));
    this.#layout = layoutOf(this.buffer);
    this.#free = new Int32Array(slots);
    // Popped from the end: slot 0 is taken first (easier to read in a dump).
    for (let i = 0; i < slots; i++) this.#free[i] = slots - 1 - i;
    this.#freeCount = slots;
    // One view per field and slot, made once: encodeInto then needs no subarray per request.
    const { bytes } = this.#layout;
    for (let slot = 0; slot < slots; slot++) {
      const base = bytes.byteOffset + slot * SLOT_BYTES;
      this.#idViews.push(new Uint8Array(this.buffer, base, ID_BYTES));
      this.#urlViews.push(new Uint8Array(this.buffer, base + ID_BYTES, URL_BYTES));
    }
  }

  /** How many slots there are. */
  get slots(): number {
    return this.#free.length;
  }

  /**
   * Records a request that has come in. Returns its token for {@link release}: a slot number, or
   * {@link OVERFLOW_SLOT} when every slot is taken.
   */
  claim(id: string, method: string, url: string): number {
    const { overflow, sequence, fields, startedAt } = this.#layout;
    if (this.#freeCount === 0) {
      Atomics.add(overflow, 0, 1);
      return OVERFLOW_SLOT;
    }
    const slot = this.#free[--this.#freeCount] as number;
    const at = slot * FIELDS;
    fields[at] = this.#encoder.encodeInto(id, this.#idViews[slot] as Uint8Array).written;
    const encoded = this.#encoder.encodeInto(url, this.#urlViews[slot] as Uint8Array);
    fields[at + 1] = encoded.written;
    fields[at + 2] = METHOD_CODES.indexOf(method);
    fields[at + 3] = encoded.read < url.length ? 1 : 0;
    startedAt[slot] = Date.now();
    // Published last: the atomic write orders the plain writes above before it for a reader.
    Atomics.add(sequence, slot, 1);
    return slot;
  }

  /** Records that the request holding `token` (from {@link claim}) has ended. Call once per claim. */
  release(token: number): void {
    if (token === OVERFLOW_SLOT) {
      Atomics.sub(this.#layout.overflow, 0, 1);
      return;
    }
    if (token < 0) return;
    Atomics.add(this.#layout.sequence, token, 1);
    this.#free[this.#freeCount++] = token;
  }
}

/**
 * Lists the requests recorded in `buffer` (an {@link InFlightRequests.buffer}), oldest first, at
 * most `limit` of them; the rest, and those that found no slot, are counted. Safe from any thread
 * while the owner keeps writing: a slot that changes while it is read is left out (then the owner
 * is not stuck, and the list is only a moment's picture anyway).
 */
export function readInFlightRequests(
  buffer: SharedArrayBuffer,
  limit = Number.POSITIVE_INFINITY,
): InFlightSnapshot {
  const { overflow, sequence, fields, startedAt, bytes } = layoutOf(buffer);
  const decoder = new TextDecoder();
  const found: InFlightRequest[] = [];
  for (let slot = 0; slot < sequence.length; slot++) {
    const before = Atomics.load(sequence, slot);
    if ((before & 1) === 0) continue;
    const at = slot * FIELDS;
    const base = slot * SLOT_BYTES;
    // slice(): TextDecoder does not take views of shared memory, and the copy is what is checked.
    const id = decoder.decode(bytes.slice(base, base + Math.min(fields[at] ?? 0, ID_BYTES)));
    const url = decoder.decode(
      bytes.slice(base + ID_BYTES, base + ID_BYTES + Math.min(fields[at + 1] ?? 0, URL_BYTES)),
    );
    const method = METHOD_CODES[fields[at + 2] ?? -1] ?? 'OTHER';
    const cut = fields[at + 3] === 1;
    const started = startedAt[slot] ?? 0;
    if (Atomics.load(sequence, slot) !== before) continue;
    found.push({ id, method, url: cut ? `${url}…` : url, startedAt: started });
  }
  found.sort((a, b) => a.startedAt - b.startedAt);
  const requests = found.length > limit ? found.slice(0, limit) : found;
  return { requests, notListed: Math.max(0, Atomics.load(overflow, 0)) + found.length - requests.length };
}

/** Where a request keeps its slot token: a symbol, so the request's public type is unchanged. */
const SLOT = Symbol('rankd.inFlightSlot');
type Holder = { [SLOT]: number };

/**
 * Records every request of `server` in `requests` from its first hook (`onRequest`, registered
 * before any other so that a request stuck in a later hook is listed) until it has been answered
 * (`onResponse`) or its client went away (`onRequestAbort`: then `onResponse` never runs). Call
 * before the server is ready.
 */
export function installInFlightRecording(server: FastifyInstance, requests: InFlightRequests): void {
  // A decorator, so every request object has the field from its construction (one hidden class).
  server.decorateRequest(SLOT, NO_SLOT);
  server.addHook('onRequest', (request, _reply, done) => {
    (request as unknown as Holder)[SLOT] = requests.claim(request.id, request.method, request.url);
    done();
  });
  const release = (request: FastifyRequest) => {
    const holder = request as unknown as Holder;
    const token = holder[SLOT];
    // Both hooks can run for one request: only the first releases.
    holder[SLOT] = NO_SLOT;
    requests.release(token);
  };
  server.addHook('onResponse', (request: FastifyRequest, _reply: FastifyReply, done) => {
    release(request);
    done();
  });
  server.addHook('onRequestAbort', (request, done) => {
    release(request);
    done();
  });
}
