import { createClient, RESP_TYPES } from 'redis';
import { RankdError, RedisUnavailableError } from '../errors/index.js';
import { type RedisObserver, redisErrorKind } from './observer.js';

/** How to reach Redis and how long to wait for it. */
export interface RedisConnectionOptions {
  /** `redis://host:port` (or `rediss://`). */
  url: string;
  /** Longest wait for one connection attempt, in ms. */
  connectTimeoutMs: number;
  /** Longest wait for one command, in ms; past it the caller gets a {@link RedisUnavailableError}. */
  commandTimeoutMs: number;
  /** Told about connection trouble, once per outage rather than once per retry. */
  onStateChange?: (event: 'ready' | 'lost', detail: string) => void;
  /** Told how long each command took and how it failed (the server's metrics). */
  observer?: RedisObserver | undefined;
}

/** Value as stored: Redis bulk strings come back as Buffers so that binary (LZ4) values survive. */
export type StoredValue = Buffer | null;

const MAX_RECONNECT_DELAY_MS = 2000;

function createBufferClient(options: RedisConnectionOptions) {
  return createClient({
    url: options.url,
    // Fail fast while disconnected instead of queueing: a request must answer 503, never hang.
    disableOfflineQueue: true,
    socket: {
      connectTimeout: options.connectTimeoutMs,
      reconnectStrategy: (retries: number) =>
        Math.min(50 * 2 ** Math.min(retries, 6), MAX_RECONNECT_DELAY_MS),
    },
    commandOptions: { timeout: options.commandTimeoutMs },
  }).withTypeMapping({ [RESP_TYPES.BLOB_STRING]: Buffer });
}

type BufferClient = ReturnType<typeof createBufferClient>;

/**
 * The one Redis connection of a rankd process: connects in the background, reconnects by itself
 * forever, and turns every transport failure into a {@link RedisUnavailableError} (HTTP 503).
 * The methods are the few operations rankd's stores need, each one round trip.
 */
export class RedisConnection {
  /** `host:port` as shown to users in error messages. */
  readonly address: string;
  readonly #client: BufferClient;
  readonly #options: RedisConnectionOptions;
  #connecting: Promise<unknown> | undefined;
  #lostReported = false;

