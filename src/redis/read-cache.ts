/**
 * How long a cached value may be served at most, in ms: a safety net under the invalidations,
 * not what keeps values fresh (DR-020).
 */
export const READ_CACHE_TTL_MS = 300_000;

/**
 * What one entry costs besides its key and value bytes: the entry, its table and order slots, the
 * Buffer and its own store (measured: about 520 bytes on Node 20, heap and external together).
 */
const ENTRY_OVERHEAD_BYTES = 512;

/** Invalidations remembered for the reads in flight; a read that saw more caches nothing. */
const RECENT_INVALIDATIONS = 1024;

/** Bits of the doorkeeper: a key is admitted on its second read within a window. */
const DOORKEEPER_BITS = 1 << 22;

/** Entries looked at, at most, to find one not read since it was last passed over (CLOCK). */
const MAX_SECOND_CHANCES = 8;

/** One cached value, under `rest` in its space's table. */
interface Entry {
  readonly table: Map<string, Entry>;
  readonly rest: string;
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
 * A process's cache of Redis string values (entity index values and feature rows), bounded
 * by bytes: CLOCK eviction (an LRU whose hits only set a flag), a TTL as a safety net, and a
 * doorkeeper so that a key read once is never copied nor stored (DR-020). It serves only while
 * {@link enable}d, i.e. while an {@link InvalidationTracker} holds every node's invalidations;
 * anything that may have missed one calls {@link flush}.
 *
 * Values are found by a key's two parts (`SplitKeys`, keys.ts): a table per space (an entity type's or
 * a feature view's keys), looked up by the rest, which on a single Redis is the entity id itself:
 * a hit builds no key string (hashing a freshly built key cost about 1 µs a look-up, DR-020).
 *
 * A read takes a {@link begin} ticket before its MGET and offers what it read with it: values
 * whose key was invalidated while the read was out, or read across a flush, are not stored.
 */
export class ReadCache {
  /** The most bytes the entries may take (keys, values and overhead). */
  readonly capacityBytes: number;
  readonly stats: ReadCacheStats = { hits: 0, misses: 0, invalidations: 0, flushes: 0, evictions: 0 };
  /** By space, its values by rest; null for a space no prefix covers (nothing stored there). */
  readonly #tables = new Map<string, Map<string, Entry> | null>();
  /** Every entry, oldest first: the eviction hand's round. */
  readonly #order = new Set<Entry>();
  /** Only keys under these are stored: those whose invalidations the tracker asks for. */
  readonly prefixes: readonly string[];
  readonly #recent: string[] = new Array<string>(RECENT_INVALIDATIONS).fill('');
  readonly #doorkeeper = new Uint32Array(DOORKEEPER_BITS / 32);
  readonly #doorkeeperWindow: number;
  #doorkeeperOffers = 0;
  #bytes = 0;
  /** The eviction hand: walks the entries in insertion order, those spared going to the back. */
  #hand: SetIterator<Entry> = this.#order.values();
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
    return this.#order.size;
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

  /** The cached value of the key `space + rest`, fresh at `now`, or undefined. */
  get(space: string, rest: string, now: number): Buffer | undefined {
    const entry = this.#tables.get(space)?.get(rest);
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
    space: string,
    rest: string,
    value: Buffer,
    ticket: ReadTicket,
    invalidated: ReadonlySet<string> | 'all' | undefined,
    now: number,
  ): void {
    if (!this.#admit(space, rest)) return;
    if (!this.#enabled || ticket.generation !== this.#generation) return;
    if (invalidated !== undefined && (invalidated === 'all' || invalidated.has(space + rest))) return;
    const table = this.#tableOf(space);
    if (table === null) return;
    const bytes = value.length + 2 * rest.length + ENTRY_OVERHEAD_BYTES;
    if (bytes > this.capacityBytes / 16) return;
    const copy = Buffer.allocUnsafeSlow(value.length);
    value.copy(copy);
    const old = table.get(rest);
    if (old !== undefined) this.#remove(old);
    const entry: Entry = {
      table,
      rest,
      value: copy,
      bytes,
      expiresAt: now + READ_CACHE_TTL_MS,
      referenced: false,
    };
    table.set(rest, entry);
    this.#order.add(entry);
    this.#bytes += bytes;
    while (this.#bytes > this.capacityBytes) this.#evictOne();
  }

  /** Drops `key` (an invalidation from Redis, or a write of this process about to be sent). */
  invalidate(key: string): void {
    this.#recent[this.#sequence % RECENT_INVALIDATIONS] = key;
    this.#sequence++;
    // A handful of spaces (entity types and feature views); a key may be under none.
    for (const [space, table] of this.#tables) {
      if (table === null || !key.startsWith(space)) continue;
      const entry = table.get(key.slice(space.length));
      if (entry === undefined) continue;
      this.#remove(entry);
      this.stats.invalidations++;
    }
  }

  #remove(entry: Entry): void {
    entry.table.delete(entry.rest);
    this.#order.delete(entry);
    this.#bytes -= entry.bytes;
  }

  /** The table of `space`, made on first use; null when no prefix covers it. */
  #tableOf(space: string): Map<string, Entry> | null {
    let table = this.#tables.get(space);
    if (table === undefined) {
      table = this.prefixes.some((prefix) => space.startsWith(prefix)) ? new Map() : null;
      this.#tables.set(space, table);
    }
    return table;
  }

  #clear(): void {
    this.#generation++;
    this.#tables.clear();
    this.#order.clear();
    this.#hand = this.#order.values();
    this.#bytes = 0;
  }

  /** Whether the key `space + rest` was offered before in this window (then admitted); marks it seen either way. */
  #admit(space: string, rest: string): boolean {
    if (++this.#doorkeeperOffers > this.#doorkeeperWindow) {
      this.#doorkeeper.fill(0);
      this.#doorkeeperOffers = 0;
    }
    // FNV-1a over the key's UTF-16 units: its bit.
    let hash = 0x811c9dc5;
    for (let i = 0; i < space.length; i++) hash = Math.imul(hash ^ space.charCodeAt(i), 0x01000193);
    for (let i = 0; i < rest.length; i++) hash = Math.imul(hash ^ rest.charCodeAt(i), 0x01000193);
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
      // One iterator kept across evictions: an iterator made anew starts at the table's head and
      // steps over every entry deleted since the last rehash, which made each eviction cost more
      // the longer the cache had been full (measured: the full cache's server CPU ×5, DR-020).
      let next = this.#hand.next();
      if (next.done === true) {
        this.#hand = this.#order.values();
        next = this.#hand.next();
        if (next.done === true) return;
      }
      const entry = next.value;
      if (entry.referenced && chance < MAX_SECOND_CHANCES) {
        entry.referenced = false;
        this.#order.delete(entry);
        this.#order.add(entry);
        continue;
      }
      this.#remove(entry);
      this.stats.evictions++;
      return;
    }
  }
}
