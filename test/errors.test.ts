/**
 * Every error status over HTTP (issue 2, item 6), each in the one error shape
 * `{"detail": …, "error_code": …}`: 400 malformed JSON, 415 not JSON, 413 too large, 422 validation
 * (schema, unknown type, batch limit, declared field types), 404 unknown route, 500 without internals.
 * And the catalogue itself: every code documented and unique, every error a user can meet (app
 * definitions, app bugs in a request, model files, CLI input) a RankdError with its code.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { createClient } from 'redis';
import Type from 'typebox';
import { defineApp } from '../src/app/define-app.js';
import { CliError } from '../src/cli/cli-error.js';
import { openInput } from '../src/cli/load/input.js';
import { InputError } from '../src/cli/load/records.js';
import { ProductEntity } from '../src/entities/built-in.js';
import { withoutAddresses } from '../src/errors/addresses.js';
import { PartialWriteError, RedisUnavailableError } from '../src/errors/index.js';
import { buildServer } from '../src/http/build-server.js';
import { toErrorResponse } from '../src/http/error-handler.js';
import {
  AppDefinitionError,
  defineExperiment,
  defineFeatureView,
  defineModel,
  defineRankingPipeline,
  ErrorCode,
  ExperimentLookupError,
  Feature,
  FeatureLookupError,
  getExperimentVariant,
  getFeature,
  linearModel,
  logEvent,
  ModelInvalidError,
  RankdError,
} from '../src/index.js';
import { parseGbdtModel } from '../src/models/gbdt/load-gbdt.js';
import { GbdtModelError } from '../src/models/gbdt/model-error.js';
import { RedisKeys } from '../src/redis/keys.js';
import { splitName } from '../src/request/feature-table.js';
import { AppMisuseError, ConfigError } from '../src/server.js';
import { startTestRedis, type TestRedis } from './helpers/redis-server.js';
import { postJson, testConfig, testServer } from './helpers/server.js';

const UPLOAD = '/api/v1/entities/upload';
const GET = '/api/v1/entities/get';
const DELETE_PATHS = ['/api/entity/v1/entities/delete', '/api/v1/entities/delete'];
const BUILT_IN_TYPES = ['product', 'query', 'brand', 'category', 'user', 'request'];

let redis: TestRedis;
let raw: ReturnType<typeof createClient>;
/** BODY_LIMIT=2048, MAX_BATCH=5, and `product` declares `price: number`. */
let server: FastifyInstance;

before(async () => {
  redis = await startTestRedis();
  raw = createClient({ url: redis.url });
  await raw.connect();
  const app = defineApp({
    entities: [ProductEntity.extend({ fields: { price: Type.Number(), tags: Type.Array(Type.String()) } })],
  });
  server = await testServer(redis, { env: { BODY_LIMIT: '2048', MAX_BATCH: '5' }, app });
});

after(async () => {
  await server?.close();
  await raw?.close();
  await redis?.stop();
});

interface ErrorResponse {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: error bodies are asserted field by field
  body: any;
}

async function send(url: string, payload: string | undefined, contentType?: string): Promise<ErrorResponse> {
  const res = await server.inject({
    method: 'POST',
    url,
    ...(payload === undefined ? {} : { payload }),
    headers: contentType === undefined ? {} : { 'content-type': contentType },
  });
  return { status: res.statusCode, body: res.json() };
}

/** Asserts the error shape with a sentence as `detail`. */
function assertError(res: ErrorResponse, status: number, code: string): string {
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.deepEqual(Object.keys(res.body).sort(), ['detail', 'error_code']);
  assert.equal(res.body.error_code, code);
  assert.equal(typeof res.body.detail, 'string');
  assert.ok(res.body.detail.length > 0);
  return res.body.detail;
}

interface Problem {
  loc: Array<string | number>;
  msg: string;
  type: string;
}

