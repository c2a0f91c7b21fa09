import type { TimedEvent } from '../events/export/event-sources.js';
import { SHADOW } from '../events/recorder.js';

/** The persistence of rank-biased overlap: the first 10 places carry 86% of its weight. */
export const RBO_P = 0.9;

/**
 * Rank-biased overlap of two rankings cut at the same depth (Webber, Moffat and Zobel, 2010,
 * the extrapolated form RBO_ext): 1 for the same order, 0 for nothing in common, the top
 * weighing most (`p` = {@link RBO_P}: each place counts 0.9 times the one before).
 */
export function rankBiasedOverlap(a: readonly string[], b: readonly string[], p = RBO_P): number {
  const depth = Math.min(a.length, b.length);
  if (depth === 0) return a.length === b.length ? 1 : 0;
  const seenA = new Set<string>();
  const seenB = new Set<string>();
  let overlap = 0;
  let sum = 0;
  let weight = 1;
  for (let d = 1; d <= depth; d++) {
    const x = a[d - 1] as string;
    const y = b[d - 1] as string;
    if (x === y) overlap += 1;
    else {
      if (seenB.has(x)) overlap += 1;
      if (seenA.has(y)) overlap += 1;
    }
    seenA.add(x);
    seenB.add(y);
    weight *= p;
    sum += (overlap / d) * weight;
  }
  return (overlap / depth) * weight + ((1 - p) / p) * sum;
}

/** One request's two rankings compared. */
export interface ShadowComparison {
  readonly requestId: string;
  readonly timestamp: string;
  readonly apiSource: string;
  /** The page size: the top k compared. */
  readonly k: number;
  readonly rbo: number;
  /** Whether the first k differ in order (or in items). */
  readonly orderChanged: boolean;
  /** Items of the served top k not in the shadow's. */
  readonly replaced: number;
  /** The items the two disagree on most, each explained by both models (as the SHADOW event has them). */
  readonly movers: readonly unknown[];
}

/**
 * What `rankd evaluate --shadow` says: how often and how far the shadow model's rankings differ
 * from the served model's, and the requests where they differ most.
 */
export interface ShadowReport {
  readonly sinceMs: number;
  readonly untilMs: number;
  /** Requests compared (shadow runs that scored). */
  readonly requests: number;
  /** Shadow runs whose model failed (their SHADOW events carry the error). */
  readonly failed: number;
  /** Each served → shadow pair of models seen, with its count. */
  readonly models: ReadonlyArray<{ served: unknown; shadow: unknown; requests: number }>;
  /** Share of requests whose top k differ in order or items. */
  readonly orderChangeRate: number;
  /** Share of requests whose top k hold other items (the top-k change rate). */
  readonly topKChangeRate: number;
  /** Mean share of the top k replaced. */
  readonly meanReplacedShare: number;
  readonly rbo: { readonly mean: number; readonly median: number; readonly p10: number };
  /** The requests with the lowest overlap, lowest first. */
  readonly biggest: readonly ShadowComparison[];
  /** The first error messages of failed runs. */
  readonly errors: readonly string[];
}

const idsOf = (ranking: unknown): string[] =>
  Array.isArray(ranking) ? ranking.map((entry) => String(Array.isArray(entry) ? entry[0] : entry)) : [];

/** `values` sorted: its quantile `q` (nearest rank). */
function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
}

/** Compares the two rankings of one SHADOW event. */
export function compareShadow(
  event: { request_id: string; event_timestamp: string; api_source: string },
  data: Record<string, unknown>,
): ShadowComparison {
  const served = idsOf(data.served);
  const shadow = idsOf(data.shadow);
  const k = Math.min(typeof data.k === 'number' && data.k > 0 ? data.k : 10, served.length);
  const topServed = served.slice(0, k);
  const topShadow = new Set(shadow.slice(0, k));
  return {
    requestId: event.request_id,
    timestamp: event.event_timestamp,
    apiSource: event.api_source,
    k,
    rbo: rankBiasedOverlap(served, shadow),
    orderChanged: topServed.some((id, i) => shadow[i] !== id),
    replaced: topServed.filter((id) => !topShadow.has(id)).length,
    movers: Array.isArray(data.movers) ? data.movers : [],
  };
}

/**
 * The shadow report of the SHADOW events in `events` (the stream or an event file): rates of
 * change of the top k (each request's page size), rank-biased overlap of the logged rankings, and
 * the `top` requests that differ most. Memory holds the comparisons' figures, and `top` requests.
 */
export async function shadowReport(
  events: AsyncIterable<TimedEvent>,
  options: { sinceMs: number; untilMs: number; top?: number },
): Promise<ShadowReport> {
  const top = options.top ?? 5;
  const rbos: number[] = [];
  let orderChanged = 0;
  let setChanged = 0;
  let replacedShare = 0;
  let failed = 0;
  const errors: string[] = [];
  const models = new Map<string, { served: unknown; shadow: unknown; requests: number }>();
  let biggest: ShadowComparison[] = [];
  for await (const { event } of events) {
    if (event.event_type !== SHADOW) continue;
    const data = event.event_data;
    if (typeof data.error === 'string') {
      failed += 1;
      if (errors.length < 5) errors.push(data.error);
      continue;
    }
    const pair = JSON.stringify([data.served_model ?? null, data.shadow_model ?? null]);
    const seen = models.get(pair) ?? { served: data.served_model, shadow: data.shadow_model, requests: 0 };
    seen.requests += 1;
    models.set(pair, seen);
    const comparison = compareShadow(event, data);
    rbos.push(comparison.rbo);
    if (comparison.orderChanged) orderChanged += 1;
    if (comparison.replaced > 0) setChanged += 1;
    if (comparison.k > 0) replacedShare += comparison.replaced / comparison.k;
    if (
      top > 0 &&
      (biggest.length < top || comparison.rbo < (biggest[biggest.length - 1] as ShadowComparison).rbo)
    ) {
      biggest.push(comparison);
      biggest.sort((a, b) => a.rbo - b.rbo);
      biggest = biggest.slice(0, top);
    }
  }
  const n = rbos.length;
  const sorted = [...rbos].sort((a, b) => a - b);
  return {
    sinceMs: options.sinceMs,
    untilMs: options.untilMs,
    requests: n,
    failed,
    models: [...models.values()],
    orderChangeRate: n === 0 ? 0 : orderChanged / n,
    topKChangeRate: n === 0 ? 0 : setChanged / n,
    meanReplacedShare: n === 0 ? 0 : replacedShare / n,
    rbo: {
      mean: n === 0 ? Number.NaN : rbos.reduce((a, b) => a + b, 0) / n,
      median: quantile(sorted, 0.5),
      p10: quantile(sorted, 0.1),
    },
    biggest,
    errors,
  };
}
