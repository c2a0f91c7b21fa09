/**
 * The requests of a fuzz run. Request `index` of a run with seed `seed` is always the same bytes
 * (fast-check seeded with both), so any request a report names can be sent again alone with
 * `npm run fuzz -- --seed <seed> --only <index>`.
 */
import fc from 'fast-check';
import { EXAMPLE_BODIES, JSON_ROUTES } from './bodies.js';
import { framingCase } from './framing.js';
import type { CaseSpec, FuzzCase } from './fuzz-case.js';
import { deepText, toJsonText } from './json-text.js';

/** The groups of cases a run mixes, and their weights. `--routes` picks some of them. */
export const GROUPS = [
  'ranking',
  'entities',
  'features',
  'feedback',
  'admin',
  'get',
  'content',
  'framing',
] as const;
/** One of {@link GROUPS}. */
export type Group = (typeof GROUPS)[number];

const WEIGHTS: Record<Group, number> = {
  ranking: 20,
  entities: 20,
  features: 20,
  feedback: 8,
  admin: 3,
  get: 8,
  content: 10,
  framing: 8,
};

/** The ids the fuzzer never sends, whatever it generates: the sentinels' (sentinels.ts). */
export const SENTINEL_MARK = 'zz-sentinel';

const JSON_TYPE: Array<[string, string]> = [['content-type', 'application/json']];

function jsonCase(group: Group, paths: readonly string[]): fc.Arbitrary<CaseSpec> {
  const routes = JSON_ROUTES.filter((r) => paths.includes(r.path));
  return fc.oneof(
    ...routes.map((route) =>
      route.body.map((body): CaseSpec => {
        const text = toJsonText(body);
        const why = route.mustReject(body);
        return {
          route: `POST ${route.path}`,
          kind: `${group}: json body`,
          method: 'POST',
          path: route.path,
          headers: JSON_TYPE,
          body: Buffer.from(text),
          ...(why === undefined ? {} : { mustReject: why }),
        };
      }),
    ),
  );
}

/** Bodies that are not JSON at all, or JSON no route accepts: each a 400 at least. */
const MALFORMED = [
  '',
  '{',
  '{"a":}',
  '{"a":1,}',
  "{'a':1}",
  '{"a":1}{"b":2}',
  '{"a":NaN}',
  '{"a":Infinity}',
  '{"a":01}',
  '{"a":.5}',
  '{"a":"\\x41"}',
  '{"a":"\\ud800"',
  '\u0000',
  '{"__proto__":{"polluted":1}}',
  '{"constructor":{"prototype":{"polluted":1}}}',
];

/** Content types that are not JSON: each must be a 415. */
const NOT_JSON = [
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/xml',
  'application/octet-stream',
];
/** Content types that may or may not count as JSON: any 4xx or 2xx will do, never a 5xx. */
const JSONISH = [
  'application/json; charset=utf-8',
  'application/json; charset=latin1',
  'application/json; charset=utf-16',
  'APPLICATION/JSON',
  'application/jsonx',
  'application/json, text/plain',
  'application/vnd.api+json',
  'application/json;',
  '',
  '*/*',
];

