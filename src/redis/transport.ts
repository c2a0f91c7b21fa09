import { createClient, RESP_TYPES } from '@redis/client';

/** One Redis command as sent on the wire: its name, then its arguments. */
export type RedisCommand = ReadonlyArray<string | Buffer>;

/**
 * What a transport tells its owner about its connections: `ready` and `lost` for the connection as
 * a whole (the owner de-duplicates them), `node-lost` and `node-back` for one master of a Redis
 * Cluster (already de-duplicated: one of each per outage of that node, and their detail is a
 * whole sentence naming the node and its slots).
 */
export type TransportEvent = 'ready' | 'lost' | 'node-lost' | 'node-back';

/** How a transport connects; shared by the single-node and the cluster transport. */
export interface TransportOptions {
  /** Longest wait for one connection attempt, in ms. */
  connectTimeoutMs: number;
  /** Longest wait for one command, in ms: a cluster transport names it when it stops asking a master that did not answer. */
  commandTimeoutMs?: number;
  /** Every connection trouble and recovery, as it happens. */
  onEvent: (event: TransportEvent, detail: string) => void;
}

/**
 * The node-redis client behind a {@link RedisConnection}: a single Redis or a Redis Cluster. It
 * only moves raw commands; what they mean, how a batch is split and what a failure means for the
 * caller is the connection's business. Replies come back with bulk strings as Buffers.
 */
export interface RedisTransport {
  /** Where Redis is, as shown to users: `host:port`, or the cluster's seed nodes. */
  readonly address: string;
  /** Whether commands can be sent now. */
  readonly isReady: boolean;
  /**
   * Which batch a key's command may share: its hash slot on a cluster (a multi-key command must
   * stay inside one slot), always 0 on a single Redis (one command carries the whole batch).
   */
  groupOf(key: string): number;
  /** Connects, retrying until it succeeds or {@link close} is called. */
  connect(): Promise<void>;
  /**
   * Sends one command to the node serving `key` (any node when undefined). A command that names no
   * key (INFO) goes to any node even with a `key`: use {@link sendToNodeOf} for it.
   */
  send(key: string | undefined, readonly: boolean, command: RedisCommand): Promise<unknown>;
  /** Sends a command that names no key (INFO) to the node serving `key`: its answer and its failure are that node's. */
  sendToNodeOf(key: string, command: RedisCommand): Promise<unknown>;
  /** MULTI/EXEC of `commands`, whose keys all share `key`'s slot; resolves to EXEC's replies. */
  transaction(key: string, commands: readonly RedisCommand[]): Promise<unknown[]>;
  /** PINGs every node that serves keys (every master of a cluster). */
  pingAll(): Promise<void>;
  /** Calls `visit` with a sender bound to each node that serves keys, one node after the other. */
  forEachNode(visit: (send: (command: RedisCommand) => Promise<unknown>) => Promise<void>): Promise<void>;
  /** Closes every connection; pending commands finish first. */
  close(): Promise<void>;
}

const MAX_RECONNECT_DELAY_MS = 2000;

/**
 * node-redis's command options for rankd's clients: no per-command timeout. node-redis 6 gives
 * every command one (5 s unless told otherwise) that covers only its wait to be written, at the
 * cost of an `AbortSignal.timeout` per command, kept alive with its listener until it fires: a
 * timer and garbage for every command (DR-008). The connection's deadline (src/redis/deadlines.ts) fails every
 * operation past REDIS_COMMAND_TIMEOUT_MS, written or not.
 */
export const NO_COMMAND_TIMEOUT = { timeout: 0 } as const;

/** Backoff between reconnection attempts: 50 ms doubling up to 2 s, forever. */
export function reconnectDelay(retries: number): number {
  return Math.min(50 * 2 ** Math.min(retries, 6), MAX_RECONNECT_DELAY_MS);
}

function createBufferClient(url: string, options: TransportOptions) {
  return createClient({
    url,
    // Fail fast while disconnected instead of queueing: a request must answer 503, never hang.
    disableOfflineQueue: true,
    socket: { connectTimeout: options.connectTimeoutMs, reconnectStrategy: reconnectDelay },
    commandOptions: NO_COMMAND_TIMEOUT,
  }).withTypeMapping({ [RESP_TYPES.BLOB_STRING]: Buffer });
}

type BufferClient = ReturnType<typeof createBufferClient>;

/** A single Redis: one client, every batch one command (so an MSET stays all or nothing). */
export class SingleNodeTransport implements RedisTransport {
  readonly address: string;
  readonly #client: BufferClient;

  constructor(url: string, options: TransportOptions) {
    const parsed = new URL(url);
    this.address = `${parsed.hostname || 'localhost'}:${parsed.port || '6379'}`;
    this.#client = createBufferClient(url, options);
    // Without a listener node-redis would crash the process on the first connection error.
    this.#client.on('error', (error: Error) => options.onEvent('lost', error.message));
    this.#client.on('ready', () => options.onEvent('ready', this.address));
  }

  get isReady(): boolean {
    return this.#client.isReady;
  }

  groupOf(): number {
    return 0;
  }

  async connect(): Promise<void> {
    await this.#client.connect();
  }

  send(_key: string | undefined, _readonly: boolean, command: RedisCommand): Promise<unknown> {
    return this.#client.sendCommand(command as Array<string | Buffer>);
  }

  sendToNodeOf(key: string, command: RedisCommand): Promise<unknown> {
    return this.send(key, false, command);
  }

  async transaction(_key: string, commands: readonly RedisCommand[]): Promise<unknown[]> {
    const multi = this.#client.multi();
    for (const command of commands) multi.addCommand(command as Array<string | Buffer>);
    return (await multi.exec()) as unknown[];
  }

  async pingAll(): Promise<void> {
    await this.#client.ping();
  }

  async forEachNode(
    visit: (send: (command: RedisCommand) => Promise<unknown>) => Promise<void>,
  ): Promise<void> {
    await visit((command) => this.send(undefined, false, command));
  }

  async close(): Promise<void> {
    if (this.#client.isReady) {
      await closeWithin(this.#client.close(), () => this.#client.destroy());
    } else {
      // A client retrying its first connection, or reconnecting after losing Redis, is "open" only
      // in intent: a graceful close would wait for a connection that may never come (with nothing
      // else keeping the process alive, for ever). Nothing is queued while it is not ready
      // (no offline queue), so destroy loses nothing; it stops the retries.
      try {
        this.#client.destroy();
      } catch {
        // already closed
      }
    }
  }
}

/** Longest wait for a graceful close (QUIT, pending replies) before the sockets are destroyed, in ms. */
export const CLOSE_GRACE_MS = 1000;

/**
 * Waits for `closing` (a client's graceful close) for at most {@link CLOSE_GRACE_MS}, then calls
 * `destroy`; a failed close is destroyed at once. A client whose Redis died a moment ago may still
 * count as ready and wait for a reply that never comes: a server's shutdown must not wait with it.
 */
export async function closeWithin(closing: Promise<unknown>, destroy: () => void): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<'expired'>((resolve) => {
    timer = setTimeout(() => resolve('expired'), CLOSE_GRACE_MS);
  });
  const outcome = await Promise.race([closing.then(() => 'closed' as const), expired]).catch(
    () => 'failed' as const,
  );
  clearTimeout(timer);
  if (outcome !== 'closed') {
    try {
      destroy();
    } catch {
      // already closed
    }
  }
}