  constructor(options: RedisConnectionOptions) {
    this.#options = options;
    const url = new URL(options.url);
    this.address = `${url.hostname || 'localhost'}:${url.port || '6379'}`;
    this.#client = createBufferClient(options);
    // Without a listener node-redis would crash the process on the first connection error.
    this.#client.on('error', (error: Error) => this.#reportLost(error.message));
    this.#client.on('ready', () => {
      this.#lostReported = false;
      options.onStateChange?.('ready', this.address);
    });
  }

  /** Starts connecting (in the background: Redis being down at start-up is not fatal). */
  connect(): void {
    this.#connecting ??= this.#client.connect().catch(() => undefined);
  }

  /** Whether commands can be sent now. */
  get isReady(): boolean {
    return this.#client.isReady;
  }

  /** Resolves true once connected, false if that takes longer than `timeoutMs`. */
  async waitUntilReady(timeoutMs: number): Promise<boolean> {
    this.connect();
    const deadline = Date.now() + timeoutMs;
    while (!this.#client.isReady) {
      if (Date.now() >= deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return true;
  }

  /** Round trip to Redis; throws {@link RedisUnavailableError} when it does not answer. */
  async ping(): Promise<void> {
    await this.#run(() => this.#client.ping(), 'ping');
  }

  /** Values of `keys`, in order, `null` where a key does not exist. One MGET. */
  async mget(keys: readonly string[]): Promise<StoredValue[]> {
    if (keys.length === 0) return [];
    return (await this.#run(() => this.#client.mGet(keys as string[]), 'mget')) as StoredValue[];
  }

  /** Sets every pair in one atomic MSET: all of them or none. A later duplicate key wins. */
  async mset(entries: ReadonlyArray<readonly [string, string | Buffer]>): Promise<void> {
    if (entries.length === 0) return;
    await this.#run(() => this.#client.mSet(entries as Array<[string, string | Buffer]>), 'mset');
  }

  /**
   * Sets every entry atomically: one MSET when none expires, else one MULTI/EXEC of SETs, those
   * with an expiry time (ms since the epoch) using PXAT.
   */
  async setMany(
    entries: ReadonlyArray<readonly [string, string | Buffer, number | undefined]>,
  ): Promise<void> {
    if (entries.length === 0) return;
    if (entries.every(([, , expiresAt]) => expiresAt === undefined)) {
      await this.mset(entries.map(([key, value]) => [key, value] as const));
      return;
    }
    await this.#run(async () => {
      const multi = this.#client.multi();
      for (const [key, value, expiresAt] of entries) {
        if (expiresAt === undefined) multi.set(key, value);
        else multi.set(key, value, { expiration: { type: 'PXAT', value: Math.ceil(expiresAt) } });
      }
      await multi.exec();
    }, 'multi_set');
  }

  /** HSETNX: sets a hash field unless it exists. */
  async setFieldIfAbsent(key: string, field: string, value: string): Promise<void> {
    await this.#run(() => this.#client.hSetNX(key, field, value), 'hsetnx');
  }

  /** HMGET as strings; null where a field is missing. */
  async getFields(key: string, fields: readonly string[]): Promise<Array<string | null>> {
    const values = (await this.#run(
      () => this.#client.hmGet(key, fields as string[]),
      'hmget',
    )) as Array<Buffer | null>;
    return values.map((v) => (v === null ? null : v.toString('utf8')));
  }

  /**
   * Deletes `keys` atomically (one MULTI/EXEC round trip) and returns, per key, 1 if it existed
   * and 0 if not. A key listed twice counts once.
   */
  async deleteEach(keys: readonly string[]): Promise<number[]> {
    if (keys.length === 0) return [];
    return this.#run(async () => {
      const multi = this.#client.multi();
      for (const key of keys) multi.del(key);
      return (await multi.exec()) as unknown as number[];
    }, 'multi_del');
  }

  /**
   * Appends entries to stream `key`, each given as its field/value pairs, and caps the stream at
   * about `maxLength` entries (`XADD key MAXLEN ~ n * field value ...`: Redis trims whole nodes
   * only, which is what makes the cap cheap, so the stream may hold a node's worth more). One
   * MULTI/EXEC: every entry is written or none, so a failure is counted exactly.
   */
  async appendToStream(
    key: string,
    entries: ReadonlyArray<readonly string[]>,
    maxLength: number,
  ): Promise<void> {
    if (entries.length === 0) return;
    const cap = String(maxLength);
    await this.#run(async () => {
      const multi = this.#client.multi();
      for (const fields of entries) multi.addCommand(['XADD', key, 'MAXLEN', '~', cap, '*', ...fields]);
      await multi.exec();
    }, 'multi_xadd');
  }

  /**
   * Up to `count` entries of stream `key` with ids from `start` to `end` (XRANGE: `-` and `+` are
   * the ends, `(id` excludes an id), each with its fields as strings.
   */
  async readStream(
    key: string,
    start: string,
    end: string,
    count: number,
  ): Promise<Array<{ id: string; fields: Record<string, string> }>> {
    const reply = (await this.#run(
      () => this.#client.sendCommand(['XRANGE', key, start, end, 'COUNT', String(count)]),
      'xrange',
    )) as Array<[Buffer | string, Array<Buffer | string>]> | null;
    return (reply ?? []).map(([id, flat]) => {
      const fields: Record<string, string> = {};
      for (let i = 0; i + 1 < flat.length; i += 2) fields[String(flat[i])] = String(flat[i + 1]);
      return { id: String(id), fields };
    });
  }

  /** Deletes every key matching `pattern` (SCAN + UNLINK). For tests and admin tools, not the request path. */
  async deleteMatching(pattern: string): Promise<number> {
    return this.#run(async () => {
      let removed = 0;
      for await (const batch of this.#client.scanIterator({ MATCH: pattern, COUNT: 1000 })) {
        const keys = (batch as unknown as Buffer[]).map((k) => k.toString());
        if (keys.length > 0) removed += await this.#client.unlink(keys);
      }
      return removed;
    }, 'scan_unlink');
  }

  /** Closes the connection; pending commands finish first. */
  async close(): Promise<void> {
    if (this.#client.isOpen) {
      await this.#client.close().catch(() => this.#client.destroy());
    } else {
      // A client still retrying its first connection is "open" only in intent: destroy stops the retries.
      try {
        this.#client.destroy();
      } catch {
        // already closed
      }
    }
  }

  /**
   * Runs one operation (a command, or one MULTI/EXEC), timing it for the observer under
   * `command`: two clock readings, none when nothing observes.
   */
  async #run<T>(operation: () => Promise<T>, command = 'other'): Promise<T> {
    this.connect();
    const observer = this.#options.observer;
    const start = observer === undefined ? 0 : performance.now();
    try {
      const result = await operation();
      observer?.commandDone(command, (performance.now() - start) / 1000);
      return result;
    } catch (error) {
      if (error instanceof RankdError) throw error;
      if (observer !== undefined) {
        observer.commandDone(command, (performance.now() - start) / 1000);
        observer.commandFailed(command, redisErrorKind(error));
      }
      throw new RedisUnavailableError(this.address, error);
    }
  }

  #reportLost(detail: string): void {
    if (this.#lostReported) return;
    this.#lostReported = true;
    this.#options.onStateChange?.('lost', `${this.address}: ${detail}`);
  }
}
