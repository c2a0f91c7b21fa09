import { Pool } from 'undici';

/** A non-2xx answer: the benchmark counts these and refuses to report figures measured over them. */
export class HttpStatusError extends Error {
  constructor(
    readonly status: number,
    body: string,
  ) {
    super(`HTTP ${status}: ${body.slice(0, 300)}`);
  }
}

/** An answer of any status: {@link HttpClient.post}. */
export interface HttpAnswer {
  readonly status: number;
  readonly text: string;
  /** The `Retry-After` header, when there is one. */
  readonly retryAfter: string | undefined;
}

/**
 * A keep-alive HTTP client with exactly `connections` sockets, one request in flight on each
 * (no pipelining), so "concurrency N" means N connections busy at once.
 *
 * undici's `Pool.request` rather than `fetch`: fetch is built on the same undici but adds WHATWG
 * Request/Response/Headers objects and web streams to every call. The load generator shares the
 * machine's two cores with the server and Redis, so every client cycle it spends is taken from the
 * server being measured; the leanest client gives the server the fairest share.
 */
export class HttpClient {
  readonly #pool: Pool;

  constructor(origin: string, connections: number) {
    this.#pool = new Pool(origin, {
      connections,
      pipelining: 1,
      keepAliveTimeout: 60_000,
      // Large batches can take a while on a loaded 2-core machine; only a real hang should fail.
      headersTimeout: 30_000,
      bodyTimeout: 30_000,
    });
  }

  /** POSTs an already serialised JSON body; throws {@link HttpStatusError} unless 200. */
  async postJson(path: string, body: string): Promise<string> {
    const { status, text } = await this.post(path, body);
    if (status !== 200) throw new HttpStatusError(status, text);
    return text;
  }

  /**
   * POSTs an already serialised JSON body and returns whatever the server answered, non-2xx
   * included (for a benchmark that expects refusals and counts them).
   */
  async post(path: string, body: string): Promise<HttpAnswer> {
    const response = await this.#pool.request({
      method: 'POST',
      path,
      headers: { 'content-type': 'application/json' },
      body,
    });
    const text = await response.body.text();
    const retryAfter = response.headers['retry-after'];
    return {
      status: response.statusCode,
      text,
      retryAfter: typeof retryAfter === 'string' ? retryAfter : undefined,
    };
  }

  /** Closes the sockets (before the server stops, so it need not wait for idle keep-alives). */
  async close(): Promise<void> {
    await this.#pool.close();
  }
}
