import type { FastifyReply } from 'fastify';
import type { RankdMetrics } from '../observability/metrics.js';

/**
 * The response header of a ranking whose candidates the index does not all hold:
 * `candidates=N`, the number ranked with only the fields the request sent (and the declared
 * defaults). Absent when every candidate was found. An index emptied by a Redis restart shows here
 * first: every candidate of every request is counted.
 *
 * @example
 * ```ts
 * import { NOT_IN_INDEX_HEADER } from 'rankd/server';
 *
 * const answer = await fetch('http://localhost:5001/api/v1/ranking', {
 *   method: 'POST',
 *   headers: { 'content-type': 'application/json' },
 *   body: JSON.stringify({ request_id: 'r1', candidates: [{ product_id: 'p1' }, { product_id: 'nope' }] }),
 * });
 * // "candidates=1": nope was ranked with the fields sent.
 * console.log(answer.headers.get(NOT_IN_INDEX_HEADER));
 * ```
 */
export const NOT_IN_INDEX_HEADER = 'x-rankd-not-in-index';

/** Says on `reply` (the header) and in the metrics, if any, that `count` candidates were not in the index. */
export function markNotInIndex(
  reply: FastifyReply,
  pipeline: string,
  count: number,
  metrics: RankdMetrics | undefined,
): void {
  reply.header(NOT_IN_INDEX_HEADER, `candidates=${count}`);
  metrics?.candidatesNotInIndex(pipeline, count);
}
