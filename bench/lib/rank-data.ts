import { type BenchProduct, benchProduct, random as seededRandom } from './products.js';

/** The route both servers of the rank benchmark serve. */
export const RANK_PATH = '/api/v1/ranking';
/**
 * The floor server's second route: the floor's reads, then every entity read parsed
 * (`JSON.parse`), as any server that hydrates must. Measured one request at a time only.
 */
export const PARSING_FLOOR_PATH = '/bench/floor-parsing';
/** The feature views the template's pipeline reads for a product, in the order it reads them. */
export const TEMPLATE_PRODUCT_VIEWS = ['product_stats', 'product_sales'] as const;
/** The query of every ranking request (the spec's example searches for candles). */
export const RANK_QUERY = 'candle';

/** One product in this many is a candle: 5%, so most 24-candidate requests hold one or two. */
const CANDLE_EVERY = 20;
const SCENTS = ['vanilla', 'lavender', 'cedar', 'citrus', 'sandalwood', 'jasmine', 'amber', 'fig'];

/** Whether product number `i` is a candle (its title, category and description say so). */
export function isCandle(i: number): boolean {
  return i % CANDLE_EVERY === 3;
}

/** The number of a generated product id (`p0001234` → 1234). */
export function productNumber(id: string): number {
  return Number(id.slice(1));
}

/**
 * Product number `i` for the rank benchmark: {@link benchProduct} (≈ 300 bytes, titles and
 * descriptions from a small vocabulary, so text matching has work to do), every 20th one turned
 * into a candle, so that the query "candle" has something to find.
 */
export function rankProduct(i: number): BenchProduct {
  const product = benchProduct(i);
  if (!isCandle(i)) return product;
  const scent = SCENTS[i % SCENTS.length] as string;
  return {
    ...product,
    title: `${product.brand} ${scent} soy candle ${1000 + (i % 9000)}`,
    description: `A hand-poured ${scent} candle: ${product.description.slice(2)}`,
    category: 'Candles',
    categories: ['Home', 'Candles'],
  };
}

/** `count` distinct numbers in [0, total), in random order. */
export function distinctSample(next: () => number, total: number, count: number): number[] {
  const chosen = new Set<number>();
  while (chosen.size < count) chosen.add(Math.floor(next() * total));
  return [...chosen];
}

/**
 * How candidates are drawn: `uniform`, every product alike; `zipf`, the product of popularity rank
 * r drawn with weight 1/r (Zipf, s = 1), as real catalogues are read: the top 1% of 100,000
 * products is about half the draws. Ranks are spread over the products by a fixed permutation,
 * so that popular products are candles as often as any.
 */
export type CandidateWorkload = 'uniform' | 'zipf';

/** The workloads, in the order the rank benchmark runs them. */
export const CANDIDATE_WORKLOADS: readonly CandidateWorkload[] = ['uniform', 'zipf'];

/** The workload the environment variable `name` names; `uniform` when it is unset. */
export function workloadFromEnv(name: string): CandidateWorkload {
  const named = process.env[name] ?? 'uniform';
  if (!CANDIDATE_WORKLOADS.includes(named as CandidateWorkload))
    throw new Error(`${name}: no workload ${named} (${CANDIDATE_WORKLOADS.join(', ')})`);
  return named as CandidateWorkload;
}

/** `count` distinct numbers in [0, total) drawn with weight 1/(rank + 1), mapped through a permutation. */
export function zipfSample(next: () => number, total: number, count: number): number[] {
  const cumulative = zipfCumulative(total);
  const last = cumulative[total - 1] as number;
  const chosen = new Set<number>();
  while (chosen.size < count) {
    const u = next() * last;
    let low = 0;
    let high = total - 1;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if ((cumulative[middle] as number) < u) low = middle + 1;
      else high = middle;
    }
    // 7919 is prime and does not divide the product counts used: a permutation of [0, total).
    chosen.add((low * 7919 + 13) % total);
  }
  return [...chosen];
}

const cumulativeByTotal = new Map<number, Float64Array>();

function zipfCumulative(total: number): Float64Array {
  let cumulative = cumulativeByTotal.get(total);
  if (cumulative === undefined) {
    cumulative = new Float64Array(total);
    let sum = 0;
    for (let r = 0; r < total; r++) cumulative[r] = sum += 1 / (r + 1);
    cumulativeByTotal.set(total, cumulative);
  }
  return cumulative;
}

/**
 * The template's `product_stats` row of product `i`: ten statistics and an 8-float embedding, in
 * the ranges the template's model expects (see template/pipelines/product-ranking/models.ts).
 */
