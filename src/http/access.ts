import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify';
import type { RouteAccess } from '../app/define-app.js';
import type { Config } from '../config/index.js';
import { ForbiddenError, LoopbackOnlyError, UnauthorizedError } from '../errors/index.js';

/** Who may call a route (declared with the app, whose own routes set it too). */
export type { RouteAccess };

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * Which API key the request was let in with, as a short digest (never the key), for per-key
     * limits; null without a key, or on routes that need none.
     */
    rankdApiKey: string | null;
  }
}

function digest(key: string): Buffer {
  return createHash('sha256').update(key).digest();
}

/** Compares against every key without stopping early, so timing tells nothing about which matched. */
function matchesAny(candidate: Buffer, keys: readonly Buffer[]): boolean {
  let matched = false;
  for (const key of keys) matched = timingSafeEqual(candidate, key) || matched;
  return matched;
}

/** `Authorization: Bearer <key>`, the scheme in any case (RFC 9110 §11.1: schemes are case-insensitive). */
const BEARER = /^bearer +(.+)$/i;

function presentedKey(request: FastifyRequest): string | undefined {
  const header = request.headers['x-api-key'];
  if (typeof header === 'string' && header.length > 0) return header;
  const authorization = request.headers.authorization;
  if (typeof authorization !== 'string') return undefined;
  const key = BEARER.exec(authorization)?.[1]?.trim();
  return key === undefined || key.length === 0 ? undefined : key;
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
 * Whether `address` (a socket's remote address) is this machine's loopback: 127.0.0.0/8, `::1`, or
 * an IPv4 loopback address mapped into IPv6. Forwarded-for headers are never read: anyone can send one.
 */
export function isLoopback(address: string | undefined): boolean {
  if (address === undefined) return false;
  return address === '::1' || address.startsWith('127.') || address.startsWith('::ffff:127.');
}

/**
 * API-key access control. With `API_KEYS` set, every route but the public ones needs a key (admin
 * keys count too); routes marked `access: 'admin'` need a key from `ADMIN_API_KEYS` whenever any
 * key is set. With only `ADMIN_API_KEYS` set, ordinary routes are open and routes that change data
 * (`access: 'write'`) need an admin key. With no key set at all, `write` and `admin` routes answer
 * loopback clients only (403 `RANKD_LOOPBACK_ONLY` to others): out of the box, no other machine can
 * delete data or reload models ({@link accessPolicy}). CORS preflights pass without a key ({@link isPreflight}).
 */
export function installAccessControl(server: FastifyInstance, config: Config): void {
  const userKeys = config.API_KEYS.map(digest);
  const adminKeys = config.ADMIN_API_KEYS.map(digest);
  server.decorateRequest('rankdApiKey', null);
  if (userKeys.length === 0 && adminKeys.length === 0) {
    // Only the routes that change something get a hook: the others pay nothing.
    const loopbackOnly: onRequestHookHandler = (request, _reply, done) => {
      if (isLoopback(request.socket.remoteAddress)) done();
      else done(new LoopbackOnlyError());
    };
    server.addHook('onRoute', (route) => {
      const access = route.config?.access;
      if (access !== 'write' && access !== 'admin') return;
      const existing = route.onRequest;
      route.onRequest =
        existing === undefined
          ? [loopbackOnly]
          : Array.isArray(existing)
            ? [loopbackOnly, ...existing]
            : [loopbackOnly, existing];
    });
    return;
  }
  server.addHook('onRequest', async (request) => {
    const access = request.routeOptions.config.access ?? 'key';
    if (access === 'public' || isPreflight(request)) return;
    if (access === 'key' && userKeys.length === 0) return;
    const key = presentedKey(request);
    if (key === undefined) throw new UnauthorizedError();
    const hashed = digest(key);
    const isAdmin = matchesAny(hashed, adminKeys);
    // With no ordinary keys, a route that changes data is an admin route.
    if (access === 'admin' || (access === 'write' && userKeys.length === 0)) {
      if (!isAdmin) {
        if (matchesAny(hashed, userKeys)) throw new ForbiddenError();
        throw new UnauthorizedError();
      }
    } else if (!isAdmin && !matchesAny(hashed, userKeys)) throw new UnauthorizedError();
    request.rankdApiKey = hashed.toString('base64url', 0, 12);
  });
}

/** The one line `rankd run` prints at start about who may call what, from the key settings. */
export function accessPolicy(config: Config): string {
  const user = config.API_KEYS.length > 0;
  const admin = config.ADMIN_API_KEYS.length > 0;
  if (!user && !admin)
    return (
      'access: no API key set: any client may rank and read, and only this machine (loopback) may upload, ' +
      'delete or reload models; set ADMIN_API_KEYS (and API_KEYS) to let other machines do so with a key'
    );
  if (!user)
    return 'access: ranking and reads are open; uploads, deletes and admin routes need a key from ADMIN_API_KEYS';
  return admin
    ? 'access: every route but health and docs needs a key from API_KEYS or ADMIN_API_KEYS; admin routes need one from ADMIN_API_KEYS'
    : 'access: every route but health and docs needs a key from API_KEYS; admin routes are refused (no ADMIN_API_KEYS)';
}