/** Asserts a 422 whose `detail` is a non-empty list of `{loc, msg, type}` with locs under `body`. */
function assertValidation(res: ErrorResponse): Problem[] {
  assert.equal(res.status, 422, JSON.stringify(res.body));
  assert.equal(res.body.error_code, 'RANKD_VALIDATION');
  assert.ok(Array.isArray(res.body.detail), 'detail is a list');
  const problems = res.body.detail as Problem[];
  assert.ok(problems.length > 0);
  for (const problem of problems) {
    assert.deepEqual(Object.keys(problem).sort(), ['loc', 'msg', 'type']);
    assert.ok(Array.isArray(problem.loc));
    assert.equal(problem.loc[0], 'body', JSON.stringify(problem));
    assert.equal(typeof problem.msg, 'string');
    assert.equal(typeof problem.type, 'string');
  }
  return problems;
}

const keyCount = () => raw.dbSize();

describe('400 malformed JSON', () => {
  for (const [what, text] of [
    ['truncated', '{"entity_type":"product","entity_ids":["a"'],
    ['trailing garbage', '{"entity_type":"product","entity_ids":["a"]} x'],
    ['single quotes', "{'entity_type':'product','entity_ids':['a']}"],
    ['a trailing comma', '{"entity_type":"product","entity_ids":["a",]}'],
    ['a __proto__ key', '{"entity_type":"product","entity_ids":["a"],"__proto__":{"x":1}}'],
    [
      'a constructor.prototype key',
      '{"entity_type":"product","entity_ids":[],"constructor":{"prototype":{}}}',
    ],
  ] as const) {
    test(`${what} → 400 RANKD_MALFORMED_JSON`, async () => {
      for (const path of [UPLOAD, GET, ...DELETE_PATHS]) {
        assertError(await send(path, text, 'application/json'), 400, 'RANKD_MALFORMED_JSON');
      }
    });
  }

  test('an empty body with Content-Type: application/json → 400 RANKD_MALFORMED_JSON', async () => {
    assertError(await send(GET, '', 'application/json'), 400, 'RANKD_MALFORMED_JSON');
    assertError(await send(GET, undefined, 'application/json'), 400, 'RANKD_MALFORMED_JSON');
  });

  test('an invalid upload writes nothing', async () => {
    const before = await keyCount();
    const text = '{"entity_type":"product","entities":[{"product_id":"m1"}]';
    assertError(await send(UPLOAD, text, 'application/json'), 400, 'RANKD_MALFORMED_JSON');
    assert.equal(await keyCount(), before);
  });
});

describe('415 not JSON', () => {
  const valid = JSON.stringify({ entity_type: 'product', entities: [{ product_id: 't1' }] });
  for (const contentType of [
    'text/plain',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'application/xml',
    'application/json-patch+json',
  ]) {
    test(`${contentType} → 415 RANKD_UNSUPPORTED_MEDIA_TYPE, even with a JSON body, and nothing is written`, async () => {
      const before = await keyCount();
      const detail = assertError(await send(UPLOAD, valid, contentType), 415, 'RANKD_UNSUPPORTED_MEDIA_TYPE');
      assert.match(detail, /application\/json/);
      assert.equal(await keyCount(), before);
    });
  }

  test('no Content-Type at all → 415', async () => {
    assertError(
      await send(GET, '{"entity_type":"product","entity_ids":[]}'),
      415,
      'RANKD_UNSUPPORTED_MEDIA_TYPE',
    );
  });
});

describe('413 body over BODY_LIMIT (2048 bytes here)', () => {
  test('a body one byte over the limit → 413 RANKD_BODY_TOO_LARGE, nothing written; at the limit it passes', async () => {
    const make = (size: number) => {
      const head = '{"entity_type":"product","entities":[{"product_id":"big","pad":"';
      const tail = '"}]}';
      return head + 'x'.repeat(size - head.length - tail.length) + tail;
    };
    const before = await keyCount();
    assertError(await send(UPLOAD, make(2049), 'application/json'), 413, 'RANKD_BODY_TOO_LARGE');
    assert.equal(await keyCount(), before);
    const atLimit = await send(UPLOAD, make(2048), 'application/json');
    assert.equal(atLimit.status, 200, JSON.stringify(atLimit.body));
    assert.equal(await keyCount(), before + 1);
  });

  test('the limit counts bytes, not characters', async () => {
    // 700 three-byte characters: 2100 bytes of UTF-8, well under 2048 characters.
    const text = JSON.stringify({ entity_type: 'product', entity_ids: ['€'.repeat(700)] });
    assert.ok(text.length < 2048);
    assertError(await send(GET, text, 'application/json'), 413, 'RANKD_BODY_TOO_LARGE');
  });
});