export function productStatsRow(i: number): Record<string, unknown> {
  const next = seededRandom(i * 40503 + 1);
  const reviews = Math.floor(next() * 500);
  return {
    purchase_past_15_days: Math.floor(next() * 200),
    ctr_7d: Math.round(next() * 0.15 * 1e4) / 1e4,
    add_to_cart_rate_7d: Math.round(next() * 0.2 * 1e4) / 1e4,
    views_7d: Math.floor(next() * 20_000),
    rating: reviews > 0 ? Math.round((1 + next() * 4) * 10) / 10 : 0,
    review_count: reviews,
    return_rate: Math.round(next() * 0.1 * 1e4) / 1e4,
    margin: Math.round(next() * 0.6 * 1e4) / 1e4,
    days_since_launch: Math.floor(next() * 1500),
    popularity: Math.round(next() * 1e4) / 1e4,
    embedding: Array.from({ length: 8 }, () => Math.round((next() * 2 - 1) * 1e4) / 1e4),
  };
}

/** The template's `product_sales` row of product `i`: ten sales figures of the last 30 days. */
export function productSalesRow(i: number): Record<string, unknown> {
  const next = seededRandom(i * 69069 + 2);
  const units = Math.floor(next() * 400);
  return {
    revenue_30d: Math.round(units * (5 + next() * 200) * 100) / 100,
    units_30d: units,
    orders_30d: Math.floor(units * 0.8),
    conversion_30d: Math.round(next() * 0.05 * 1e4) / 1e4,
    refund_rate_30d: Math.round(next() * 0.08 * 1e4) / 1e4,
    avg_discount_30d: Math.round(next() * 0.3 * 1e4) / 1e4,
    repeat_purchase_rate_90d: Math.round(next() * 0.4 * 1e4) / 1e4,
    sessions_30d: Math.floor(next() * 30_000),
    wishlist_adds_30d: Math.floor(next() * 900),
    sales_rank_30d: 1 + (i % 100_000),
  };
}

/** One ranking request, serialised before any clock starts, and what its answer must satisfy. */
export interface RankRequest {
  readonly body: string;
  readonly ids: ReadonlySet<string>;
  /** How many of its candidates are candles: they must fill the top of the page. */
  readonly candles: number;
}

/** The shape of a benchmark case's requests. */
export interface RankCaseShape {
  readonly candidates: number;
  readonly userPageSize: number;
  readonly candidatePageSize: number;
}

/**
 * `count` ranking requests of `shape` for the query "candle", each with a different random set of
 * candidates (only `product_id`, as the spec's example sends them) from the `total` products.
 * Different sets per request keep Redis, the CPU caches and the real-time features honest: a
 * benchmark that ranks the same 24 products forever measures a cache.
 */
export function rankRequests(
  shape: RankCaseShape,
  count: number,
  total: number,
  seed: number,
  workload: CandidateWorkload = 'uniform',
): RankRequest[] {
  const next = seededRandom(seed);
  const sample = workload === 'zipf' ? zipfSample : distinctSample;
  return Array.from({ length: count }, (_, r) => {
    const numbers = sample(next, total, shape.candidates);
    const ids = numbers.map((i) => `p${String(i).padStart(7, '0')}`);
    const body = JSON.stringify({
      request_id: `bench-${seed}-${r}`,
      query: { query: RANK_QUERY },
      candidates: ids.map((product_id) => ({ product_id })),
      user_page_size: shape.userPageSize,
      user_page: 0,
      candidate_page_size: shape.candidatePageSize,
      candidate_page: 0,
    });
    return { body, ids: new Set(ids), candles: numbers.filter(isCandle).length };
  });
}

/**
 * Checks one rankd answer: `size` entries, each a candidate of the request, no repeats, scores
 * finite and descending, and the request's candles first (the template's text match at work: a
 * title match outweighs everything else its model adds). Returns why not, or undefined.
 */
export function rankAnswerProblem(request: RankRequest, text: string, size: number): string | undefined {
  const body = JSON.parse(text) as {
    ranked_candidates?: Array<{ candidate_id: string; ranked_score: number }>;
  };
  const ranked = body.ranked_candidates;
  if (!Array.isArray(ranked)) return 'no ranked_candidates';
  if (ranked.length !== size) return `${ranked.length} ranked candidates, expected ${size}`;
  const seen = new Set<string>();
  for (const [i, { candidate_id: id, ranked_score: score }] of ranked.entries()) {
    if (!request.ids.has(id) || seen.has(id)) return `candidate ${id} not sent, or repeated`;
    seen.add(id);
    if (typeof score !== 'number' || !Number.isFinite(score)) return `${id} has score ${score}`;
    if (i > 0 && score > (ranked[i - 1]?.ranked_score ?? 0)) return `scores not descending at ${i}`;
    if (i < Math.min(request.candles, size) && !isCandle(productNumber(id)))
      return `${id} at ${i} is not a candle, but the request holds ${request.candles}`;
  }
  return undefined;
}

/**
 * The floor's answer for a page of `size`: the shape and length of a real answer, fixed. Sending
 * as many bytes as rankd does keeps the response's size out of the comparison.
 */
export function floorBody(size: number): string {
  const entry = '{"candidate_id":"p0000000","ranked_score":1.2345678901234567}';
  return `{"ranked_candidates":[${Array.from({ length: size }, () => entry).join(',')}]}`;
}
