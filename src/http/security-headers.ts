import type { FastifyInstance } from 'fastify';

/**
 * The console's own headers (docs/console.md): its page may run only its own scripts and styles and
 * talk only to this server (no inline script: the built page has none; no other origin), and no
 * other site may frame it (clickjacking a page that holds an API key). Styles set from script
 * (element.style) are not inline styles and stay allowed.
 */
export const CONSOLE_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
    "object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-frame-options': 'DENY',
};

/**
 * `X-Content-Type-Options: nosniff` on every response: a browser takes each answer for the type it
 * says (JSON stays JSON, never a script or a page), whatever its bytes look like.
 */
export function installSecurityHeaders(server: FastifyInstance): void {
  server.addHook('onRequest', (_request, reply, done) => {
    reply.header('x-content-type-options', 'nosniff');
    done();
  });
}