describe('422 schema violations', () => {
  test('detail is a list of {loc, msg, type} with loc starting at "body"', async () => {
    const problems = assertValidation(
      await postJson(server, GET, { entity_type: 'product', entity_ids: 'a' }),
    );
    assert.deepEqual(
      problems.map((p) => p.loc),
      [['body', 'entity_ids']],
    );
  });

  test('a missing field is reported as missing at its location', async () => {
    const problems = assertValidation(await postJson(server, UPLOAD, { entity_type: 'product' }));
    assert.ok(
      problems.some((p) => p.type === 'missing' && p.loc.join('.') === 'body.entities'),
      JSON.stringify(problems),
    );
  });

  test('a body that is not an object → 422 at ["body"]', async () => {
    for (const body of ['[]', '"text"', '42', 'null']) {
      const problems = assertValidation(await send(GET, body, 'application/json'));
      assert.deepEqual(problems[0]?.loc, ['body'], body);
    }
  });

  test('the index of a bad item is in its location', async () => {
    const problems = assertValidation(
      await postJson(server, GET, { entity_type: 'product', entity_ids: ['a', { no: 1 }, 'c'] }),
    );
    assert.deepEqual(problems[0]?.loc, ['body', 'entity_ids', 1]);
  });

  test('an upload whose entities are not objects → 422 at the item', async () => {
    const problems = assertValidation(
      await postJson(server, UPLOAD, { entity_type: 'product', entities: [{ product_id: 'a' }, 'b'] }),
    );
    assert.deepEqual(problems[0]?.loc, ['body', 'entities', 1]);
  });

  test('an entity without its id → 422 naming the item and the id field, nothing written', async () => {
    const before = await keyCount();
    const problems = assertValidation(
      await postJson(server, UPLOAD, {
        entity_type: 'product',
        entities: [{ product_id: 'ok-1' }, { name: 'x' }],
      }),
    );
    assert.deepEqual(problems, [
      { loc: ['body', 'entities', 1, 'product_id'], msg: 'field required', type: 'missing' },
    ]);
    assert.equal(await keyCount(), before);
  });
});

describe('422 unknown entity_type', () => {
  for (const path of [UPLOAD, GET, ...DELETE_PATHS]) {
    test(`${path}: the msg lists the known types`, async () => {
      const body =
        path === UPLOAD ? { entity_type: 'widget', entities: [] } : { entity_type: 'widget', entity_ids: [] };
      const problems = assertValidation(await postJson(server, path, body));
      const problem = problems.find((p) => p.loc.join('.') === 'body.entity_type');
      assert.ok(problem, JSON.stringify(problems));
      for (const name of BUILT_IN_TYPES)
        assert.ok(problem.msg.includes(`"${name}"`), `${name} in ${problem.msg}`);
    });
  }

  test('a type the app declares is known; a near miss is not', async () => {
    const app = defineApp({ entities: [ProductEntity.extend({ name: 'widget' })] });
    const withWidget = await testServer(redis, { app });
    try {
      const ok = await postJson(withWidget, GET, { entity_type: 'widget', entity_ids: [] });
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
      const problems = assertValidation(
        await postJson(withWidget, GET, { entity_type: 'Widget', entity_ids: [] }),
      );
      assert.ok(problems[0]?.msg.includes('"widget"'), problems[0]?.msg);
    } finally {
      await withWidget.close();
    }
  });
});

