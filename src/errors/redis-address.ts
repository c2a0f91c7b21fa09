/**
 * A Redis (Cluster node) address as a response body shows it. Every address that rankd's degraded
 * answers and cluster errors put in a body goes through here, and only through here, so that a rule
 * about showing internal hosts to API clients is applied in one place; log lines name nodes directly.
 */
export function redisAddressForResponse(address: string): string {
  return address;
}
