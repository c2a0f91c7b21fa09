/**
 * `node --import tsx scripts/simulate-shop.ts [--requests N] [--fresh N] [--seed S]`: the whole
 * training loop on a simulated shop. The template app (its catalogue and feature rows) is served
 * in process on a throwaway redis-server; simulated shoppers send ranking requests and click, add
 * to cart and buy following a hidden utility of the products' features and the query, with
 * position bias. Then `rankd train --since 1h --promote` (the real CLI, in a child process)
 * trains the template's GBDT stage on the logged events, and the server reloads the new model.
 * The same fresh requests are then ranked by the hand-weighted model (before) and the promoted
 * one (after): NDCG@8 against the hidden utility, and the click-through of simulated shoppers.
 * Needs `npm run build` (it runs the built package, as a project would).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { seededRandom } from '../src/training/random.js';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const TEMPLATE = join(REPO, 'template');
const PAGE = 8;
const CANDIDATES = 24;
const QUERIES = [
  'candle',
  'soy candle',
  'vase',
  'blanket',
  'mug',
  'diffuser',
  'bath',
  'linen',
  'bowl',
  'gift',
  'throw',
  'ceramic',
];
const USERS = ['u1', 'u2', 'u3', undefined];

/** What a simulation run is given. */
export interface SimulationOptions {
  /** Requests logged before training. @defaultValue 3000 */
  requests?: number;
  /** Fresh requests ranked by each model afterwards. @defaultValue 1000 */
  fresh?: number;
  seed?: number;
  /** Promote even when the trained model does not beat the serving one (`--force`): a short run's
   * validation is too small to tell. */
  force?: boolean;
  /** Told each line of progress and of the CLI's output. */
  log?: (line: string) => void;
}

/** One model's figures on the fresh requests. */
export interface ModelFigures {
  /** Mean NDCG@8 of the page against the hidden utility of the request's candidates. */
  ndcg: number;
  /** Simulated clicks per page shown. */
  clicksPerRequest: number;
}

/** What a simulation run measured, and the CLI's output. */
export interface SimulationResult {
  handWeighted: ModelFigures;
  trained: ModelFigures;
  /** `rankd train`'s standard output. */
  trainOutput: string;
  /** The feedback posted while logging: clicks, add-to-carts, purchases. */
  feedback: { click: number; add_to_cart: number; purchase: number };
}

type Row = Record<string, unknown>;

function readJsonl(path: string): Row[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Row);
}

const sigmoid = (x: number) => 1 / (1 + Math.exp(-x));

interface Product {
  id: string;
  text: string;
  category: string;
  price: number;
  rating: number;
  reviews: number;
  conversion: number;
  popularity: number;
}

function catalogue(): Product[] {
  const stats = new Map(
    readJsonl(join(TEMPLATE, 'feature-store/data/product_stats.jsonl')).map((r) => [r.entity_id, r]),
  );
  const sales = new Map(
    readJsonl(join(TEMPLATE, 'feature-store/data/product_sales.jsonl')).map((r) => [r.entity_id, r]),
  );
  return readJsonl(join(TEMPLATE, 'data/products.jsonl')).map((p) => {
    const s = stats.get(p.product_id) ?? {};
    return {
      id: String(p.product_id),
      text: `${p.title} ${p.brand}`.toLowerCase(),
      category: [p.category, ...((p.categories as string[]) ?? [])].join(' ').toLowerCase(),
      price: Number(p.price ?? 0),
      rating: Number(s.rating ?? 0),
      reviews: Number(s.review_count ?? 0),
      conversion: Number(sales.get(p.product_id)?.conversion_30d ?? 0),
      popularity: Number(s.popularity ?? 0),
    };
  });
}

/** The template's user_profile rows; shoppers not signed in mind no price (the model sees none). */
const SENSITIVITY: Record<string, number> = { u1: 0.3, u2: 0.8, u3: 0.1 };

/**
 * The hidden utility: what a shopper gets from a product for a query. Relevance counts, but far
 * less than the template's weights assume; well-reviewed, converting products count much more,
 * and price-sensitive shoppers mind the price.
 */