describe('422 more than MAX_BATCH (5 here) items', () => {
  const ids = (n: number) => Array.from({ length: n }, (_, i) => `b${i}`);
  const entities = (n: number) => ids(n).map((product_id) => ({ product_id }));

  test('upload of 6 entities → 422 at body.entities, nothing written; 5 pass', async () => {
    const before = await keyCount();
    const problems = assertValidation(
      await postJson(server, UPLOAD, { entity_type: 'product', entities: entities(6) }),
    );
    assert.deepEqual(problems[0]?.loc, ['body', 'entities']);
    assert.match(problems[0]?.msg ?? '', /5/);
    assert.equal(await keyCount(), before);
    const ok = await postJson(server, UPLOAD, { entity_type: 'product', entities: entities(5) });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
  });

  test('get of 6 ids → 422 at body.entity_ids; 5 pass', async () => {
    const problems = assertValidation(
      await postJson(server, GET, { entity_type: 'product', entity_ids: ids(6) }),
    );
    assert.deepEqual(problems[0]?.loc, ['body', 'entity_ids']);
    assert.equal((await postJson(server, GET, { entity_type: 'product', entity_ids: ids(5) })).status, 200);
  });

  for (const path of DELETE_PATHS) {
    test(`${path} of 6 ids → 422 and nothing is deleted`, async () => {
      await postJson(server, UPLOAD, { entity_type: 'product', entities: entities(5) });
      const before = await keyCount();
      const problems = assertValidation(
        await postJson(server, path, { entity_type: 'product', entity_ids: ids(6) }),
      );
      assert.deepEqual(problems[0]?.loc, ['body', 'entity_ids']);
      assert.equal(await keyCount(), before);
    });
  }
});

describe('declared fields (product declares price: number, tags: string[])', () => {
  test('a wrong type of a declared field → 422 naming the item index and field; nothing written', async () => {
    const before = await keyCount();
    const problems = assertValidation(
      await postJson(server, UPLOAD, {
        entity_type: 'product',
        entities: [
          { product_id: 'df-ok', price: 3 },
          { product_id: 'df-bad', price: 'cheap' },
          { product_id: 'df-bad-2', tags: ['a', 7] },
        ],
      }),
    );
    const locs = problems.map((p) => p.loc);
    assert.deepEqual(locs, [
      ['body', 'entities', 1, 'price'],
      ['body', 'entities', 2, 'tags', 1],
    ]);
    assert.equal(await keyCount(), before);
    assert.equal(
      await raw.exists('default:1:product:df-ok'),
      0,
      'the valid entity of the batch was not written',
    );
  });

  test('null for a declared number is a wrong type too', async () => {
    const problems = assertValidation(
      await postJson(server, UPLOAD, {
        entity_type: 'product',
        entities: [{ product_id: 'n', price: null }],
      }),
    );
    assert.deepEqual(problems[0]?.loc, ['body', 'entities', 0, 'price']);
  });

  test('undeclared fields are stored and returned exactly as sent, nulls and nesting included', async () => {
    const entity = {
      product_id: 'undeclared',
      price: 9.5,
      colour: 'red',
      nothing: null,
      nested: { a: [1, { b: null }, 'x'], 'key with spaces': true },
      list: [],
      unicode: 'Zoë 焼き 😀',
    };
    const up = await postJson(server, UPLOAD, { entity_type: 'product', entities: [entity] });
    assert.equal(up.status, 200, JSON.stringify(up.body));
    const got = await server.inject({
      method: 'POST',
      url: GET,
      payload: { entity_type: 'product', entity_ids: ['undeclared'] },
    });
    assert.equal(got.statusCode, 200);
    // The exact text, so key order and nulls are checked too.
    assert.equal(got.body, `{"entity_type":"product","entities":{"undeclared":${JSON.stringify(entity)}}}`);
  });
});

