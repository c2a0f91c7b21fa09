/**
 * A run of the simulated shop against rankd, through what a real shop has and nothing else: a
 * project of the template app served by `rankd run` (a child process, on a throwaway
 * redis-server), the shop's catalogue and feature rows uploaded over HTTP, ranking requests and
 * feedback over HTTP, and `rankd train` / `rankd evaluate` run as child processes in the project.
 * The shoppers' truth (scripts/shop/shoppers.ts) stays on this side: it reacts to the pages rankd
 * serves and judges them.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { seededRandom } from '../../src/training/random.js';
import { type CliService, startCliService } from '../../test/helpers/cli-service.js';
import { startTestRedis, type TestRedis } from '../../test/helpers/redis-server.js';
import { makeTemplateProject } from '../../test/helpers/template-project.js';
import { createShop, type Shop } from './catalogue.js';
import { type HiddenProduct, PAGE, Shoppers, type Visit } from './shoppers.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const RANKD = join(REPO, 'bin/rankd.js');

/** A served model's figures on fresh visits, judged by the hidden shoppers. */
export interface ModelFigures {
  /** Mean NDCG@8 of the pages served, against the hidden utility. */
  ndcg: number;
  /** Clicks per page of the same shoppers (same draws for every model). */
  clicksPerPage: number;
  /** NDCG@8 of each visit, in order: for paired differences between models. */
  perVisit: number[];
}

/** What a CLI command printed and how it ended. */
export interface CommandRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** The feedback posted, by type. */
export type FeedbackCounts = { click: number; add_to_cart: number; purchase: number };

/** How the session is set up. */
export interface SessionOptions {
  seed: number;
  /** The shoppers' position bias: examination 1/(k+1)^η. */
  eta: number;
  log?: (line: string) => void;
}

/** One shop, one rankd server, one project: see the module's comment. */
export class ShopSession {
  readonly shop: Shop;
  readonly shoppers: Shoppers;
  readonly project: string;
  readonly feedback: FeedbackCounts = { click: 0, add_to_cart: 0, purchase: 0 };
  readonly #byId: Map<string, HiddenProduct>;
  readonly #log: (line: string) => void;
  #redis: TestRedis | undefined;
  #server: CliService | undefined;
  #probes = 0;

  private constructor(options: SessionOptions) {
    this.shop = createShop(options.seed);
    this.shoppers = new Shoppers(options.seed, options.eta);
    this.#byId = new Map(this.shop.products.map((p) => [p.id, p]));
    this.#log = options.log ?? (() => undefined);
    this.project = mkdtempSync(join(tmpdir(), 'rankd-shop-'));
  }

  /** Starts Redis and `rankd run` in a fresh project, and uploads the shop's catalogue and features. */
  static async open(options: SessionOptions): Promise<ShopSession> {
    const session = new ShopSession(options);
    try {
      await session.#start();
    } catch (error) {
      await session.close();
      throw error;
    }
    return session;
  }

  get env(): Record<string, string> {
    return {
      REDIS_URL: this.#redis?.url ?? '',
      LOG_LEVEL: 'warn',
      EVENTS_STREAM_MAX_BYTES: '0',
    };
  }

