/**
 * Property-based fuzzing of the index routes (issue 2, item 6) with malformed and hostile bodies:
 * random JSON of any shape, wrong types for every field, huge and negative numbers, deep nesting,
 * unicode, `__proto__`/`constructor` keys, broken JSON text, wrong content types, empty bodies.
 *
 * Properties, for every route:
 * - the status is never 5xx, and every error body has `detail` and a string `error_code`;
 * - a body built to be invalid (a valid body with one thing broken) gets a 4xx and writes and
 *   deletes NOTHING (Redis DBSIZE unchanged; the seeded entities it names are still there);
 * - a body of any shape that is not answered 200 changes nothing either; one answered 200 by upload
 *   wrote exactly the keys of the ids it answered (they are then removed again).
 *
 * FUZZ_RUNS=2000 runs each property longer (default 200).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { createClient } from 'redis';
import Type from 'typebox';
import { defineApp } from '../src/app/define-app.js';
import { ProductEntity } from '../src/entities/built-in.js';
import { startTestRedis, type TestRedis } from './helpers/redis-server.js';
import { testServer } from './helpers/server.js';

const NUM_RUNS = Number(process.env.FUZZ_RUNS ?? 200);
const MAX_BATCH = 5;
const UPLOAD = '/api/v1/entities/upload';
const GET = '/api/v1/entities/get';
const DELETE_PATHS = ['/api/entity/v1/entities/delete', '/api/v1/entities/delete'] as const;

const ENTITY_TYPES = ['product', 'query', 'brand', 'category', 'user', 'request'] as const;
type EntityTypeName = (typeof ENTITY_TYPES)[number];
const ID_FIELD: Record<EntityTypeName, string> = {
  product: 'product_id',
  query: 'query',
  brand: 'brand_id',
  category: 'category_id',
  user: 'user_id',
  request: 'request_id',
};
/** Product entities present for the whole file: invalid deletes name them and must not remove them. */
const SEED_IDS = ['seed-0', 'seed-1', 'seed-2', 'seed-3', 'seed-4'];
/** A field no generated entity has (extra fields never use this name). */
const ABSENT_FIELD = 'zz_field_absent_from_every_entity';

let redis: TestRedis;
let server: FastifyInstance;
let raw: ReturnType<typeof createClient>;

before(async () => {
  redis = await startTestRedis();
  raw = createClient({ url: redis.url });
  await raw.connect();
  // `product` declares a typed field, so wrong types of declared fields are fuzzed too.
  const app = defineApp({ entities: [ProductEntity.extend({ fields: { price: Type.Number() } })] });
  server = await testServer(redis, { env: { MAX_BATCH: String(MAX_BATCH) }, app });
  const seeded = await server.inject({
    method: 'POST',
    url: UPLOAD,
    payload: { entity_type: 'product', entities: SEED_IDS.map((product_id) => ({ product_id, seed: true })) },
  });
  assert.equal(seeded.statusCode, 200, seeded.body);
  assert.equal(await raw.dbSize(), SEED_IDS.length);
});

after(async () => {
  await server?.close();
  await raw?.close();
  await redis?.stop();
});

// ---------------------------------------------------------------------------------------------
// JSON text builders: bodies are built as text so that keys such as `__proto__`, duplicate keys and
// numbers JavaScript cannot hold (1e400) reach the server exactly as generated.

type Entries = Array<[key: string, jsonText: string]>;
const str = (s: string) => JSON.stringify(s);
const arr = (items: readonly string[]) => `[${items.join(',')}]`;
const obj = (entries: Entries) => `{${entries.map(([k, v]) => `${str(k)}:${v}`).join(',')}}`;

/** One request: its body text (undefined: no body), its content type, and what makes it interesting. */
interface Case {
  text: string | undefined;
  contentType: string | undefined;
  why: string;
}
const asJson = (text: string | undefined, why: string): Case => ({
  text,
  contentType: 'application/json',
  why,
});