describe('404 unknown route', () => {
  test('POST and GET of an unknown path → 404 RANKD_NOT_FOUND naming the path', async () => {
    const post = await send('/api/v1/entities/nope', '{}', 'application/json');
    assert.match(assertError(post, 404, 'RANKD_NOT_FOUND'), /\/api\/v1\/entities\/nope/);
    const get = await server.inject({ method: 'GET', url: '/nope?x=1' });
    assert.equal(get.statusCode, 404);
    assert.equal(get.json().error_code, 'RANKD_NOT_FOUND');
    assert.ok(!get.json().detail.includes('x=1'), 'the query string is not echoed');
  });

  test('a wrong method on an index route → 404 in the error shape', async () => {
    const res = await server.inject({ method: 'GET', url: GET });
    assert.equal(res.statusCode, 404);
    assert.equal(res.json().error_code, 'RANKD_NOT_FOUND');
  });
});

describe('500: unexpected errors never leak internals', () => {
  test('toErrorResponse(new Error("boom")) → 500 RANKD_INTERNAL with no message and no stack', () => {
    const error = new Error('boom: secret at /srv/app/internal.ts:12');
    const { status, body } = toErrorResponse(error);
    assert.equal(status, 500);
    assert.equal(body.error_code, 'RANKD_INTERNAL');
    assert.equal(typeof body.detail, 'string');
    const text = JSON.stringify(body);
    assert.ok(!text.includes('boom'), text);
    assert.ok(!text.includes('secret'), text);
    assert.ok(!text.includes('.ts'), text);
    assert.ok(!text.includes('    at '), text);
    assert.deepEqual(Object.keys(body).sort(), ['detail', 'error_code']);
  });

  test('non-Error throwables are a 500 too', () => {
    for (const thrown of ['boom', 42, null, undefined, { message: 'boom' }]) {
      const { status, body } = toErrorResponse(thrown);
      assert.equal(status, 500, String(thrown));
      assert.equal(body.error_code, 'RANKD_INTERNAL');
    }
  });

  test('over HTTP: a route that throws (an Error or anything else) → 500 RANKD_INTERNAL, nothing internal in the body', async () => {
    const thrown: Record<string, unknown> = {
      error: new Error('boom: secret internals'),
      string: 'boom: secret internals',
      null: null,
      undefined: undefined,
    };
    const throwing = await buildServer({
      config: testConfig(redis),
      extraRoutes: (s) => {
        for (const [name, value] of Object.entries(thrown)) {
          s.get(`/test-only/throws/${name}`, async () => {
            throw value;
          });
        }
      },
    });
    try {
      for (const name of Object.keys(thrown)) {
        const res = await throwing.inject({ method: 'GET', url: `/test-only/throws/${name}` });
        assert.equal(res.statusCode, 500, name);
        assert.deepEqual(Object.keys(res.json()).sort(), ['detail', 'error_code'], `${name}: ${res.body}`);
        assert.equal(res.json().error_code, 'RANKD_INTERNAL', name);
        for (const leak of ['boom', 'secret', 'stack', '    at ', 'Cannot read'])
          assert.ok(!res.body.includes(leak), `${name}: ${res.body}`);
      }
    } finally {
      await throwing.close();
    }
  });
});

const ERRORS_DOC = readFileSync(new URL('../docs/reference/errors.md', import.meta.url), 'utf8');

/** What `fn` throws (or its promise rejects with); fails when it does not. */
async function thrown(fn: () => unknown): Promise<unknown> {
  try {
    await fn();
  } catch (error) {
    return error;
  }
  assert.fail('expected an error');
}

/** Asserts a catalogue error of `type` with `code` and `status`, whose status and code docs/reference/errors.md lists. */
function assertCatalogued<T>(
  error: unknown,
  type: abstract new (...args: never[]) => T,
  code: string,
  status: number,
): T {
  assert.ok(error instanceof type, `a ${type.name}, not ${String(error)}`);
  assert.ok(error instanceof RankdError, `${type.name} is a RankdError`);
  assert.equal(error.code, code);
  assert.equal(error.statusCode, status);
  assert.ok(error.message.length > 0);
  assert.ok(
    ERRORS_DOC.includes(`| ${status} | \`${code}\` |`),
    `docs/reference/errors.md has a row ${status} ${code}`,
  );
  return error;
}

