/**
 * How long a cached value may be served at most, in ms: a safety net under the invalidations,
 * not what keeps values fresh (DR-020).
 */
export const READ_CACHE_TTL_MS = 300_000;

/** What one entry costs besides its key and value bytes: the entry, the Map slot, the Buffer and its store. */
const ENTRY_OVERHEAD_BYTES = 160;

/** Invalidations remembered for the reads in flight; a read that saw more caches nothing. */
const RECENT_INVALIDATIONS = 1024;

/** Bits of the doorkeeper: a key is admitted on its second read within a window. */
const DOORKEEPER_BITS = 1 << 22;

/** Entries looked at, at most, to find one not read since it was last passed over (CLOCK). */
const MAX_SECOND_CHANCES = 8;

/** One cached value. */
interface Entry {
  readonly value: Buffer;
  readonly bytes: number;
  readonly expiresAt: number;
  /** Read since the eviction hand last passed it: spared once. */
  referenced: boolean;
}

/** What a read needs to remember while its MGET is out: see {@link ReadCache.begin}. */
export interface ReadTicket {
  readonly generation: number;
  readonly sequence: number;
}

/** The cache's counters, for metrics. */
export interface ReadCacheStats {
  hits: number;
  misses: number;
  /** Entries dropped by an invalidation from Redis or a write of this process. */
  invalidations: number;
  /** Whole-cache drops: tracking lost or re-established, FLUSHALL, a cluster's masters changed. */
  flushes: number;
  evictions: number;
}

/**
 * A process's cache of Redis string values (entity index values and feature rows) by key, bounded
 * by bytes: CLOCK eviction (an LRU whose hits only set a flag), a TTL as a safety net, and a
 * doorkeeper so that a key read once is never copied nor stored (DR-020). It serves only while
 * {@link enable}d, i.e. while an {@link InvalidationTracker} holds every node's invalidations;
 * anything that may have missed one calls {@link flush}.
 *
 * A read takes a {@link begin} ticket before its MGET and offers what it read with it: values
 * whose key was invalidated while the read was out, or read across a flush, are not stored.
 */
export class ReadCache {
  /** The most bytes the entries may take (keys, values and overhead). */
  readonly capacityBytes: number;
  readonly stats: ReadCacheStats = { hits: 0, misses: 0, invalidations: 0, flushes: 0, evictions: 0 };
  readonly #entries = new Map<string, Entry>();
  /** Only keys under these are stored: those whose invalidations the tracker asks for. */
  readonly prefixes: readonly string[];
  readonly #recent: string[] = new Array<string>(RECENT_INVALIDATIONS).fill('');
  readonly #doorkeeper = new Uint32Array(DOORKEEPER_BITS / 32);
  readonly #doorkeeperWindow: number;
  #doorkeeperOffers = 0;
  #bytes = 0;
  /** The eviction hand: walks the entries in insertion order, those spared going to the back. */
  #hand: MapIterator<[string, Entry]> = this.#entries.entries();
  #enabled = false;
  /** Bumped by every flush and enable: a read that began under another generation stores nothing. */
  #generation = 0;
  /** Count of invalidated keys so far; the last {@link RECENT_INVALIDATIONS} are in #recent. */
  #sequence = 0;

  /** `prefixes`: only keys under them are stored (those whose invalidations the tracker asks for). */
  constructor(capacityBytes: number, prefixes: readonly string[]) {
    this.capacityBytes = capacityBytes;
    this.prefixes = prefixes;
    // About four reads of every key the cache could hold, at a few hundred bytes a key.
    this.#doorkeeperWindow = Math.max(10_000, Math.ceil(capacityBytes / 100));
  }

  /** Whether the cache serves and stores now. */
  get enabled(): boolean {
    return this.#enabled;
  }

  /** Bytes the entries take now. */
  get bytes(): number {
    return this.#bytes;
  }

  /** Entries now. */
  get size(): number {
    return this.#entries.size;
  }

  /** Starts serving (with nothing in it): every node's invalidations are now delivered. */
  enable(): void {
    this.#clear();
    this.#enabled = true;
  }

  /** Stops serving and drops everything: some invalidation may have been missed. */
  disable(): void {
    this.#enabled = false;
    this.flush();
  }

  /** Drops every entry (FLUSHALL, a lost or re-established tracking connection). */
  flush(): void {
    this.stats.flushes++;
    this.#clear();
  }