// ---------------------------------------------------------------------------------------------
// Hostile values.

const loneSurrogate = fc
  .tuple(fc.string(), fc.integer({ min: 0xd800, max: 0xdfff }), fc.string())
  .map(([a, code, b]) => `${a}${String.fromCharCode(code)}x${b}`);

const hostileString = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary' }),
  fc.string({ unit: 'grapheme' }),
  loneSurrogate,
  fc.constantFrom(
    '',
    ' ',
    'product',
    'PRODUCT',
    'product ',
    '__proto__',
    'constructor',
    'prototype',
    'toString',
    'hasOwnProperty',
    '*',
    '?[a]\\',
    'default:1:product:*',
    'a:b:c',
    '\u0000',
    '\n\r\t',
    '😀👍🏽',
    '\u202eevil',
    'Zoë 焼き菓子',
  ),
);

const hostileKey = fc.oneof(
  hostileString,
  fc.constantFrom(
    '__proto__',
    'constructor',
    'prototype',
    'entity_type',
    'entities',
    'entity_ids',
    'entity_key',
    'product_id',
    'price',
  ),
);

/** Number literals, including ones JavaScript rounds to Infinity, 0 or a neighbour. */
const numberText = fc.oneof(
  fc.integer().map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => JSON.stringify(d)),
  fc.constantFrom(
    '1e400',
    '-1e400',
    '1e-400',
    '-0',
    '123456789012345678901234567890',
    '-9007199254740993',
    '1E5',
    '-1.5e300',
  ),
);

/** JSON text, a few levels deep, with hostile strings and numbers and object keys from `keys`. */
function jsonTextWith(keys: fc.Arbitrary<string>): fc.Arbitrary<string> {
  return fc.letrec<{ json: string; scalar: string; array: string; object: string }>((tie) => ({
    json: fc.oneof({ maxDepth: 3, depthIdentifier: 'json' }, tie('scalar'), tie('array'), tie('object')),
    scalar: fc.oneof(fc.constantFrom('null', 'true', 'false'), numberText, hostileString.map(str)),
    array: fc.array(tie('json'), { maxLength: 4, depthIdentifier: 'json' }).map(arr),
    object: fc.array(fc.tuple(keys, tie('json')), { maxLength: 4, depthIdentifier: 'json' }).map(obj),
  })).json;
}
/** Any JSON text, `__proto__` and `constructor` keys included. */
const jsonText = jsonTextWith(hostileKey);
/** Keys Fastify accepts: no `__proto__`, no `constructor` (whose `prototype` it refuses). */
const acceptedKey = hostileKey.filter((k) => k !== '__proto__' && k !== 'constructor');
/** JSON text Fastify's parser accepts, hostile otherwise. */
const acceptedJsonText = jsonTextWith(acceptedKey);