describe('the catalogue', () => {
  test('every code is unique, RANKD_ and documented in docs/reference/errors.md; the page names no other code', () => {
    const codes: string[] = Object.values(ErrorCode);
    assert.equal(new Set(codes).size, codes.length, 'no two names share a code');
    for (const code of codes) {
      assert.match(code, /^RANKD_[A-Z]+(_[A-Z]+)*$/);
      assert.match(ERRORS_DOC, new RegExp(`\\| \\d{3} \\| \`${code}\` \\|`), `${code} has a row`);
    }
    for (const [named] of ERRORS_DOC.matchAll(/RANKD_[A-Z_]+/g))
      assert.ok(codes.includes(named), `docs/reference/errors.md names ${named}, which is no code`);
  });

  test('app definitions that cannot work are RANKD_APP_INVALID', async () => {
    const error = assertCatalogued(
      await thrown(() =>
        defineFeatureView({ name: 'Bad Name', entity: ProductEntity, features: { a: Feature.float() } }),
      ),
      AppDefinitionError,
      'RANKD_APP_INVALID',
      500,
    );
    assert.match(error.message, /Feature view name "Bad Name" must match/);
    const noVariants = await thrown(() => defineExperiment({ id: 'x', variants: [] }));
    assertCatalogued(noVariants, AppDefinitionError, 'RANKD_APP_INVALID', 500);
  });

  test('rankd functions called outside a request, or with a built-in event type, are RANKD_APP_MISUSE', async () => {
    const outside = assertCatalogued(
      await thrown(() => getFeature('product::p1', 'stats:ctr')),
      AppMisuseError,
      'RANKD_APP_MISUSE',
      500,
    );
    assert.match(outside.message, /getFeature works only inside pipeline code/);
    assertCatalogued(await thrown(() => getExperimentVariant('x')), AppMisuseError, 'RANKD_APP_MISUSE', 500);
    const builtIn = await thrown(() => logEvent('IMPRESSION', {}));
    assert.match(assertCatalogued(builtIn, AppMisuseError, 'RANKD_APP_MISUSE', 500).message, /built-in/);
  });

  test('a feature name that is not group:feature is RANKD_FEATURE_LOOKUP', async () => {
    const error = await thrown(() => splitName('ctr'));
    assertCatalogued(error, FeatureLookupError, 'RANKD_FEATURE_LOOKUP', 500);
  });

  test('a model file that cannot load is RANKD_MODEL_INVALID naming the file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rankd-errors-'));
    try {
      const damaged = join(dir, 'damaged.json');
      writeFileSync(damaged, '{"weights": {"x:a": "heavy"}}');
      const model = linearModel({ name: 'damaged', file: damaged, features: ['x:a'], watch: false });
      const error = assertCatalogued(
        await thrown(() => model.initialize()),
        ModelInvalidError,
        'RANKD_MODEL_INVALID',
        500,
      );
      assert.equal(error.file, damaged);
      assert.equal(
        error.message,
        `cannot load model file ${damaged}: the weight of "x:a" is not a finite number`,
      );
      // A model declared without `features` reads them from its file at once: a missing file stops there.
      const missing = join(dir, 'missing.json');
      const early = await thrown(() => linearModel({ name: 'missing', file: missing }));
      assert.equal(assertCatalogued(early, ModelInvalidError, 'RANKD_MODEL_INVALID', 500).file, missing);
      assert.ok((early as Error).message.includes(missing), (early as Error).message);
      // The GBDT parsers' own error is one too.
      const gbdt = await thrown(() => parseGbdtModel('not a model', 'ranker.txt'));
      assertCatalogued(gbdt, GbdtModelError, 'RANKD_MODEL_INVALID', 500);
      assert.ok(gbdt instanceof ModelInvalidError);
      assert.equal(gbdt.file, 'ranker.txt');
      assert.match(gbdt.message, /^ranker\.txt: neither an XGBoost JSON model/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('CLI failures carry a code: data files RANKD_INPUT_INVALID, arguments RANKD_CLI_USAGE, else RANKD_CLI_FAILED', async () => {
    const missing = await thrown(() => openInput('/nonexistent-rankd-dir/rows.jsonl', undefined));
    assert.match(
      assertCatalogued(missing, CliError, 'RANKD_INPUT_INVALID', 400).message,
      /cannot read \/nonexistent-rankd-dir\/rows\.jsonl: ENOENT/,
    );
    const unknownFormat = await thrown(() => openInput('rows.txt', undefined));
    assertCatalogued(unknownFormat, CliError, 'RANKD_CLI_USAGE', 400);
    assertCatalogued(new CliError('redis-server did not start'), CliError, 'RANKD_CLI_FAILED', 500);
    assert.equal(new CliError('x').exitCode, 1);
    const input = assertCatalogued(
      new InputError(7, 'unclosed quote'),
      InputError,
      'RANKD_INPUT_INVALID',
      400,
    );
    assert.equal(input.line, 7);
  });

  test('cluster keys under a PROJECT_NAME with a brace are RANKD_CONFIG_INVALID', async () => {
    const error = await thrown(() => new RedisKeys('shop{1}', '1', 'cluster'));
    assertCatalogued(error, ConfigError, 'RANKD_CONFIG_INVALID', 500);
  });
});

describe('app bugs met by a request: 500 with their own code and a detail that says what to change', () => {
  const Stats = defineFeatureView({
    name: 'stats',
    entity: ProductEntity,
    features: { ctr: Feature.float({ default: 0 }) },
  });
  const Unscoped = defineExperiment({ id: 'unscoped', variants: [{ name: 'only', share: 1 }] });
  const pipeline = (name: string, path: string, score: (products: readonly object[]) => number[]) =>
    defineRankingPipeline({
      name,
      path,
      candidate: ProductEntity,
      model: defineModel({ name: `${name}Model`, score }),
    });
  const app = defineApp({
    name: 'app-bugs',
    featureViews: [Stats],
    pipelines: [
      // Reads stats:ctr without listing it in `features`: the request never fetched the view.
      pipeline('UndeclaredFeature', '/undeclared', (products) =>
        products.map((p) => Number(getFeature(p, 'stats:ctr'))),
      ),
      pipeline('UnknownFeature', '/unknown-feature', (products) =>
        products.map((p) => Number(getFeature(p, 'nope:ctr'))),
      ),
      pipeline('UnscopedExperiment', '/unscoped', (products) => {
        getExperimentVariant(Unscoped);
        return products.map(() => 0);
      }),
      pipeline('BuiltInEvent', '/built-in-event', (products) => {
        logEvent('MODEL', {});
        return products.map(() => 0);
      }),
    ],
  });
  let bugs: FastifyInstance;

  before(async () => {
    bugs = await testServer(redis, { app });
    const up = await postJson(bugs, UPLOAD, { entity_type: 'product', entities: [{ product_id: 'b1' }] });
    assert.equal(up.status, 200, JSON.stringify(up.body));
  });

  after(async () => {
    await bugs?.close();
  });

  const rankAt = async (path: string) =>
    await postJson(bugs, `/api/v1${path}`, { request_id: `bug-${path}`, candidates: [{ product_id: 'b1' }] });

  test('getFeature of a feature no component declared → 500 RANKD_FEATURE_LOOKUP naming it and what to declare', async () => {
    const detail = assertError(await rankAt('/undeclared'), 500, 'RANKD_FEATURE_LOOKUP');
    assert.equal(
      detail,
      'Feature "stats:ctr" was not requested in this request: declare it in the `features` (or `requires`) of the component that reads it',
    );
    const unknown = assertError(await rankAt('/unknown-feature'), 500, 'RANKD_FEATURE_LOOKUP');
    assert.match(unknown, /^Feature "nope:ctr" was not requested in this request/);
  });

  test('getExperimentVariant of an experiment out of scope → 500 RANKD_EXPERIMENT_LOOKUP naming it and where to list it', async () => {
    const detail = assertError(await rankAt('/unscoped'), 500, 'RANKD_EXPERIMENT_LOOKUP');
    assert.match(detail, /^Experiment "unscoped" is not assigned in pipeline UnscopedExperiment: list it in/);
  });

  test('logEvent of a built-in event type → 500 RANKD_APP_MISUSE', async () => {
    const detail = assertError(await rankAt('/built-in-event'), 500, 'RANKD_APP_MISUSE');
    assert.equal(detail, 'logEvent: MODEL is a built-in event type; name app events differently');
  });

  test('the exported classes are what apps catch', async () => {
    assert.ok(new FeatureLookupError('x') instanceof RankdError);
    assert.ok(new ExperimentLookupError('x') instanceof RankdError);
    assert.equal(new ExperimentLookupError('x').name, 'ExperimentLookupError');
    assert.equal(new FeatureLookupError('x').name, 'FeatureLookupError');
  });
});

describe('503: the Redis address is left out of responses unless EXPOSE_REDIS_ADDRESS=true', () => {
  const refused = Object.assign(new Error('connect ECONNREFUSED 10.1.2.3:7001'), { code: 'ECONNREFUSED' });

  test('unavailable: neither the configured address nor one in the cause; the message (logged) keeps both', () => {
    const error = new RedisUnavailableError('redis.internal:6390', refused);
    const hidden = toErrorResponse(error).body.detail as string;
    for (const part of ['redis.internal', '6390', '10.1.2.3', '7001'])
      assert.ok(!hidden.includes(part), `${part} in ${hidden}`);
    assert.match(hidden, /^Redis is not available \(connect ECONNREFUSED <address>\)\. Start a local one/);
    assert.match(hidden, /REDIS_URL/);
    const shown = toErrorResponse(error, { exposeRedisAddress: true }).body.detail;
    assert.equal(shown, error.message);
    assert.match(
      error.message,
      /^Redis at redis\.internal:6390 is not available \(connect ECONNREFUSED 10\.1\.2\.3:7001\)/,
    );
  });

  test('a host named without a port (ENOTFOUND), IPv6, a cluster’s seed nodes', () => {
    const cases: Array<[address: string, cause: string, cluster: boolean]> = [
      ['cache:6379', 'getaddrinfo ENOTFOUND cache', false],
      ['[fd00::7]:6379', 'connect ECONNREFUSED fd00::7:6379', false],
      ['node-a.prod:7000,node-b.prod:7000', 'MOVED 866 node-c.prod:7002', true],
    ];
    for (const [address, cause, cluster] of cases) {
      const detail = toErrorResponse(new RedisUnavailableError(address, new Error(cause), cluster)).body
        .detail as string;
      for (const part of ['cache', 'fd00', 'node-a', 'node-b', 'node-c', '7000', '7002', '6379'])
        assert.ok(!detail.includes(part), `${part} in ${detail}`);
    }
  });

  test('a partial write keeps its ids and leaves the node out', () => {
    const error = new PartialWriteError(
      ['p1'],
      ['p2'],
      new Error('connect ETIMEDOUT 10.0.0.9:7003'),
      '10.0.0.1:7000',
    );
    const { status, body } = toErrorResponse(error);
    assert.equal(status, 503);
    assert.deepEqual([body.written_ids, body.failed_ids], [['p1'], ['p2']]);
    assert.ok(!String(body.detail).includes('10.0.0'), String(body.detail));
    assert.match(
      String(toErrorResponse(error, { exposeRedisAddress: true }).body.detail),
      /10\.0\.0\.9:7003/,
    );
  });

  test('withoutAddresses leaves ordinary reasons alone', () => {
    for (const text of [
      'no answer within 2000 ms',
      'LOADING Redis is loading the dataset in memory',
      'The client is offline',
    ])
      assert.equal(withoutAddresses(text, ['redis']), text);
  });
});