  /** The cached value of `key`, fresh at `now`, or undefined. */
  get(key: string, now: number): Buffer | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined || entry.expiresAt <= now) return undefined;
    entry.referenced = true;
    return entry.value;
  }

  /** To take before a read is sent; {@link offer} what it read with it. */
  begin(): ReadTicket {
    return { generation: this.#generation, sequence: this.#sequence };
  }

  /**
   * The keys invalidated since `ticket` was taken, `'all'` when too many to tell, or undefined
   * when none (the usual case): a read passes it to every {@link offer}.
   */
  invalidatedSince(ticket: ReadTicket): ReadonlySet<string> | 'all' | undefined {
    const since = this.#sequence - ticket.sequence;
    if (since === 0) return undefined;
    if (since > RECENT_INVALIDATIONS) return 'all';
    const keys = new Set<string>();
    for (let s = ticket.sequence; s < this.#sequence; s++)
      keys.add(this.#recent[s % RECENT_INVALIDATIONS] as string);
    return keys;
  }

  /**
   * Offers a value read from Redis under `ticket`: stored when the key was read before within the
   * doorkeeper's window, the cache serves, no flush happened since the ticket and the key was not
   * invalidated meanwhile (`invalidated`, from {@link invalidatedSince}). The value is copied: the
   * client's Buffers are views of its socket reads.
   */
  offer(
    key: string,
    value: Buffer,
    ticket: ReadTicket,
    invalidated: ReadonlySet<string> | 'all' | undefined,
    now: number,
  ): void {
    if (!this.#admit(key)) return;
    if (!this.#enabled || ticket.generation !== this.#generation) return;
    if (invalidated !== undefined && (invalidated === 'all' || invalidated.has(key))) return;
    if (!this.#covers(key)) return;
    const bytes = value.length + 2 * key.length + ENTRY_OVERHEAD_BYTES;
    if (bytes > this.capacityBytes / 16) return;
    const copy = Buffer.allocUnsafeSlow(value.length);
    value.copy(copy);
    const old = this.#entries.get(key);
    if (old !== undefined) {
      this.#bytes -= old.bytes;
      this.#entries.delete(key);
    }
    this.#entries.set(key, { value: copy, bytes, expiresAt: now + READ_CACHE_TTL_MS, referenced: false });
    this.#bytes += bytes;
    while (this.#bytes > this.capacityBytes) this.#evictOne();
  }

  /** Drops `key` (an invalidation from Redis, or a write of this process about to be sent). */
  invalidate(key: string): void {
    this.#recent[this.#sequence % RECENT_INVALIDATIONS] = key;
    this.#sequence++;
    const entry = this.#entries.get(key);
    if (entry === undefined) return;
    this.#entries.delete(key);
    this.#bytes -= entry.bytes;
    this.stats.invalidations++;
  }

  #clear(): void {
    this.#generation++;
    this.#entries.clear();
    this.#hand = this.#entries.entries();
    this.#bytes = 0;
  }

  #covers(key: string): boolean {
    for (const prefix of this.prefixes) if (key.startsWith(prefix)) return true;
    return false;
  }

  /** Whether `key` was offered before in this window (then admitted); marks it seen either way. */
  #admit(key: string): boolean {
    if (++this.#doorkeeperOffers > this.#doorkeeperWindow) {
      this.#doorkeeper.fill(0);
      this.#doorkeeperOffers = 0;
    }
    // FNV-1a over the UTF-16 units: a key's bit.
    let hash = 0x811c9dc5;
    for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193);
    const bit = (hash >>> 0) & (DOORKEEPER_BITS - 1);
    const word = bit >>> 5;
    const mask = 1 << (bit & 31);
    const seen = ((this.#doorkeeper[word] as number) & mask) !== 0;
    if (!seen) this.#doorkeeper[word] = (this.#doorkeeper[word] as number) | mask;
    return seen;
  }

  /** Evicts the oldest entry not read since the hand last passed it (the oldest of a few, at worst). */
  #evictOne(): void {
    for (let chance = 0; ; chance++) {
      // One iterator kept across evictions: a Map iterator made anew starts at the table's head and
      // steps over every entry deleted since the last rehash, which made each eviction cost more
      // the longer the cache had been full (measured: the full cache's server CPU ×5, DR-020).
      let next = this.#hand.next();
      if (next.done === true) {
        this.#hand = this.#entries.entries();
        next = this.#hand.next();
        if (next.done === true) return;
      }
      const [key, entry] = next.value;
      this.#entries.delete(key);
      if (entry.referenced && chance < MAX_SECOND_CHANCES) {
        entry.referenced = false;
        this.#entries.set(key, entry);
        continue;
      }
      this.#bytes -= entry.bytes;
      this.stats.evictions++;
      return;
    }
  }
}