/** Thousands of nested arrays or objects: parses, but is hostile to anything recursive. */
const deepText = fc
  .tuple(fc.noBias(fc.integer({ min: 100, max: 30_000 })), fc.boolean())
  .map(([depth, arrays]) =>
    arrays ? '['.repeat(depth) + ']'.repeat(depth) : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`,
  );

const parse = (text: string): unknown => JSON.parse(text);
const isPlainObject = (v: unknown) => typeof v === 'object' && v !== null && !Array.isArray(v);

const notKnownType = jsonText.filter((t) => {
  const v = parse(t);
  return !(typeof v === 'string' && (ENTITY_TYPES as readonly string[]).includes(v));
});
const notArray = jsonText.filter((t) => !Array.isArray(parse(t)));
const notObject = jsonText.filter((t) => !isPlainObject(parse(t)));

/** An entity id rankd must refuse: wrong type, empty, too long, not finite, unpaired surrogate. */
const invalidId = fc.oneof(
  fc.constantFrom('null', 'true', 'false', '""', '1e400', '-1e400', '[]', '{}', '["a"]', '{"id":"a"}'),
  fc.constant(str('x'.repeat(4097))),
  loneSurrogate.map(str),
  jsonText.filter((t) => {
    const v = parse(t);
    return v === null || v === '' || typeof v === 'boolean' || typeof v === 'object';
  }),
);
/** A valid id: a non-empty string of valid Unicode up to 4096 characters, or a finite number. */
const validId = fc.oneof(
  hostileString.filter((s) => s.length > 0 && s.length <= 4096 && !/[\uD800-\uDFFF]/u.test(s)).map(str),
  fc.integer().map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => JSON.stringify(d)),
);

/** Text after a complete JSON document that makes it invalid (anything but JSON whitespace). */
const trailingGarbage = fc.string({ minLength: 1 }).filter((s) => /[^ \t\n\r]/.test(s));
const pollutingMember = fc.constantFrom(
  '"__proto__":{"polluted":true}',
  '"__proto__":null',
  '"__proto__":[]',
  '"constructor":{"prototype":{"polluted":true}}',
);
const wrongContentType = fc.constantFrom(
  undefined,
  '',
  'text/plain',
  'text/json',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/xml',
  'application/octet-stream',
  'application/json-patch+json',
  'application/jsonx',
);

/** A valid entity of `type`: its id field first, then extra fields that can never be the id. */
function entityArb(type: EntityTypeName): fc.Arbitrary<Entries> {
  const idField = ID_FIELD[type];
  const reserved = new Set([idField, `${type}_id`, 'price', '__proto__', 'constructor', ABSENT_FIELD]);
  return fc
    .tuple(validId, fc.array(fc.tuple(hostileKey, jsonText), { maxLength: 3 }))
    .map(([id, extra]): Entries => [[idField, id], ...extra.filter(([key]) => !reserved.has(key))]);
}

/** Inserts `member` as the first member of the object that opens at `text[at]` (`{`). */
function insertMember(text: string, at: number, member: string): string {
  const empty = text[at + 1] === '}';
  return `${text.slice(0, at + 1)}${member}${empty ? '' : ','}${text.slice(at + 1)}`;
}

/** Breakages of a valid body's text, the same for every route. */
function textBreakages(valid: string): fc.Arbitrary<Case> {
  return fc.oneof(
    fc.nat(valid.length - 1).map((n) => asJson(valid.slice(0, n), `truncated at ${n}`)),
    trailingGarbage.map((g) => asJson(valid + g, `trailing ${str(g)}`)),
    pollutingMember.map((m) => asJson(insertMember(valid, 0, m), `top-level ${m}`)),
    wrongContentType.map((contentType) => ({ text: valid, contentType, why: `content-type ${contentType}` })),
    fc.constantFrom('', undefined).map((text) => asJson(text, 'empty body')),
  );
}

// ---------------------------------------------------------------------------------------------
// Invalid bodies: a valid body with exactly one thing broken, so every one must be refused.

const invalidUpload: fc.Arbitrary<Case> = fc
  .constantFrom(...ENTITY_TYPES)
  .chain((type) =>
    fc.record({
      type: fc.constant(type),
      entities: fc.array(entityArb(type), { minLength: 1, maxLength: MAX_BATCH }),
      extraEntities: fc.array(entityArb(type), { minLength: MAX_BATCH + 1, maxLength: MAX_BATCH + 4 }),
    }),
  )
  .chain(({ type, entities, extraEntities }) => {
    const body = (typeText: string | undefined, entitiesText: string | undefined, more: Entries = []) =>
      obj([
        ...(typeText === undefined ? [] : ([['entity_type', typeText]] as Entries)),
        ...(entitiesText === undefined ? [] : ([['entities', entitiesText]] as Entries)),
        ...more,
      ]);
    const list = (items: Entries[]) => arr(items.map(obj));
    const valid = body(str(type), list(entities));
    const index = fc.nat(entities.length - 1);
    const withEntity = (i: number, entity: string) =>
      arr(entities.map((e, j) => (j === i ? entity : obj(e))));
    const breakages: Array<fc.Arbitrary<Case>> = [
      fc
        .option(notKnownType, { nil: undefined })
        .map((t) => asJson(body(t, list(entities)), `entity_type ${t ?? 'missing'}`)),
      fc
        .option(notArray, { nil: undefined })
        .map((t) => asJson(body(str(type), t), `entities ${t ?? 'missing'}`)),
      fc
        .tuple(index, notObject)
        .map(([i, t]) => asJson(body(str(type), withEntity(i, t)), `entity ${i} is ${t}`)),
      fc.tuple(index, fc.option(invalidId, { nil: undefined })).map(([i, id]) => {
        const [, ...rest] = entities[i] as Entries;
        const entity = id === undefined ? rest : ([[ID_FIELD[type], id], ...rest] as Entries);
        return asJson(body(str(type), withEntity(i, obj(entity))), `entity ${i} id ${id ?? 'missing'}`);
      }),
      fc
        .oneof(
          fc.constantFrom('""', '0', '-1', 'true', '[]', '{}', '["product_id"]', '1e400'),
          fc.constant(str(ABSENT_FIELD)),
        )
        .map((k) => asJson(body(str(type), list(entities), [['entity_key', k]]), `entity_key ${k}`)),
      fc.constant(asJson(body(str(type), list(extraEntities)), `${extraEntities.length} entities`)),
      fc.tuple(index, pollutingMember).map(([i, m]) => {
        const entity = insertMember(obj(entities[i] as Entries), 0, m);
        return asJson(body(str(type), withEntity(i, entity)), `entity ${i} has ${m}`);
      }),
      textBreakages(valid),
    ];
    if (type === 'product') {
      // The declared `price: number` with anything but a number.
      const notNumber = jsonText.filter((t) => typeof parse(t) !== 'number');
      breakages.push(
        fc.tuple(index, notNumber).map(([i, price]) => {
          const entity = obj([...(entities[i] as Entries), ['price', price]]);
          return asJson(body(str(type), withEntity(i, entity)), `entity ${i} price ${price}`);
        }),
      );
    }
    return fc.oneof(...breakages);
  });

/** Ids for get/delete: mostly the seeded ones, so that a delete that should not happen shows. */
const someIds = (min: number, max: number) =>
  fc.array(fc.oneof(fc.constantFrom(...SEED_IDS).map(str), validId), { minLength: min, maxLength: max });

const invalidIdsBody: fc.Arbitrary<Case> = fc
  .record({ ids: someIds(0, MAX_BATCH), tooMany: someIds(MAX_BATCH + 1, MAX_BATCH + 5) })
  .chain(({ ids, tooMany }) => {
    const body = (typeText: string | undefined, idsText: string | undefined) =>
      obj([
        ...(typeText === undefined ? [] : ([['entity_type', typeText]] as Entries)),
        ...(idsText === undefined ? [] : ([['entity_ids', idsText]] as Entries)),
      ]);
    const valid = body(str('product'), arr(ids));
    return fc.oneof(
      fc
        .option(notKnownType, { nil: undefined })
        .map((t) => asJson(body(t, arr(ids)), `entity_type ${t ?? 'missing'}`)),
      fc
        .option(notArray, { nil: undefined })
        .map((t) => asJson(body(str('product'), t), `entity_ids ${t ?? 'missing'}`)),
      fc.tuple(fc.nat(ids.length), invalidId).map(([i, bad]) => {
        const withBad = [...ids.slice(0, i), bad, ...ids.slice(i)];
        return asJson(body(str('product'), arr(withBad)), `entity_ids[${i}] is ${bad}`);
      }),
      fc.constant(asJson(body(str('product'), arr(tooMany)), `${tooMany.length} ids`)),
      textBreakages(valid),
    );
  });

// ---------------------------------------------------------------------------------------------
// Bodies of any shape, valid ones included.

const knownTypeText = fc.constantFrom(...ENTITY_TYPES).map(str);
/** An entity-ish object: an id of any kind, extra fields of any kind, sometimes deeply nested. */
const anyEntity = fc
  .tuple(
    fc.constantFrom(...Object.values(ID_FIELD)),
    fc.oneof(validId, invalidId),
    fc.array(fc.tuple(hostileKey, fc.oneof({ weight: 5, arbitrary: jsonText }, deepText)), { maxLength: 3 }),
  )
  .map(([idField, id, extra]) => obj([[idField, id], ...extra]));

const anyBody: fc.Arbitrary<Case> = fc
  .tuple(
    fc.oneof(
      jsonText,
      deepText,
      fc.string({ unit: 'binary' }),
      fc
        .record(
          {
            entity_type: fc.oneof({ weight: 4, arbitrary: knownTypeText }, jsonText),
            entities: fc.oneof(
              { weight: 4, arbitrary: fc.array(anyEntity, { maxLength: 7 }).map(arr) },
              jsonText,
            ),
            entity_ids: fc.oneof(
              { weight: 4, arbitrary: fc.array(fc.oneof(validId, invalidId), { maxLength: 7 }).map(arr) },
              jsonText,
            ),
            entity_key: fc.oneof(fc.constantFrom('null', str('product_id'), str('query')), jsonText),
            other: jsonText,
          },
          { requiredKeys: [] },
        )
        .map((members) => obj(Object.entries(members))),
    ),
    fc.oneof({ weight: 8, arbitrary: fc.constant('application/json') }, wrongContentType),
  )
  .map(([text, contentType]) => ({ text, contentType, why: 'any body' }));

/**
 * Valid uploads with hostile content: unicode and huge numbers anywhere, odd field names, long
 * strings, values nested thousands deep. Every one is accepted, except that an entity nested too
 * deeply to store is refused (422 `too_deep`).
 */
const validHostileUpload = fc.constantFrom(...ENTITY_TYPES).chain((type) => {
  const reserved = new Set([ID_FIELD[type], `${type}_id`, 'price']);
  const value = fc.oneof(
    { weight: 6, arbitrary: acceptedJsonText },
    { weight: 2, arbitrary: deepText },
    { weight: 1, arbitrary: fc.string({ unit: 'grapheme', minLength: 1000, maxLength: 5000 }).map(str) },
  );
  const entity = fc
    .tuple(validId, fc.array(fc.tuple(acceptedKey, value), { maxLength: 4 }))
    .map(([id, extra]) => obj([[ID_FIELD[type], id], ...extra.filter(([key]) => !reserved.has(key))]));
  return fc.record({
    type: fc.constant(type),
    entities: fc.array(entity, { maxLength: MAX_BATCH }),
  });
});

// ---------------------------------------------------------------------------------------------
// Checks.

interface Answer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: response bodies are checked field by field
  body: any;
}

const show = (c: Case) =>
  `${c.why}; content-type ${c.contentType}; body ${c.text === undefined ? '(none)' : str(c.text.slice(0, 300))}`;

async function send(url: string, c: Case): Promise<Answer> {
  const res = await server.inject({
    method: 'POST',
    url,
    ...(c.text === undefined ? {} : { payload: c.text }),
    headers: c.contentType === undefined ? {} : { 'content-type': c.contentType },
  });
  let body: unknown;
  try {
    body = JSON.parse(res.body);
  } catch {
    assert.fail(`${res.statusCode} with a body that is not JSON: ${res.body.slice(0, 200)} (${show(c)})`);
  }
  return { status: res.statusCode, body };
}

/** Never 5xx; every error in the error shape. */
function assertWellAnswered(answer: Answer, c: Case): void {
  assert.ok(answer.status < 500, `${answer.status} ${JSON.stringify(answer.body)} for ${show(c)}`);
  if (answer.status < 400) return;
  const { body } = answer;
  assert.ok(isPlainObject(body), `error body is an object (${show(c)})`);
  assert.ok('detail' in body, `error body has detail (${show(c)})`);
  assert.equal(typeof body.error_code, 'string', `error_code is a string (${show(c)})`);
  assert.match(body.error_code, /^RANKD_[A-Z_]+$/);
  if (Array.isArray(body.detail)) {
    assert.ok(body.detail.length > 0);
    for (const problem of body.detail) {
      assert.ok(Array.isArray(problem.loc) && problem.loc[0] === 'body', JSON.stringify(problem));
      assert.equal(typeof problem.msg, 'string');
      assert.equal(typeof problem.type, 'string');
    }
  } else {
    assert.equal(typeof body.detail, 'string', `detail is a string or a list (${show(c)})`);
  }
}

/** An invalid body: refused with a 4xx, and Redis exactly as before. */
async function assertRefusedAndNothingChanged(url: string, c: Case): Promise<void> {
  const before = await raw.dbSize();
  const answer = await send(url, c);
  assertWellAnswered(answer, c);
  assert.ok(answer.status >= 400, `${url} accepted an invalid body (${answer.status}): ${show(c)}`);
  assert.equal(await raw.dbSize(), before, `${url} changed Redis for an invalid body: ${show(c)}`);
}

const keyOf = (type: string, id: string) => `default:1:${type}:${id}`;

/**
 * fc.assert, with the failure report cut short (a counterexample can hold 100 KB of nesting), but
 * keeping the seed and path to replay it, the start of the counterexample and the error.
 */
async function assertProperty<Ts>(property: fc.IAsyncProperty<Ts>, examples: Ts[] = []): Promise<void> {
  const details = await fc.check(property, { numRuns: NUM_RUNS, examples });
  if (!details.failed) return;
  const cut = (text: string, max: number) => (text.length <= max ? text : `${text.slice(0, max)} […]`);
  const error = details.errorInstance;
  assert.fail(
    `${cut(fc.defaultReportMessage(details) ?? 'property failed', 1500)}\n` +
      `Error: ${cut(error instanceof Error ? error.message : String(error), 2500)}`,
  );
}

describe('upload', () => {
  test('invalid bodies: 4xx in the error shape, nothing written', async () => {
    await assertProperty(fc.asyncProperty(invalidUpload, (c) => assertRefusedAndNothingChanged(UPLOAD, c)));
  });

  test('bodies of any shape: never 5xx; unless 200, nothing written; a 200 wrote exactly its ids', async () => {
    let accepted = 0;
    await assertProperty(
      fc.asyncProperty(anyBody, async (c) => {
        const before = await raw.dbSize();
        const answer = await send(UPLOAD, c);
        assertWellAnswered(answer, c);
        if (answer.status !== 200) {
          assert.equal(await raw.dbSize(), before, `nothing written for a ${answer.status}: ${show(c)}`);
          return;
        }
        accepted++;
        const { entity_type: type, entity_ids: ids } = answer.body as {
          entity_type: string;
          entity_ids: string[];
        };
        assert.ok(ids.every((id) => typeof id === 'string'));
        const keys = [...new Set(ids)].map((id) => keyOf(type, id));
        if (keys.length > 0) {
          assert.equal(await raw.exists(keys), keys.length, `every answered id was written: ${show(c)}`);
          await raw.del(keys);
        }
        assert.equal(await raw.dbSize(), before, `only the answered ids were written: ${show(c)}`);
      }),
      // A valid body always runs first, so the write-path assertions are exercised whatever the
      // random generator produces (it reaches a 200 only now and then).
      [[asJson('{"entity_type":"product","entities":[{"product_id":"fz1","n":1}]}', 'a valid upload')]],
    );
    // The generator must reach the write path, or the last assertions test nothing.
    assert.ok(accepted > 0, 'no generated body was accepted');
  });
});

describe('upload of valid bodies with hostile content', () => {
  test('200 and each entity stored as sent (as JSON reads it), or 422 too_deep and nothing written', async () => {
    let stored = 0;
    await assertProperty(
      fc.asyncProperty(validHostileUpload, async ({ type, entities }) => {
        const c = asJson(
          obj([
            ['entity_type', str(type)],
            ['entities', arr(entities)],
          ]),
          'valid hostile',
        );
        const before = await raw.dbSize();
        const answer = await send(UPLOAD, c);
        assertWellAnswered(answer, c);
        if (answer.status === 422) {
          const types = (answer.body.detail as Array<{ type: string }>).map((p) => p.type);
          assert.ok(types.length > 0 && types.every((t) => t === 'too_deep'), `${types}: ${show(c)}`);
          assert.equal(await raw.dbSize(), before, show(c));
          return;
        }
        assert.equal(answer.status, 200, `${JSON.stringify(answer.body).slice(0, 300)}: ${show(c)}`);
        const ids = answer.body.entity_ids as string[];
        assert.equal(ids.length, entities.length);
        // A later duplicate wins.
        const latest = new Map<string, string>();
        for (const [i, text] of entities.entries()) latest.set(ids[i] as string, text);
        for (const [id, text] of latest) {
          let expected: string;
          try {
            expected = JSON.stringify(JSON.parse(text));
          } catch (error) {
            if (error instanceof RangeError) continue; // too deep for this test's own stack
            throw error;
          }
          assert.equal(await raw.get(keyOf(type, id)), expected, `entity ${str(id)} of ${show(c)}`);
          stored++;
        }
        const keys = [...latest.keys()].map((id) => keyOf(type, id));
        if (keys.length > 0) await raw.del(keys);
        assert.equal(await raw.dbSize(), before, `only the answered ids were written: ${show(c)}`);
      }),
    );
    assert.ok(stored > 0, 'no entity was stored and compared');
  });
});

describe('get', () => {
  test('invalid bodies: 4xx in the error shape, nothing changed', async () => {
    await assertProperty(fc.asyncProperty(invalidIdsBody, (c) => assertRefusedAndNothingChanged(GET, c)));
  });

  test('bodies of any shape: never 5xx, never a write', async () => {
    await assertProperty(
      fc.asyncProperty(anyBody, async (c) => {
        const before = await raw.dbSize();
        assertWellAnswered(await send(GET, c), c);
        assert.equal(await raw.dbSize(), before, show(c));
      }),
    );
  });
});

describe('delete (both paths)', () => {
  test('invalid bodies: 4xx in the error shape, nothing deleted (the seeded entities they name stay)', async () => {
    await assertProperty(
      fc.asyncProperty(fc.constantFrom(...DELETE_PATHS), invalidIdsBody, async (path, c) => {
        await assertRefusedAndNothingChanged(path, c);
      }),
    );
    assert.equal(await raw.exists(SEED_IDS.map((id) => keyOf('product', id))), SEED_IDS.length);
  });

  test('bodies of any shape: never 5xx; Redis loses exactly deleted_count keys', async () => {
    await assertProperty(
      fc.asyncProperty(fc.constantFrom(...DELETE_PATHS), anyBody, async (path, c) => {
        const before = await raw.dbSize();
        const answer = await send(path, c);
        assertWellAnswered(answer, c);
        const deleted = answer.status === 200 ? (answer.body.deleted_count as number) : 0;
        assert.equal(await raw.dbSize(), before - deleted, `${path} ${answer.status}: ${show(c)}`);
        if (deleted > 0) {
          // Put back any seeded entity a random body happened to name.
          await raw.mSet(
            SEED_IDS.map((id): [string, string] => [
              keyOf('product', id),
              JSON.stringify({ product_id: id, seed: true }),
            ]),
          );
        }
      }),
    );
  });
});
