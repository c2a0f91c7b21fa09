import type { FastifyReply } from 'fastify';
import type { RankdMetrics } from '../observability/metrics.js';
import type { Degradation } from '../request/degradation.js';

/**
 * The response header of a request served without what some Redis Cluster masters hold:
 * `entities=N; features=M` (entities whose stored values, and feature rows, that could not be
 * read). Absent from every other answer, so a caller (or a proxy's log) can tell at a glance.
 *
 * @example
 * ```ts
 * import { DEGRADED_HEADER } from 'rankd/server';
 *
 * const answer = await fetch('http://localhost:5001/api/v1/ranking', {
 *   method: 'POST',
 *   headers: { 'content-type': 'application/json' },
 *   body: JSON.stringify({ request_id: 'r1', candidates: [{ product_id: 'p1' }] }),
 * });
 * // Set when a Redis Cluster master could not answer: "entities=3; features=6".
 * console.log(answer.headers.get(DEGRADED_HEADER));
 * ```
 */
export const DEGRADED_HEADER = 'x-rankd-degraded';

/** Marks `reply` as degraded (the header) and counts it on `route` in the metrics, if any. */
export function markDegraded(
  reply: FastifyReply,
  route: string,
  degradation: Degradation,
  metrics: RankdMetrics | undefined,
): void {
  reply.header(DEGRADED_HEADER, degradation.header());
  metrics?.degraded(route, degradation);
}