const contentCase: fc.Arbitrary<CaseSpec> = fc
  .record({
    path: fc.constantFrom(...Object.keys(EXAMPLE_BODIES)),
    body: fc.oneof(
      { arbitrary: fc.constant('example'), weight: 4 },
      { arbitrary: fc.constantFrom(...MALFORMED).map((t) => `malformed:${t}`), weight: 4 },
      { arbitrary: fc.constant('bytes'), weight: 2 },
      { arbitrary: fc.constant('bom'), weight: 1 },
      { arbitrary: fc.constant('utf16'), weight: 1 },
      { arbitrary: fc.constant('deep'), weight: 1 },
      { arbitrary: fc.constant('too-large'), weight: 1 },
    ),
    bytes: fc.uint8Array({ maxLength: 200 }),
    depth: fc.integer({ min: 1000, max: 200_000 }),
    type: fc.oneof(
      { arbitrary: fc.constant<string | undefined>('application/json'), weight: 4 },
      { arbitrary: fc.constantFrom(...NOT_JSON), weight: 3 },
      { arbitrary: fc.constantFrom(...JSONISH), weight: 3 },
      { arbitrary: fc.constant<string | undefined>(undefined), weight: 1 },
    ),
    extra: fc.option(
      fc.constantFrom<[string, string]>(
        ['content-encoding', 'gzip'],
        ['content-encoding', 'br'],
        ['content-encoding', 'identity'],
        ['x-api-key', 'nope'],
        ['authorization', 'Bearer \u00ff'],
        ['accept', 'application/xml'],
        ['expect', '100-continue'],
        ['x-request-id', 'x'.repeat(8000)],
      ),
    ),
  })
  .map(({ path, body, bytes, depth, type, extra }): CaseSpec => {
    const example = EXAMPLE_BODIES[path] ?? '{}';
    let data: Buffer;
    let why: string | undefined;
    if (body === 'example') data = Buffer.from(example);
    else if (body === 'bytes') data = Buffer.from(bytes);
    else if (body === 'bom') data = Buffer.from(`\ufeff${example}`);
    else if (body === 'utf16') data = Buffer.from(example, 'utf16le');
    else if (body === 'deep') data = Buffer.from(deepText(depth, depth % 2 === 0).text);
    else if (body === 'too-large') {
      // Past BODY_LIMIT (10 MB): a 413 however it is read.
      data = Buffer.alloc(10 * 1024 * 1024 + 1024, ' ');
      data.write(example);
      why = 'a body over BODY_LIMIT must be refused';
    } else {
      data = Buffer.from(body.slice('malformed:'.length));
      why = 'a malformed JSON body must be refused';
    }
    if (type !== undefined && NOT_JSON.includes(type)) why = 'a body that is not JSON must get a 415';
    const headers: Array<[string, string]> = [];
    if (type !== undefined) headers.push(['content-type', type]);
    if (extra) headers.push(extra);
    const kind = `content: ${type === undefined ? 'no content type' : `type "${type}"`}, body ${body.split(':')[0]}${extra ? `, ${extra[0]}` : ''}`;
    if (body === 'too-large') {
      // On a socket of its own, and only the first 64 KB of the body after the headers: the
      // Content-Length alone says it is too large, and the server answers 413 and closes. Writing
      // more races that close: a write into a closed socket draws a reset, which makes the kernel
      // drop the 413 unread (node:http reports EPIPE then, not the answer).
      const head = [
        `POST ${path} HTTP/1.1`,
        'Host: 127.0.0.1',
        ...headers.map(([n, v]) => `${n}: ${v}`),
        `Content-Length: ${data.length}`,
        'Connection: close',
      ];
      const pieces = [Buffer.from(`${head.join('\r\n')}\r\n\r\n`, 'latin1'), data.subarray(0, 65_536)];
      return {
        route: `POST ${path}`,
        kind,
        method: 'POST',
        path,
        headers,
        body: undefined,
        raw: { pieces, pauseMs: 0, responses: 1 },
        mustReject: why ?? 'a body over BODY_LIMIT must be refused',
      };
    }
    return {
      route: `POST ${path}`,
      kind,
      method: 'POST',
      path,
      headers,
      body: data,
      ...(why === undefined ? {} : { mustReject: why }),
    };
  });

/** Bytes of `text` as a path: unreserved characters kept, everything else percent-encoded. */
function encodePath(text: string): string {
  let out = '';
  for (const byte of Buffer.from(text)) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-._~/]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

const GET_PATHS = ['/healthcheck', '/readyz', '/openapi.json', '/redoc'];
const ODD_PATHS = [
  '/',
  '//api//v1/ranking',
  '/api/v1/ranking/',
  '/API/V1/RANKING',
  '/api/v1/entities/get/../upload',
  '/api/v1/%2e%2e/entities/get',
  '/healthcheck?__proto__[polluted]=1&constructor[prototype][x]=1',
  '/healthcheck?a=1&a=2',
  '/healthcheck%00',
  '/%zz',
  '/%ff%fe',
  '/redoc/../../../etc/passwd',
  '/redoc/redoc.standalone.js.map',
  `/${'a'.repeat(8000)}`,
  '/api/v2/ranking',
  '/metrics',
];

/** The console's sample of the index: its one query parameter known, unknown, repeated, missing or hostile. */
const SAMPLE_QUERIES = [
  'entity_type=product',
  'entity_type=user',
  'entity_type=__proto__',
  'entity_type=constructor',
  'entity_type=',
  '',
  'entity_type=product&entity_type=user',
  'entity_type[]=product',
  'entity_type=product&count=100000',
  'entity_type=%zz',
  `entity_type=${'p'.repeat(5000)}`,
];
const sampleIdsCase: fc.Arbitrary<CaseSpec> = fc
  .oneof(
    fc.constantFrom(...SAMPLE_QUERIES),
    fc.string({ unit: 'grapheme', maxLength: 20 }).map((type) => `entity_type=${encodeURIComponent(type)}`),
  )
  .map(
    (query): CaseSpec => ({
      route: 'GET /console/sample-ids',
      kind: 'get: known route',
      method: 'GET',
      path: `/console/sample-ids?${query}`,
      headers: [],
      body: undefined,
    }),
  );

