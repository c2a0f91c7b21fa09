import { HIDDEN_ADDRESS, hostsOf, withoutAddresses } from './addresses.js';

/**
 * A Redis (Cluster node) address as a response body shows it. Every address that rankd's degraded
 * answers and cluster errors put in a body goes through here, and only through here, so that the
 * rule about showing internal hosts to API clients is applied in one place: the address itself
 * with `EXPOSE_REDIS_ADDRESS=true` (`expose`), else `<address>`. Log lines name nodes directly.
 */
export function redisAddressForResponse(address: string, expose: boolean): string {
  return expose ? address : HIDDEN_ADDRESS;
}

/**
 * What a Redis Cluster node said (`connect ECONNREFUSED 10.0.0.3:6379`) as a response body shows
 * it: as is with `expose`, else with every address, `node`'s host included, left out.
 */
export function redisReasonForResponse(reason: string, node: string, expose: boolean): string {
  return expose ? reason : withoutAddresses(reason, hostsOf(node));
}