function utility(product: Product, query: string, user: string | undefined): number {
  const words = query.split(' ');
  const inTitle = words.filter((w) => product.text.includes(w)).length / words.length;
  const inCategory = words.some((w) => product.category.includes(w)) ? 1 : 0;
  const trusted = product.reviews >= 50 ? 1 : 0.4;
  return (
    0.6 * inTitle +
    0.4 * inCategory +
    3 * trusted * (product.rating - 4.3) +
    60 * product.conversion -
    (SENSITIVITY[user ?? ''] ?? 0) * 0.8 * Math.log1p(product.price) +
    1
  );
}

interface SimRequest {
  id: string;
  query: string;
  user: string | undefined;
  candidates: Product[];
}

function requestsOf(products: Product[], count: number, prefix: string, rand: () => number): SimRequest[] {
  return Array.from({ length: count }, (_, i) => {
    const query = QUERIES[Math.floor(rand() * QUERIES.length)] as string;
    const pool = [...products].sort(() => rand() - 0.5);
    return {
      id: `${prefix}-${i}`,
      query,
      user: USERS[Math.floor(rand() * USERS.length)],
      candidates: pool.slice(0, CANDIDATES),
    };
  });
}

/** Who clicked, added to cart, bought on a page, with position bias: a shopper looks further down less often. */
function reactions(page: Product[], request: SimRequest, rand: () => number) {
  const out: Array<{ id: string; type: 'click' | 'add_to_cart' | 'purchase' }> = [];
  page.forEach((product, position) => {
    if (rand() > 1 / (1 + position) ** 0.8) return;
    const u = utility(product, request.query, request.user);
    if (rand() > sigmoid(2 * (u - 1))) return;
    out.push({ id: product.id, type: 'click' });
    if (rand() > sigmoid(2 * (u - 1.8))) return;
    out.push({ id: product.id, type: 'add_to_cart' });
    if (rand() < 0.5) out.push({ id: product.id, type: 'purchase' });
  });
  return out;
}

function ndcgOf(page: Product[], request: SimRequest): number {
  const gain = (p: Product) => 2 ** Math.max(0, utility(p, request.query, request.user)) - 1;
  const dcg = (list: Product[]) => list.slice(0, PAGE).reduce((s, p, i) => s + gain(p) / Math.log2(i + 2), 0);
  const ideal = dcg([...request.candidates].sort((a, b) => gain(b) - gain(a)));
  return ideal === 0 ? 1 : dcg(page) / ideal;
}

