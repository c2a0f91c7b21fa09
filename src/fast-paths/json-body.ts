import type { FastifyInstance, FastifyRequest, FastifySchemaCompiler } from 'fastify';

/** Fastify's `done` callback of a body parser. */
type ParserDone = (error: Error | null, body?: unknown) => void;

/** A JSON body parser over the body decoded as a string. */
export type JsonBodyParser = (request: FastifyRequest, body: string, done: ParserDone) => void;

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * Set by rankd's JSON body parser: true when the body's text spells no UTF-16 surrogate, so
     * no string of the parsed body can hold an unpaired one. False when it may, or when the body
     * was not parsed by that parser: routes then look for unpaired surrogates in their ids.
     */
    rankdNoSurrogates: boolean;
  }
}

/**
 * A `\u` escape of a UTF-16 surrogate (D800-DFFF). The body is decoded from UTF-8, where a
 * surrogate's bytes become U+FFFD: an escape is the only way a lone surrogate gets into a string.
 */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

/**
 * Whether a JSON text might hold a `__proto__` or `constructor` key. Fastify's JSON parser
 * (secure-json-parse) runs two regular expressions over every body to find out; each can only
 * match where the text has the word itself or a `\u` escape spelling one of its letters. Three
 * `includes` answer "certainly not" for ordinary bodies several times faster; anything else still
 * goes through Fastify's parser, so what is refused does not change (DR-004). `escapes`: whether
 * the text holds `\u`, which the caller has found out already.
 */
function mayHidePrototypeKey(text: string, escapes: boolean): boolean {
  return escapes || text.includes('__proto__') || text.includes('constructor');
}

/**
 * Fastify's default JSON body parser with its costly part skipped when it cannot find anything:
 * the same result and the same errors (an empty body, invalid JSON, a forbidden key) as Fastify's,
 * which it hands every body that is empty, fails to parse or may hold a `__proto__` or
 * `constructor` key.
 */
export function jsonBodyParser(server: FastifyInstance): JsonBodyParser {
  const fastifyParser = server.getDefaultJsonParser(
    server.initialConfig.onProtoPoisoning ?? 'error',
    server.initialConfig.onConstructorPoisoning ?? 'error',
  ) as unknown as JsonBodyParser;
  return (request, body, done) => {
    const escapes = body.includes('\\u');
    // One search the prototype check needs anyway; the regular expression only for bodies with escapes.
    request.rankdNoSurrogates = !escapes || !SURROGATE_ESCAPE.test(body);
    if (body.length === 0 || mayHidePrototypeKey(body, escapes)) {
      fastifyParser(request, body, done);
      return;
    }
    let parsed: unknown;
    try {
      // secure-json-parse drops a leading byte order mark; so does this.
      parsed = JSON.parse(body.charCodeAt(0) === 0xfeff ? body.slice(1) : body);
    } catch {
      // Fastify's parser makes the error, so it stays the error every other route answers.
      fastifyParser(request, body, done);
      return;
    }
    done(null, parsed);
  };
}

/**
 * Replaces Fastify's JSON body parser of `server` (and the plugins registered in it) with
 * {@link jsonBodyParser}. Not called when `FAST_PATHS=false`: Fastify's own parser stays.
 */
export function installJsonBodyParser(server: FastifyInstance): void {
  // Declared on every request (a primitive, so shared safely) so that setting it keeps the request's shape.
  server.decorateRequest('rankdNoSurrogates', false);
  server.addContentTypeParser('application/json', { parseAs: 'string' }, jsonBodyParser(server));
}

/**
 * Gives the routes of `scope` (a route's own plugin) a JSON body parser with a fast path: `scan`
 * gets the raw bytes first and returns the body when it can read it more cheaply than parsing
 * (exactly what parsing would give, or an instance of a class its route's {@link passingScanned}
 * validator lets through), else undefined, and the text is parsed by {@link jsonBodyParser} as on
 * every other route, with the same errors. Body limit and unsupported media types are handled
 * before, unchanged.
 */
export function installBodyScanner(scope: FastifyInstance, scan: (body: Buffer) => unknown): void {
  const parseJson = jsonBodyParser(scope);
  scope.removeContentTypeParser('application/json');
  scope.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, raw, done) => {
    const scanned = scan(raw as Buffer);
    if (scanned === undefined) parseJson(request, (raw as Buffer).toString('utf8'), done);
    else done(null, scanned);
  });
}

/**
 * The `validatorCompiler` of a route whose body scanner hands over an instance of `scanned`: such
 * a body passes unchanged (the scanner took it only after checking all that the schema checks,
 * and its tests hold it to that), and every other body, and every other part of the request, is
 * validated by the compiler of `scope` (the server's TypeBox one), with the same errors. The
 * route's schema stays its documented schema (OpenAPI), and its handler tells the two apart with
 * `instanceof`: a typed hand-off rather than a body dressed up to pass the schema.
 */
export function passingScanned(
  scope: FastifyInstance,
  scanned: abstract new (...args: never[]) => object,
): FastifySchemaCompiler<unknown> {
  const compile = scope.validatorCompiler;
  if (compile === undefined) throw new TypeError('passingScanned: the server has no validator compiler');
  return (route) => {
    const validate = compile(route);
    if (route.httpPart !== 'body') return validate;
    return (body: unknown) => (body instanceof scanned ? { value: body } : validate(body));
  };
}