  async #start(): Promise<void> {
    makeTemplateProject(this.project);
    this.#redis = await startTestRedis();
    this.#server = await startCliService('pipelines/main.ts', this.env, [], {
      cli: [RANKD],
      cwd: this.project,
    });
    const products = this.shop.uploads.products;
    for (let i = 0; i < products.length; i += 500)
      await this.#post('/api/v1/entities/upload', {
        entity_type: 'product',
        entities: products.slice(i, i + 500),
      });
    for (const [view, rows] of Object.entries(this.shop.uploads.features))
      for (let i = 0; i < rows.length; i += 500)
        await this.#post('/api/v1/features/upload', { feature_view: view, rows: rows.slice(i, i + 500) });
  }

  async #post(path: string, body: unknown): Promise<unknown> {
    const server = this.#server;
    if (server === undefined) throw new Error('the shop is closed');
    const response = await fetch(`${server.base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${path} answered ${response.status}: ${text}`);
    return JSON.parse(text);
  }

  /** The page rankd serves for a visit (request id `id`). */
  async rank(visit: Visit, id = visit.id): Promise<HiddenProduct[]> {
    const body = (await this.#post('/api/v1/ranking', {
      request_id: id,
      query: { query: visit.query.text },
      ...(visit.shopper.id === undefined ? {} : { user: { user_id: visit.shopper.id } }),
      candidates: visit.candidates.map((p) => ({ product_id: p.id })),
      user_page_size: PAGE,
    })) as { ranked_candidates: Array<{ candidate_id: string }> };
    return body.ranked_candidates.map((c) => this.#byId.get(c.candidate_id) as HiddenProduct);
  }

  /**
   * Shoppers visit, rankd ranks, they react and the shop posts their feedback. Returns the time
   * (ISO) before each visit whose index is in `marks`, and after the last. `shoppers`: who reacts,
   * the shop's own unless told.
   */
  async logVisits(
    visits: readonly Visit[],
    random: () => number,
    marks: readonly number[] = [],
    shoppers: Shoppers = this.shoppers,
  ) {
    const times = new Map<number, string>();
    for (const [i, visit] of visits.entries()) {
      if (marks.includes(i)) times.set(i, new Date().toISOString());
      const page = await this.rank(visit);
      const events = shoppers.react(page, visit, random).map((r) => {
        this.feedback[r.type] += 1;
        return { request_id: visit.id, entity_id: r.productId, feedback_type: r.type };
      });
      if (events.length > 0) await this.#post('/api/v1/events/feedback', { events });
    }
    // The server writes events every 20 ms: let the last ones reach the stream.
    await new Promise((done) => setTimeout(done, 500));
    return { marks: times, end: new Date().toISOString() };
  }

  /** Serves each visit with the model serving now; the hidden shoppers judge the pages. */
  async measure(visits: readonly Visit[], tag: string): Promise<ModelFigures> {
    const clicks = seededRandom(99);
    const perVisit: number[] = [];
    let clicked = 0;
    for (const visit of visits) {
      const page = await this.rank(visit, `${visit.id}-${tag}`);
      perVisit.push(this.shoppers.ndcg(page, visit));
      clicked += this.shoppers.react(page, visit, clicks).filter((r) => r.type === 'click').length;
    }
    const ndcg = perVisit.reduce((s, x) => s + x, 0) / perVisit.length;
    return { ndcg, clicksPerPage: clicked / visits.length, perVisit };
  }

  /** Runs `rankd <args>` in the project, as a shop's engineer would; `quiet`: the command is not logged. */
  cli(args: readonly string[], quiet = false): Promise<CommandRun> {
    if (!quiet) this.#log(`$ rankd ${args.join(' ')}`);
    return new Promise((resolve) =>
      execFile(
        process.execPath,
        [RANKD, ...args],
        { cwd: this.project, env: { ...process.env, ...this.env }, maxBuffer: 64 * 1024 * 1024 },
        (error, stdout, stderr) =>
          resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
      ),
    );
  }

  /** A file of the project, read. */
  read(path: string): string {
    return readFileSync(join(this.project, path), 'utf8');
  }

  /** The version (content hash) the server's MODEL events name now. */
  async servingVersion(): Promise<string> {
    this.#probes += 1;
    const body = (await this.#post('/api/v1/ranking', {
      request_id: `probe-${this.#probes}`,
      candidates: [{ product_id: this.shop.products[0]?.id }],
      include_events: true,
    })) as { events: Array<{ event_type: string; event_data: Record<string, unknown> }> };
    const model = body.events.find((e) => e.event_type === 'MODEL');
    return String(model?.event_data.model_version ?? '');
  }

  /**
   * Waits until the server interleaves for experiment `id`: a probe forced into its interleaved
   * variant gets an INTERLEAVING event once the challenger's file is loaded (before, the
   * experiment is off and the probe is served as without it).
   */
  async waitForInterleaving(id: string): Promise<void> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      this.#probes += 1;
      const body = (await this.#post('/api/v1/ranking', {
        request_id: `probe-${this.#probes}`,
        candidates: this.shop.products.slice(0, 4).map((p) => ({ product_id: p.id })),
        include_events: true,
        overrides: { variants: { [id]: 'interleaved' } },
      })) as { events: Array<{ event_type: string }> };
      if (body.events.some((e) => e.event_type === 'INTERLEAVING')) return;
      if (Date.now() > deadline) throw new Error(`the server did not start interleaving ${id}`);
      await new Promise((done) => setTimeout(done, 100));
    }
  }

  /** Installs a model file as the project's models/ranker.json and waits until the server serves it. */
  async install(file: string): Promise<void> {
    const hash = createHash('sha256')
      .update(readFileSync(join(this.project, file)))
      .digest('hex');
    // Copied whole, then renamed over the served file: the server never reads half a file.
    copyFileSync(join(this.project, file), join(this.project, 'models/ranker.json.partial'));
    renameSync(join(this.project, 'models/ranker.json.partial'), join(this.project, 'models/ranker.json'));
    await this.waitForModel(hash);
  }

  /** Waits until the server's MODEL events carry the file of content hash `hash`. */
  async waitForModel(hash: string): Promise<void> {
    const deadline = Date.now() + 30_000;
    while (!(await this.servingVersion()).endsWith(hash.slice(0, 12))) {
      if (Date.now() > deadline) throw new Error(`the server did not load the model ${hash.slice(0, 12)}`);
      await new Promise((done) => setTimeout(done, 100));
    }
  }

  /** Stops the server and Redis, and removes the project. */
  async close(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    if (server !== undefined && server.child.exitCode === null) {
      server.child.kill('SIGTERM');
      await server.exited;
    }
    await this.#redis?.stop();
    rmSync(this.project, { recursive: true, force: true });
  }
}