/** Runs the loop; see the module's comment. */
export async function simulateShop(options: SimulationOptions = {}): Promise<SimulationResult> {
  const log = options.log ?? (() => undefined);
  const rand = seededRandom(options.seed ?? 7);
  const products = catalogue();
  const byId = new Map(products.map((p) => [p.id, p]));
  const project = mkdtempSync(join(tmpdir(), 'rankd-shop-'));
  const previous = process.cwd();
  // The app's model file (models/ranker.json) is relative to the working directory: the project's.
  process.chdir(project);
  const { testApp } = await import('rankd/testing');
  const { default: app } = (await import(join(TEMPLATE, 'pipelines/main.ts'))) as {
    default: Parameters<typeof testApp>[0];
  };
  const shop = await testApp(app, {
    sampleData: TEMPLATE,
    settings: { LOG_LEVEL: 'silent', EVENTS_FLUSH_INTERVAL_MS: '20', EVENTS_STREAM_MAX_BYTES: '0' },
  });
  try {
    const rank = async (request: SimRequest) => {
      const response = await shop.post('/api/v1/ranking', {
        request_id: request.id,
        query: { query: request.query },
        ...(request.user === undefined ? {} : { user: { user_id: request.user } }),
        candidates: request.candidates.map((p) => ({ product_id: p.id })),
        user_page_size: PAGE,
      });
      if (response.statusCode !== 200)
        throw new Error(`ranking answered ${response.statusCode}: ${response.body}`);
      const ranked = (response.json() as { ranked_candidates: Array<{ candidate_id: string }> })
        .ranked_candidates;
      return ranked.map((r) => byId.get(r.candidate_id) as Product);
    };
    const feedback = { click: 0, add_to_cart: 0, purchase: 0 };
    log(`logging ${options.requests ?? 3000} requests of simulated shoppers`);
    for (const request of requestsOf(products, options.requests ?? 3000, 'train', rand)) {
      const events = reactions(await rank(request), request, rand).map((r) => {
        feedback[r.type] += 1;
        return { request_id: request.id, entity_id: r.id, feedback_type: r.type };
      });
      if (events.length > 0) {
        const response = await shop.post('/api/v1/events/feedback', { events });
        if (response.statusCode !== 200)
          throw new Error(`feedback answered ${response.statusCode}: ${response.body}`);
      }
    }
    await shop.server.rankd.events.flush();
    // Training reads the logged requests only, not the fresh ones ranked below.
    const loggedUntil = new Date().toISOString();
    const fresh = requestsOf(products, options.fresh ?? 1000, 'fresh', rand);
    const measure = async (): Promise<ModelFigures> => {
      const clicks = seededRandom(99);
      let ndcg = 0;
      let clicked = 0;
      for (const request of fresh) {
        const page = await rank({ ...request, id: `${request.id}-${Math.floor(rand() * 1e9)}` });
        ndcg += ndcgOf(page, request);
        clicked += reactions(page, request, clicks).filter((r) => r.type === 'click').length;
      }
      return { ndcg: ndcg / fresh.length, clicksPerRequest: clicked / fresh.length };
    };
    const handWeighted = await measure();
    writeFileSync(join(project, '.env'), `REDIS_URL=${shop.redisUrl}\n`);
    const args = [
      join(REPO, 'bin/rankd.js'),
      'train',
      '--app',
      join(TEMPLATE, 'pipelines/main.ts'),
      '--since',
      '1h',
      '--until',
      loggedUntil,
      '--out',
      'models/ranker-candidate.json',
      '--promote',
      ...(options.force ? ['--force'] : []),
      '--no-progress',
    ];
    // As a user types it in the project: the app's path shown from the repository.
    log(`$ rankd ${args.slice(1).join(' ').replace(`${TEMPLATE}/`, 'template/')}`);
    const trainOutput = await new Promise<string>((done, fail) =>
      execFile(process.execPath, args, { cwd: project }, (error, stdout, stderr) =>
        error ? fail(new Error(`rankd train failed: ${stderr || error.message}`)) : done(stdout),
      ),
    );
    for (const line of trainOutput.trim().split('\n')) log(line);
    // The server watches models/: wait until the promoted file is what it serves.
    const deadline = Date.now() + 20_000;
    while (existsSync(join(project, 'models/ranker.json'))) {
      const probe = await shop.post('/api/v1/ranking', {
        request_id: `probe-${Date.now()}`,
        candidates: [{ product_id: 'p1' }],
        include_events: true,
      });
      const model = (probe.json() as { events: Array<{ event_type: string; event_data: Row }> }).events.find(
        (e) => e.event_type === 'MODEL',
      );
      if (!String(model?.event_data.model_version ?? '').startsWith('RankingModel@')) break;
      if (Date.now() > deadline) throw new Error('the server did not reload models/ranker.json');
      await new Promise((r) => setTimeout(r, 100));
    }
    const trained = await measure();
    const row = (name: string, f: ModelFigures) =>
      `${name.padEnd(16)} NDCG@8 ${f.ndcg.toFixed(3)}   clicks per page ${f.clicksPerRequest.toFixed(3)}`;
    log(`feedback logged: ${JSON.stringify(feedback)}`);
    log(row('hand-weighted', handWeighted));
    log(row('trained', trained));
    return { handWeighted, trained, trainOutput, feedback };
  } finally {
    await shop.close();
    process.chdir(previous);
    rmSync(project, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: { requests: { type: 'string' }, fresh: { type: 'string' }, seed: { type: 'string' } },
  });
  await simulateShop({
    ...(values.requests ? { requests: Number(values.requests) } : {}),
    ...(values.fresh ? { fresh: Number(values.fresh) } : {}),
    ...(values.seed ? { seed: Number(values.seed) } : {}),
    log: (line) => console.log(line),
  });
}
