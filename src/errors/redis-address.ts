import { HIDDEN_ADDRESS, hostsOf, withoutAddresses } from './addresses.js';

/**
 * A Redis node address as a response body shows it: every address a body names goes through here,
 * so the rule on showing internal hosts (`EXPOSE_REDIS_ADDRESS`) lives in one place.
 */
export function redisAddressForResponse(address: string, expose: boolean): string {
  return expose ? address : HIDDEN_ADDRESS;
}

/** What a cluster node said, as a response body shows it (addresses left out unless `expose`). */
export function redisReasonForResponse(reason: string, node: string, expose: boolean): string {
  return expose ? reason : withoutAddresses(reason, hostsOf(node));
}