const getCase: fc.Arbitrary<CaseSpec> = fc.oneof(
  sampleIdsCase,
  fc.constantFrom(...GET_PATHS).map(
    (path): CaseSpec => ({
      route: `GET ${path}`,
      kind: 'get: known route',
      method: 'GET',
      path,
      headers: [],
      body: undefined,
    }),
  ),
  fc
    .tuple(
      fc.constantFrom('PUT', 'DELETE', 'PATCH', 'GET', 'OPTIONS', 'HEAD'),
      fc.constantFrom(...Object.keys(EXAMPLE_BODIES)),
    )
    .map(
      ([method, path]): CaseSpec => ({
        route: `${method} (wrong method)`,
        kind: 'get: wrong method',
        method,
        path,
        headers: [],
        body: undefined,
      }),
    ),
  fc.constantFrom(...GET_PATHS).map(
    (path): CaseSpec => ({
      route: 'POST (wrong method)',
      kind: 'get: wrong method',
      method: 'POST',
      path,
      headers: JSON_TYPE,
      body: Buffer.from('{}'),
    }),
  ),
  fc
    .oneof(
      fc.constantFrom(...ODD_PATHS),
      fc
        .array(fc.string({ unit: 'grapheme', maxLength: 12 }), { minLength: 1, maxLength: 4 })
        .map((s) => encodePath(`/${s.join('/')}`)),
    )
    .map(
      (path): CaseSpec => ({
        route: 'GET (other path)',
        kind: 'get: unknown path',
        method: 'GET',
        path,
        headers: [],
        body: undefined,
      }),
    ),
);

/** The arbitrary of a case of the chosen groups. */
export function caseArbitrary(groups: readonly Group[]): fc.Arbitrary<CaseSpec> {
  const of: Record<Group, () => fc.Arbitrary<CaseSpec>> = {
    ranking: () => jsonCase('ranking', ['/api/v1/ranking']),
    entities: () =>
      jsonCase('entities', [
        '/api/v1/entities/upload',
        '/api/v1/entities/get',
        '/api/entity/v1/entities/delete',
        '/api/v1/entities/delete',
      ]),
    features: () =>
      jsonCase('features', ['/api/v1/features/upload', '/api/v1/features/get', '/api/v1/features/delete']),
    feedback: () => jsonCase('feedback', ['/api/v1/events/feedback']),
    admin: () => jsonCase('admin', ['/api/v1/admin/models/reload']),
    get: () => getCase,
    content: () => contentCase,
    framing: () => framingCase,
  };
  return fc.oneof(...groups.map((group) => ({ arbitrary: of[group](), weight: WEIGHTS[group] })));
}

/** A fast-check seed for request `index` of a run with `seed`: distinct and stable per pair. */
function seedOf(seed: number, index: number): number {
  // Math.imul mixing (murmur3's finalizer): neighbouring indexes get unrelated seeds.
  let h = (seed ^ Math.imul(index + 1, 0x9e3779b1)) | 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) | 0;
}

/**
 * Request `index` of the run with `seed`: the same bytes every time. Bytes naming a sentinel are
 * changed (the mark's last letter) so that no request can touch the sentinels by its ids.
 */
export function caseAt(arbitrary: fc.Arbitrary<CaseSpec>, seed: number, index: number): FuzzCase {
  const [spec] = fc.sample(arbitrary, { seed: seedOf(seed, index), numRuns: 1 });
  if (spec === undefined) throw new Error('fast-check generated no case');
  const clean = (b: Buffer) => {
    const at = b.indexOf(SENTINEL_MARK);
    return at < 0 ? b : Buffer.from(b.toString('latin1').replaceAll(SENTINEL_MARK, 'zz-sentinex'), 'latin1');
  };
  return {
    ...spec,
    index,
    path: spec.path.replaceAll(SENTINEL_MARK, 'zz-sentinex'),
    body: spec.body && clean(spec.body),
    ...(spec.raw ? { raw: { ...spec.raw, pieces: spec.raw.pieces.map(clean) } } : {}),
  };
}
