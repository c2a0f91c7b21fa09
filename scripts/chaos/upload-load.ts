import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';

/** A product as the chaos test uploads it (test/fixtures/workers/app.ts). */
export interface ChaosProduct {
  product_id: string;
  title: string;
  price: number;
}

/** How an upload ended. */
export type Outcome = 'ok' | 'unavailable' | 'other-status' | 'connection' | 'hung';

/** One upload request and how it ended. */
export interface UploadRecord {
  readonly products: readonly ChaosProduct[];
  readonly outcome: Outcome;
  readonly status?: number;
  /** When it was sent, ms since the load started. */
  readonly atMs: number;
  readonly latencyMs: number;
  /** The body of a non-200, non-503 answer, or the error, for the report. */
  readonly detail?: string;
}

/** How the load runs. */
export interface UploadLoadOptions {
  origin: string;
  concurrency: number;
  /** Products per upload. */
  batch: number;
  /** An answer slower than this counts as hung (the client gives up). */
  hangMs: number;
}

// Titles mix ASCII, accents, CJK, emoji and JSON-escaped characters: "reads back exactly" must hold for all.
const PIECES = [
  'lamp',
  'Kerze',
  'bougie',
  'vela',
  'ろうそく',
  '蜡烛',
  '🕯️',
  'a "quoted" one',
  'back\\slash',
  'tab\there',
];

/** Product `i` of upload `seq`: unique id, a varied title and a price. */
function product(runId: string, seq: number, i: number): ChaosProduct {
  const n = seq * 7919 + i * 104729;
  const title = `${PIECES[n % PIECES.length]} ${PIECES[(n >> 3) % PIECES.length]} #${seq}.${i}`;
  return { product_id: `${runId}-${seq}-${i}`, title, price: Math.round((n % 100_000) * 0.37) / 100 };
}

/**
 * Uploads batches of fresh products at a fixed concurrency (closed loop: each of `concurrency`
 * connections sends its next upload when the previous one has answered) until `stop()`, and keeps
 * every request's products and outcome. Ids are unique per request, so whatever is in Redis
 * afterwards can be traced to the one request that wrote it.
 */
export class UploadLoad {
  readonly records: UploadRecord[] = [];
  readonly #options: UploadLoadOptions;
  readonly #pool: Pool;
  readonly #runId = `c${Date.now().toString(36)}`;
  readonly #started = performance.now();
  #running = true;
  #seq = 0;
  #loops: Promise<unknown> | undefined;

  constructor(options: UploadLoadOptions) {
    this.#options = options;
    this.#pool = new Pool(options.origin, {
      connections: options.concurrency,
      pipelining: 1,
      headersTimeout: options.hangMs,
      bodyTimeout: options.hangMs,
    });
  }

  /** Starts the loops. */
  start(): void {
    this.#loops = Promise.all(Array.from({ length: this.#options.concurrency }, () => this.#loop()));
  }

  /** Ms since the load started. */
  elapsedMs(): number {
    return performance.now() - this.#started;
  }

  /** Stops sending, waits for the requests in flight, closes the connections. */
  async stop(): Promise<void> {
    this.#running = false;
    await this.#loops;
    await this.#pool.close();
  }

  async #loop(): Promise<void> {
    while (this.#running) {
      const seq = this.#seq++;
      const products = Array.from({ length: this.#options.batch }, (_, i) => product(this.#runId, seq, i));
      const atMs = this.elapsedMs();
      const finish = (outcome: Outcome, status?: number, detail?: string) =>
        this.records.push({
          products,
          outcome,
          atMs,
          latencyMs: this.elapsedMs() - atMs,
          ...(status === undefined ? {} : { status }),
          ...(detail === undefined ? {} : { detail }),
        });
      try {
        const response = await this.#pool.request({
          method: 'POST',
          path: '/api/v1/entities/upload',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ entity_type: 'product', entities: products }),
        });
        const text = await response.body.text();
        const status = response.statusCode;
        if (status === 200) finish('ok', status);
        else if (status === 503) finish('unavailable', status);
        else finish('other-status', status, text.slice(0, 300));
      } catch (error) {
        const code = (error as { code?: string }).code ?? '';
        const hung = code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT';
        finish(hung ? 'hung' : 'connection', undefined, `${code} ${(error as Error).message}`);
        // A refused connection (no worker yet) would otherwise spin this loop.
        if (!hung) await new Promise((resolve) => setTimeout(resolve, 10));
      }
    }
  }
}
