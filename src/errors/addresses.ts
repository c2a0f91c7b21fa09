/**
 * Addresses as answers show them: every Redis address or node error that an answer's body carries
 * goes through here, so that the rule about showing internal hosts to API clients lives in one
 * place (shown only with `EXPOSE_REDIS_ADDRESS=true`). Log lines name nodes directly.
 */

/** What stands in a response for an address it leaves out. */
export const HIDDEN_ADDRESS = '<address>';

/**
 * Address-like text: Redis URLs (may hold a password), IPv6 bracketed or bare, IPv4, `host:port`,
 * each with its port; how Node and node-redis name peers (`MOVED 12 redis-2:6379`).
 */
const ADDRESS_PATTERNS: readonly RegExp[] = [
  /rediss?:\/\/\S+/gi,
  /\[[0-9A-Fa-f:.]*\](?::\d{1,5})?/g,
  /(?<![\w.:])[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7}(?:\.\d{1,3}){0,3}(?::\d{1,5})?(?![\w.:])/g,
  /\b\d{1,3}(?:\.\d{1,3}){3}(?::\d{1,5})?\b/g,
  /\b[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*:\d{1,5}\b/g,
];

/** The hosts of `host:port` or comma-separated seed nodes, IPv6 without brackets. */
export function hostsOf(address: string): string[] {
  return address
    .split(',')
    .map((node) =>
      node
        .trim()
        .replace(/:\d+$/, '')
        .replace(/^\[(.*)\]$/, '$1'),
    )
    .filter((host) => host.length > 0);
}

/**
 * `text` with anything shaped like an address left out, then the known `hosts`, which an error may
 * name without a port (`getaddrinfo ENOTFOUND redis.internal`). Errs on the side of hiding.
 */
export function withoutAddresses(text: string, hosts: readonly string[] = []): string {
  let hidden = text;
  for (const pattern of ADDRESS_PATTERNS) hidden = hidden.replace(pattern, HIDDEN_ADDRESS);
  // Longest first: a host may contain a shorter one (redis-10 and redis-1). Whole names only.
  for (const host of [...hosts].sort((a, b) => b.length - a.length)) {
    const name = host.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    hidden = hidden.replace(new RegExp(`(?<![\\w.-])${name}(?![\\w-]|\\.\\w)`, 'g'), HIDDEN_ADDRESS);
  }
  return hidden;
}

/** A Redis (Cluster node) address as an answer shows it: itself with `expose`, else `<address>`. */
export function redisAddressForResponse(address: string, expose: boolean): string {
  return expose ? address : HIDDEN_ADDRESS;
}

/**
 * What a Redis Cluster node said (`connect ECONNREFUSED 10.0.0.3:6379`) as an answer shows it: as
 * is with `expose`, else with every address, `node`'s host included, left out.
 */
export function redisReasonForResponse(reason: string, node: string, expose: boolean): string {
  return expose ? reason : withoutAddresses(reason, hostsOf(node));
}
