import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { RouteAccess } from '../app/define-app.js';
import type { Config } from '../config/index.js';
import { ForbiddenError, UnauthorizedError } from '../errors/index.js';

/** Who may call a route (declared with the app, whose own routes set it too). */
export type { RouteAccess };

function digest(key: string): Buffer {
  return createHash('sha256').update(key).digest();
}

/** Compares against every key without stopping early, so timing tells nothing about which matched. */
function matchesAny(candidate: Buffer, keys: readonly Buffer[]): boolean {
  let matched = false;
  for (const key of keys) matched = timingSafeEqual(candidate, key) || matched;
  return matched;
}

function presentedKey(request: FastifyRequest): string | undefined {
  const header = request.headers['x-api-key'];
  if (typeof header === 'string' && header.length > 0) return header;
  const authorization = request.headers.authorization;
  if (typeof authorization === 'string' && authorization.startsWith('Bearer '))
    return authorization.slice(7).trim();
  return undefined;
}

/**
 * Whether the request is a browser's CORS preflight: an OPTIONS request asking whether a
 * cross-origin request may be sent. Browsers never put credentials on it, so it cannot carry a
 * key; answering it is the app's CORS plugin's job (docs/guides/extend-the-server.md), and it reaches no handler
 * of rankd's.
 */
function isPreflight(request: FastifyRequest): boolean {
  return request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined;
}

/**
 * API-key access control. Off while neither `API_KEYS` nor `ADMIN_API_KEYS` is set. With
 * `API_KEYS` set, every route but the public ones needs a key (admin keys count too); routes
 * marked `access: 'admin'` need a key from `ADMIN_API_KEYS` whenever that is set or API_KEYS is.
 * CORS preflights pass without a key ({@link isPreflight}).
 */
export function installAccessControl(server: FastifyInstance, config: Config): void {
  const userKeys = config.API_KEYS.map(digest);
  const adminKeys = config.ADMIN_API_KEYS.map(digest);
  if (userKeys.length === 0 && adminKeys.length === 0) return;
  server.addHook('onRequest', async (request) => {
    const access = request.routeOptions.config.access ?? 'key';
    if (access === 'public' || isPreflight(request)) return;
    if (access === 'key' && userKeys.length === 0) return;
    const key = presentedKey(request);
    if (key === undefined) throw new UnauthorizedError();
    const hashed = digest(key);
    const isAdmin = matchesAny(hashed, adminKeys);
    if (access === 'admin') {
      if (isAdmin) return;
      if (matchesAny(hashed, userKeys)) throw new ForbiddenError();
      throw new UnauthorizedError();
    }
    if (!isAdmin && !matchesAny(hashed, userKeys)) throw new UnauthorizedError();
  });
}
