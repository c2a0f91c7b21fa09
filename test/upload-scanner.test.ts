/**
 * The upload fast path (src/fast-paths/upload-scanner.ts): entities stored as the bytes they were sent
 * as. Its one promise: for every body it either declines, or stores exactly the bytes and answers
 * exactly the ids that the slow path (Fastify's JSON parser, the route's schema, EntityIndex.prepare
 * with JSON.stringify) would.
 *
 * 1. A seeded generator of bodies, compared against the slow path run in this file: "canonical"
 *    bodies (compact entities, kept escapes, numbers as JSON.stringify writes them) must be accepted
 *    and identical; "wild" ones (whitespace, every escape, numbers of every shape, duplicate and
 *    special keys, deep nesting, bad ids, bad envelopes) may be declined, and when accepted must be
 *    identical. SCAN_FUZZ_RUNS=20000 runs longer (default 3000 of each).
 * 2. One explicit case per reason to decline, and the edges that are accepted.
 * 3. Over HTTP on a real Redis: fast-path uploads read back byte for byte, hydrate in a ranking
 *    request, and go through LZ4; bodies that fall back are stored re-serialised, errors unchanged.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { defineApp } from '../src/app/define-app.js';
import { defineEntity } from '../src/entities/define-entity.js';
import { MAX_SCAN_DEPTH, type ScannedUpload, scanUpload } from '../src/fast-paths/upload-scanner.js';
import { defineModel, defineRankingPipeline, ProductEntity, Type } from '../src/index.js';
import { RedisKeys } from '../src/redis/keys.js';
import { type SeededRandom, seededRandom } from './helpers/body-scanning.js';
import { RawRedis } from './helpers/raw-redis.js';
import { startTestRedis, TEST_REDIS_MODE, type TestRedis } from './helpers/redis-server.js';
import { uploadPaths } from './helpers/scanner-paths.js';
import { postJson, testServer } from './helpers/server.js';

const MAX_BATCH = 5;
const RUNS = Number(process.env.SCAN_FUZZ_RUNS ?? 3000);

/**
 * A type with declared fields: plain ones the scanner checks by their bytes, and others (with
 * constraints, objects, arrays of arrays) it leaves to the type's validator.
 */
const Offer = defineEntity({
  name: 'offer',
  fields: {
    price: Type.Number(),
    count: Type.Integer({ description: 'an annotation' }),
    flag: Type.Boolean({ default: false }),
    note: Type.Union([Type.String(), Type.Null()]),
    tags: Type.Array(Type.String(), { default: [] }),
    scores: Type.Array(Type.Union([Type.Number(), Type.Null()])),
    ref: Type.String({ minLength: 2 }),
    meta: Type.Object({ a: Type.Number() }),
    grid: Type.Array(Type.Array(Type.Integer())),
  },
});
/** A type whose id field is not `<name>_id`. */
const Item = defineEntity({ name: 'item', idField: 'sku' });
const app = defineApp({ entities: [Offer, Item] });

// ---------------------------------------------------------------------------------------------
// The slow path, as the route runs it when the scanner declines, and the fast path.

const { scan, check: checkBody } = uploadPaths(app, MAX_BATCH);

// ---------------------------------------------------------------------------------------------
// A seeded generator of JSON texts.

/** Pieces of string contents as JSON text. Canonical ones are written so by JSON.stringify too. */
const CANONICAL_PIECES = [
  'a',
  'Z',
  '0',
  ' ',
  '-',
  'é',
  '中',
  '😀',
  '\u2028',
  '\x7f',
  '\\"',
  '\\\\',
  '\\n',
  '\\r',
  '\\t',
  '\\b',
  '\\f',
];
const WILD_PIECES = [
  ...CANONICAL_PIECES,
  '\\/',
  '\\u00e9',
  '\\u0041',
  '\\u001f',
  '\\ud83d\\ude00',
  '\\ud800',
  '\\x',
  '\x01',
  '\t',
  '\n',
  '"',
];

/**
 * What may be unusual in one generated body. Each wild body turns on only some of these, so that
 * a body with, say, odd numbers is not also declined for whitespace, and the numbers get checked.
 */
interface Wildness {
  /** Whitespace inside entities. */
  whitespace: boolean;
  /** Escapes the fast path declines, raw control characters. */
  strings: boolean;
  /** Numbers of every spelling. */
  numbers: boolean;
  /** Duplicate keys, digit keys, `__proto__`, `constructor`, escaped keys. */
  keys: boolean;
  /** Empty, null, long, boolean ids; entities without an id; non-objects. */
  ids: boolean;
  /** Unknown types and keys, repeated keys, bad entity_key, too many entities, cut-off bodies. */
  envelope: boolean;
  /** Nesting around the depth limit. */
  deep: boolean;
  /** Declared fields of the wrong type. */
  declared: boolean;
  /** Fields a type that declares some does not declare (the plain path names them). */
  undeclared: boolean;
}

const CANONICAL: Wildness = {
  whitespace: false,
  strings: false,
  numbers: false,
  keys: false,
  ids: false,
  envelope: false,
  deep: false,
  declared: false,
  undeclared: false,
};

function wildness(r: SeededRandom): Wildness {
  return {
    whitespace: r.chance(0.15),
    strings: r.chance(0.3),
    numbers: r.chance(0.4),
    keys: r.chance(0.3),
    ids: r.chance(0.2),
    envelope: r.chance(0.15),
    deep: r.chance(0.1),
    declared: r.chance(0.2),
    undeclared: r.chance(0.3),
  };
}

function stringText(r: SeededRandom, wild: Wildness, maxPieces = 6): string {
  const pieces = wild.strings ? WILD_PIECES : CANONICAL_PIECES;
  let text = '';
  const count = r.int(maxPieces + 1);
  for (let i = 0; i < count; i++) text += r.chance(0.6) ? 'abcdefgh'[r.int(8)] : r.pick(pieces);
  return `"${text}"`;
}

/** A number as JSON.stringify writes it, with at most 15 significant digits. */
function canonicalNumberText(r: SeededRandom): string {
  for (;;) {
    const sign = r.chance(0.3) ? '-' : '';
    const shape = r.int(4);
    let text: string;
    if (shape === 0) text = `${sign}${r.int(1000)}`;
    else if (shape === 1) text = `${sign}${r.int(100000)}.${1 + r.int(999)}`;
    else if (shape === 2) text = `${sign}0.${'0'.repeat(r.int(6))}${1 + r.int(99999)}`;
    else text = `${sign}${1 + r.int(999)}${'0'.repeat(r.int(19))}`;
    text = text.replace(/(\.\d*?)0+$/, '$1').replace(/\.$/, '');
    if (text === '-0') continue;
    const digits = text.replace(/[-.]/g, '').replace(/^0+/, '');
    const significant = text.includes('.') ? digits.length : digits.replace(/0+$/, '').length;
    if (significant > 15) continue;
    // The generator's own check: this is how JSON.stringify writes the number back.
    if (JSON.stringify(JSON.parse(text)) === text) return text;
  }
}

const WILD_NUMBERS = [
  '0',
  '-0',
  '-0.0',
  '0.0',
  '1.0',
  '1.50',
  '01',
  '00',
  '1e5',
  '1E5',
  '1e-7',
  '2.5e+3',
  '-1.5E-2',
  '0.000001',
  '0.0000001',
  '0.00000123',
  '123456789012345',
  '1234567890123456',
  '12345678901234567890',
  '100000000000000000000',
  '1000000000000000000000',
  '999999999999999999999',
  '9007199254740993',
  '0.1',
  '0.30000000000000004',
  '1.',
  '.5',
  '+1',
  '-',
  '1.7976931348623157e308',
  '5e-324',
  '1e400',
  '-1e400',
  '123.456',
  '-0.5',
  '0.123456789012345',
  '0.1234567890123456',
  '1.23456789012345e20',
  '123456789012345000000',
  '-10.10',
  '100.0',
  '0.10',
];

function numberText(r: SeededRandom, wild: Wildness): string {
  if (!wild.numbers || r.chance(0.4)) return canonicalNumberText(r);
  if (r.chance(0.3)) return String(r.next() * 10 ** (r.int(40) - 20));
  if (r.chance(0.2)) return `${canonicalNumberText(r)}${r.pick(['0', 'e1', '.0', '00'])}`;
  return r.pick(WILD_NUMBERS);
}

const CANONICAL_KEYS = [
  'a',
  'b',
  'name',
  'price_eur',
  'tag list',
  'x_y',
  'é',
  'k\\"q',
  'n\\nl',
  '中文',
  '-1',
  '1.5',
  '1a',
];
const WILD_KEYS = [
  ...CANONICAL_KEYS,
  'a',
  'a',
  'b',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  '0',
  '12',
  '01',
  '4294967295',
  '\\u0061',
  'a\\/b',
  '',
];
/** Fields entities use for their ids: never used for other fields, so a canonical entity has each once. */
const ID_FIELDS = ['product_id', 'query', 'query_id', 'sku', 'item_id', 'offer_id', 'user_id', 'code'];

const WHITESPACE = [' ', '\n', '\t', '\r\n', '  '];

/** Insignificant whitespace inside an entity, when this body has some. */
function ws(r: SeededRandom, wild: Wildness, p = 0.05): string {
  return wild.whitespace && r.chance(p) ? r.pick(WHITESPACE) : '';
}

/** Insignificant whitespace around entities and top-level members: always allowed. */
function outerWs(r: SeededRandom): string {
  return r.chance(0.1) ? r.pick(WHITESPACE) : '';
}

function valueText(r: SeededRandom, wild: Wildness, depth: number): string {
  const kind = r.int(depth > 3 ? 6 : 8);
  if (kind <= 1) return stringText(r, wild);
  if (kind === 2) return numberText(r, wild);
  if (kind === 3) return r.pick(['true', 'false', 'null']);
  if (kind === 4 && wild.envelope && r.chance(0.05))
    return r.pick(['tru', 'nul', 'True', 'undefined', 'NaN']);
  if (kind <= 5) return stringText(r, wild, 2);
  if (kind === 6) {
    const items = Array.from(
      { length: r.int(4) },
      () => ws(r, wild) + valueText(r, wild, depth + 1) + ws(r, wild),
    );
    return `[${items.join(',')}]`;
  }
  return objectText(r, wild, depth + 1, []);
}

/** An object with random fields, then `extra` fields (JSON texts of key and value) at random places. */
function objectText(
  r: SeededRandom,
  wild: Wildness,
  depth: number,
  extra: Array<[string, string]>,
  extraOnly = false,
): string {
  const pool = wild.keys ? WILD_KEYS : CANONICAL_KEYS;
  const fields: Array<[string, string]> = [];
  const used = new Set<string>();
  const count = extraOnly ? 0 : r.int(depth === 1 ? 6 : 4);
  for (let i = 0; i < count; i++) {
    const key = r.pick(pool);
    if (!wild.keys && used.has(key)) continue;
    used.add(key);
    fields.push([`"${key}"`, valueText(r, wild, depth)]);
  }
  for (const field of extra) fields.splice(r.int(fields.length + 1), 0, field);
  const members = fields.map(
    ([key, value]) => `${ws(r, wild)}${key}${ws(r, wild)}:${ws(r, wild)}${value}${ws(r, wild)}`,
  );
  return `{${members.join(',')}}`;
}

/** A usable id as JSON text: a string or a number. */
function idText(r: SeededRandom, wild: Wildness): string {
  if (wild.ids && r.chance(0.2))
    return r.pick([
      '""',
      'null',
      'true',
      '[]',
      '{}',
      '1.5',
      '-0',
      '1e3',
      `"${'x'.repeat(4097)}"`,
      '"\\ud800"',
      '0',
    ]);
  if (r.chance(0.2)) return wild.numbers ? numberText(r, wild) : String(r.int(100000));
  return `"${'pq'[r.int(2)]}${stringText(r, CANONICAL, 3).slice(1, -1)}${r.int(50)}"`;
}

const TYPE_NAMES = ['product', 'query', 'brand', 'user', 'item', 'offer'];
const ID_FIELD_OF: Record<string, string> = {
  product: 'product_id',
  query: 'query',
  brand: 'brand_id',
  user: 'user_id',
  item: 'sku',
  offer: 'offer_id',
};

/** Offer's declared fields: a valid value, and values of the wrong type or shape. */
const OFFER_FIELDS: Array<[string, (r: SeededRandom, wild: Wildness) => string, string[]]> = [
  ['price', numberText, ['"cheap"', 'null', 'true', '[]']],
  ['count', (r) => String(r.int(1000) - 500), ['1.5', '-0.25', '"1"', '100000000000000000000.5']],
  ['flag', (r) => r.pick(['true', 'false']), ['0', '"true"', 'null']],
  ['note', (r, wild) => (r.chance(0.3) ? 'null' : stringText(r, wild)), ['1', 'false', '[]']],
  [
    'tags',
    (r, wild) => `[${Array.from({ length: r.int(3) }, () => stringText(r, wild)).join(',')}]`,
    ['[1]', '["a",null]', '"a"', '[["a"]]', '[{}]'],
  ],
  [
    'scores',
    (r) =>
      `[${Array.from({ length: r.int(4) }, () => (r.chance(0.2) ? 'null' : canonicalNumberText(r))).join(',')}]`,
    ['["1"]', '[true]', '[[1]]', '{}'],
  ],
  ['ref', (r) => `"c${r.int(100)}"`, ['"c"', '""', '5']],
  ['meta', (r) => `{"a":${canonicalNumberText(r)}}`, ['{"a":"x"}', '{}', '[]']],
  ['grid', (r) => `[[${r.int(9)}],[]]`, ['[[1.5]]', '[1]', '[["x"]]']],
];

/** An upload body; canonical ones (CANONICAL) the scanner must take. */
function bodyText(r: SeededRandom, wild: Wildness, typeName = r.pick(TYPE_NAMES)): string {
  const idField = ID_FIELD_OF[typeName] as string;
  // Where the ids are: entity_key, the id field, or `<type>_id` when that is another field.
  const mode = r.int(3);
  const entityKey = mode === 0 ? r.pick(['code', 'sku', idField]) : undefined;
  const count = r.int(MAX_BATCH + (wild.envelope ? 3 : 1));
  const entities: string[] = [];
  for (let i = 0; i < count; i++) {
    if (wild.ids && r.chance(0.05)) {
      entities.push(r.pick(['1', '"x"', 'null', '[]', '[{}]', '{}', '{"other":1}']));
      continue;
    }
    const extra: Array<[string, string]> = [];
    if (entityKey !== undefined) extra.push([`"${entityKey}"`, idText(r, wild)]);
    else if (mode === 1 || `${typeName}_id` === idField) extra.push([`"${idField}"`, idText(r, wild)]);
    else extra.push([`"${typeName}_id"`, idText(r, wild)]);
    // Sometimes the id field as well, holding its own value.
    if (r.chance(0.2) && !extra.some(([key]) => key === `"${idField}"`))
      extra.push([`"${idField}"`, idText(r, wild)]);
    if (typeName === 'offer')
      for (const [field, good, bad] of OFFER_FIELDS)
        if (r.chance(0.4))
          extra.push([`"${field}"`, wild.declared && r.chance(0.3) ? r.pick(bad) : good(r, wild)]);
    if (wild.keys && r.chance(0.1)) extra.push([`"${r.pick(ID_FIELDS)}"`, idText(r, wild)]);
    // Only declared fields for an offer, unless wild: its undeclared ones send the body down the plain path.
    let entity = objectText(r, wild, 1, extra, typeName === 'offer' && !wild.undeclared);
    if (wild.deep && r.chance(0.3)) {
      const deep = MAX_SCAN_DEPTH - 4 + r.int(8);
      const inner = r.chance(0.5)
        ? `${'['.repeat(deep)}${']'.repeat(deep)}`
        : `${'{"d":'.repeat(deep)}1${'}'.repeat(deep)}`;
      entity = `${entity.slice(0, -1)}${entity.length > 2 ? ',' : ''}"deep":${inner}}`;
    }
    entities.push(entity);
  }
  const typeText =
    wild.envelope && r.chance(0.2)
      ? r.pick(['"nope"', '""', '5', '"Product"', '"produc\\u0074"'])
      : `"${typeName}"`;
  const members: string[] = [
    `"entity_type":${outerWs(r)}${typeText}`,
    `"entities":${outerWs(r)}[${entities.map((e) => outerWs(r) + e + outerWs(r)).join(',')}]`,
  ];
  if (entityKey !== undefined) members.push(`"entity_key":"${entityKey}"`);
  else if (r.chance(0.2)) members.push('"entity_key":null');
  if (wild.envelope && r.chance(0.3))
    members.push(
      r.pick([
        '"entity_key":""',
        '"entity_key":"constructor"',
        '"extra":1',
        '"entity_type":"user"',
        '"entity_key":5',
        '"entity_key":"0"',
      ]),
    );
  for (let i = members.length - 1; i > 0; i--) {
    const j = r.int(i + 1);
    [members[i], members[j]] = [members[j] as string, members[i] as string];
  }
  const text = `${outerWs(r)}{${members.map((m) => outerWs(r) + m + outerWs(r)).join(',')}}${outerWs(r)}`;
  if (wild.envelope && r.chance(0.1)) return text.slice(0, r.int(text.length));
  return text;
}

describe('the fast path stores and answers exactly what the slow path would', () => {
  test(`canonical bodies (${RUNS}): always taken, identical`, () => {
    for (let seed = 1; seed <= RUNS; seed++) {
      const text = bodyText(seededRandom(seed), CANONICAL);
      try {
        assert.ok(checkBody(text), 'declined a canonical body');
      } catch (error) {
        assert.fail(`seed ${seed}: ${(error as Error).message}\nbody: ${text.slice(0, 2000)}`);
      }
    }
  });

  test(`declared fields (${RUNS}): offers whose declared fields are right or wrong, declined or identical`, () => {
    let taken = 0;
    for (let seed = 1; seed <= RUNS; seed++) {
      const text = bodyText(seededRandom(2_000_000 + seed), { ...CANONICAL, declared: true }, 'offer');
      try {
        if (checkBody(text)) taken++;
      } catch (error) {
        assert.fail(`seed ${2_000_000 + seed}: ${(error as Error).message}\nbody: ${text.slice(0, 2000)}`);
      }
    }
    assert.ok(taken > RUNS / 5, `only ${taken} of ${RUNS} bodies were taken`);
  });

  test(`wild bodies (${RUNS}): declined, or identical`, () => {
    let taken = 0;
    for (let seed = 1; seed <= RUNS; seed++) {
      const r = seededRandom(1_000_000 + seed);
      const text = bodyText(r, wildness(r));
      try {
        if (checkBody(text)) taken++;
      } catch (error) {
        assert.fail(`seed ${1_000_000 + seed}: ${(error as Error).message}\nbody: ${text.slice(0, 2000)}`);
      }
    }
    // Not a vacuous pass: many wild bodies are still ones the fast path takes.
    assert.ok(taken > RUNS / 5, `only ${taken} of ${RUNS} wild bodies were taken`);
  });
});

// ---------------------------------------------------------------------------------------------

const entity = (inside: string) => `{"entity_type":"product","entities":[${inside}]}`;

describe('declines (the slow path answers or re-serialises)', () => {
  const cases: Array<[reason: string, body: string]> = [
    ['whitespace inside an entity', entity('{"product_id": "p1"}')],
    ['a newline inside an entity', entity('{"product_id":"p1",\n"a":1}')],
    ['whitespace inside a nested array', entity('{"product_id":"p1","a":[1, 2]}')],
    ['the escape \\/', entity('{"product_id":"p1","a":"x\\/y"}')],
    ['a \\u escape', entity('{"product_id":"p1","a":"\\u00e9"}')],
    ['a \\u escape of a control character', entity('{"product_id":"p1","a":"\\u0001"}')],
    ['a raw control character in a string', entity('{"product_id":"p1","a":"x\u0001y"}')],
    ['an exponent', entity('{"product_id":"p1","a":1e5}')],
    ['-0', entity('{"product_id":"p1","a":-0}')],
    ['a trailing zero in the fraction', entity('{"product_id":"p1","a":1.50}')],
    ['a zero fraction', entity('{"product_id":"p1","a":2.0}')],
    ['a leading zero', entity('{"product_id":"p1","a":012}')],
    ['16 significant digits', entity('{"product_id":"p1","a":1234567890123456}')],
    ['17 significant digits in a fraction', entity('{"product_id":"p1","a":0.30000000000000004}')],
    [
      '1e21 written out (JSON.stringify writes 1e+21)',
      entity('{"product_id":"p1","a":1000000000000000000000}'),
    ],
    ['below 1e-6 (JSON.stringify writes an exponent)', entity('{"product_id":"p1","a":0.0000001}')],
    ['an array-index key', entity('{"product_id":"p1","7":1}')],
    ['a nested array-index key', entity('{"product_id":"p1","a":{"0":1}}')],
    ['a duplicate key', entity('{"product_id":"p1","a":1,"a":2}')],
    ['a duplicate key in a nested object', entity('{"product_id":"p1","a":{"b":1,"b":1}}')],
    ['a duplicate id field (JSON.parse keeps the last)', entity('{"product_id":"p1","product_id":"p2"}')],
    ['a __proto__ key', entity('{"product_id":"p1","__proto__":{"x":1}}')],
    ['a nested __proto__ key', entity('{"product_id":"p1","a":[{"__proto__":1}]}')],
    ['a constructor key', entity('{"product_id":"p1","constructor":{"prototype":{}}}')],
    [
      `nesting deeper than ${MAX_SCAN_DEPTH}`,
      entity(`{"product_id":"p1","a":${'['.repeat(MAX_SCAN_DEPTH)}${']'.repeat(MAX_SCAN_DEPTH)}}`),
    ],
    ['an unknown top-level key', '{"entity_type":"product","entities":[{"product_id":"p1"}],"x":1}'],
    [
      'a repeated top-level key',
      '{"entity_type":"user","entity_type":"product","entities":[{"product_id":"p1"}]}',
    ],
    ['no entity_type', '{"entities":[{"product_id":"p1"}]}'],
    ['no entities', '{"entity_type":"product"}'],
    ['an unknown entity type', '{"entity_type":"nope","entities":[{"nope_id":"p1"}]}'],
    [
      'an entity type spelled with an escape',
      '{"entity_type":"produc\\u0074","entities":[{"product_id":"p1"}]}',
    ],
    ['an entity that is not an object', entity('[{"product_id":"p1"}]')],
    ['an entity that is null', entity('null')],
    [
      `more than MAX_BATCH (${MAX_BATCH}) entities`,
      entity(Array.from({ length: MAX_BATCH + 1 }, (_, i) => `{"product_id":"p${i}"}`).join(',')),
    ],
    ['an entity without an id', entity('{"a":1}')],
    ['an empty entity', entity('{}')],
    ['an empty string id', entity('{"product_id":""}')],
    ['a null id', entity('{"product_id":null}')],
    ['a boolean id', entity('{"product_id":true}')],
    ['an object id', entity('{"product_id":{"a":1}}')],
    ['an id longer than 4096 characters', entity(`{"product_id":"${'x'.repeat(4097)}"}`)],
    [
      'entity_key naming a missing field',
      '{"entity_type":"product","entity_key":"sku","entities":[{"product_id":"p1"}]}',
    ],
    ['an empty entity_key', '{"entity_type":"product","entity_key":"","entities":[{"product_id":"p1"}]}'],
    [
      'entity_key that is not a string',
      '{"entity_type":"product","entity_key":5,"entities":[{"product_id":"p1"}]}',
    ],
    [
      'entity_key naming an Object.prototype property',
      '{"entity_type":"product","entity_key":"toString","entities":[{"toString":"p1"}]}',
    ],
    [
      'a declared field of the wrong type',
      '{"entity_type":"offer","entities":[{"offer_id":"o1","price":"cheap"}]}',
    ],
    [
      'a field its type does not declare (the plain path names it to the caller)',
      '{"entity_type":"offer","entities":[{"offer_id":"o1","price":9.5,"prise":9.5}]}',
    ],
    [
      'an undeclared field beside entity_key',
      '{"entity_type":"offer","entity_key":"code","entities":[{"code":"o1","offer_id":"o2","x":1}]}',
    ],
    [
      'a misspelt id field beside the id field',
      '{"entity_type":"offer","entities":[{"offer_id":"o1","offer_id_":"o2"}]}',
    ],
    ['a byte order mark', `\ufeff${entity('{"product_id":"p1"}')}`],
    ['text after the body', `${entity('{"product_id":"p1"}')} x`],
    ['a truncated body', entity('{"product_id":"p1"}').slice(0, -2)],
    ['an empty body', ''],
    ['a trailing comma', entity('{"product_id":"p1",}')],
    ['a literal that is not one', entity('{"product_id":"p1","a":tru}')],
  ];
  for (const [reason, body] of cases) {
    test(reason, () => {
      assert.equal(scan(body), undefined);
    });
  }
  test('invalid UTF-8 (the slow path would store U+FFFD in its place)', () => {
    const bytes = Buffer.concat([
      Buffer.from('{"entity_type":"product","entities":[{"product_id":"p1","a":"'),
      Buffer.from([0xff]),
      Buffer.from('"}]}'),
    ]);
    assert.equal(scan(bytes), undefined);
  });
});

describe('accepts (and stores exactly what the slow path stores)', () => {
  const cases: Array<[what: string, body: string, stored: string[]]> = [
    [
      'a compact entity, as sent',
      entity('{"product_id":"p1","a":[1,{"b":null}],"c":true}'),
      ['{"product_id":"p1","a":[1,{"b":null}],"c":true}'],
    ],
    [
      'whitespace around entities and top-level members',
      ' {\n "entity_type" : "product" ,\n "entities" : [ {"product_id":"p1"} ,\n{"product_id":"p2"} ] }\n',
      ['{"product_id":"p1"}', '{"product_id":"p2"}'],
    ],
    [
      'the escapes JSON.stringify writes',
      entity('{"product_id":"p\\"1","a":"\\\\ \\n \\r \\t \\b \\f"}'),
      ['{"product_id":"p\\"1","a":"\\\\ \\n \\r \\t \\b \\f"}'],
    ],
    [
      'raw unicode, U+2028 and DEL',
      entity('{"product_id":"é中😀","a":"\u2028\x7f"}'),
      ['{"product_id":"é中😀","a":"\u2028\x7f"}'],
    ],
    [
      'numbers at the edges of what JSON.stringify writes as is',
      entity(
        '{"product_id":"p1","a":[0,-0.5,0.000001,123456789012345,0.123456789012345,100000000000000000000,-1.5]}',
      ),
      [
        '{"product_id":"p1","a":[0,-0.5,0.000001,123456789012345,0.123456789012345,100000000000000000000,-1.5]}',
      ],
    ],
    ['a numeric id', entity('{"product_id":42,"a":1}'), ['{"product_id":42,"a":1}']],
    [
      'keys that look numeric but are not indexes',
      entity('{"product_id":"p1","-1":1,"1.5":2,"1a":3}'),
      ['{"product_id":"p1","-1":1,"1.5":2,"1a":3}'],
    ],
    [
      'entity_key: the id field is added at the end',
      '{"entity_type":"product","entity_key":"sku","entities":[{"sku":"s1","a":1}]}',
      ['{"sku":"s1","a":1,"product_id":"s1"}'],
    ],
    [
      'entity_key with a numeric id',
      '{"entity_type":"product","entity_key":"sku","entities":[{"sku":7}]}',
      ['{"sku":7,"product_id":7}'],
    ],
    [
      'entity_key while the id field is there too (left as it is)',
      '{"entity_type":"product","entity_key":"sku","entities":[{"product_id":"x","sku":"s1"}]}',
      ['{"product_id":"x","sku":"s1"}'],
    ],
    [
      'entity_key null',
      '{"entity_type":"product","entity_key":null,"entities":[{"product_id":"p1"}]}',
      ['{"product_id":"p1"}'],
    ],
    [
      '<type>_id when the id field is another (query)',
      '{"entity_type":"query","entities":[{"query_id":"q1","n":1}]}',
      ['{"query_id":"q1","n":1,"query":"q1"}'],
    ],
    [
      'a custom id field',
      '{"entity_type":"item","entities":[{"sku":"i1"},{"item_id":"i2"}]}',
      ['{"sku":"i1"}', '{"item_id":"i2","sku":"i2"}'],
    ],
    [
      'declared fields that pass',
      '{"entity_type":"offer","entities":[{"offer_id":"o1","price":9.5,"tags":["a"],"meta":{"a":1}}]}',
      ['{"offer_id":"o1","price":9.5,"tags":["a"],"meta":{"a":1}}'],
    ],
    [
      'the ids in entity_key, beside the id field, and no other undeclared field',
      '{"entity_type":"offer","entity_key":"code","entities":[{"code":"o1","offer_id":"o2","price":1}]}',
      ['{"code":"o1","offer_id":"o2","price":1}'],
    ],
    [
      'any fields for a type that declares none',
      '{"entity_type":"item","entities":[{"sku":"s1","anything":1,"else":[2]}]}',
      ['{"sku":"s1","anything":1,"else":[2]}'],
    ],
    [
      'entities before entity_type',
      '{"entities":[{"product_id":"p1"}],"entity_type":"product"}',
      ['{"product_id":"p1"}'],
    ],
    ['no entities', entity(''), []],
    [
      `nesting ${MAX_SCAN_DEPTH} deep`,
      entity(`{"product_id":"p1","a":${'['.repeat(MAX_SCAN_DEPTH - 1)}${']'.repeat(MAX_SCAN_DEPTH - 1)}}`),
      [`{"product_id":"p1","a":${'['.repeat(MAX_SCAN_DEPTH - 1)}${']'.repeat(MAX_SCAN_DEPTH - 1)}}`],
    ],
    [
      'a repeated id (the later one wins in Redis)',
      entity('{"product_id":"p1","v":1},{"product_id":"p1","v":2}'),
      ['{"product_id":"p1","v":1}', '{"product_id":"p1","v":2}'],
    ],
  ];
  for (const [what, body, stored] of cases) {
    test(what, () => {
      assert.ok(checkBody(body), 'taken by the fast path');
      assert.deepEqual((scan(body) as ScannedUpload).values.map(String), stored);
    });
  }
});

test('large bodies: the scanner grows its scratch space, and scans alike after', () => {
  // 5000 entities (over 64K quotes, 20,000 own keys), one with 300 keys in one nested object.
  const texts = Array.from(
    { length: 5000 },
    (_, i) => `{"product_id":"p${i}","n":${i},"t":"x${i % 7}","v":"y","u":[true]}`,
  );
  const wide = Object.fromEntries(Array.from({ length: 300 }, (_, k) => [`k${k}`, k]));
  texts[17] = JSON.stringify({ product_id: 'wide', nested: wide });
  const body = Buffer.from(`{"entity_type":"product","entities":[${texts.join(',')}]}`);
  for (let round = 0; round < 2; round++) {
    const scanned = scanUpload(body, app.entityTypes, 5000);
    assert.ok(scanned);
    assert.deepEqual(
      scanned.ids,
      texts.map((text) => String(JSON.parse(text).product_id)),
    );
    assert.deepEqual(scanned.values.map(String), texts);
    // And a small body right after, on the grown arrays.
    assert.ok(checkBody(entity('{"product_id":"s1","a":{"b":1}}')));
  }
});

// ---------------------------------------------------------------------------------------------

describe('over HTTP, on a real Redis', () => {
  /** What the probe model saw, by request_id. */
  const seen = new Map<string, Array<Record<string, unknown>>>();
  const Product = ProductEntity.extend({ fields: { price: Type.Optional(Type.Number()) } });
  const httpApp = defineApp({
    entities: [Product, Item],
    pipelines: [
      defineRankingPipeline({
        name: 'ScanRanking',
        candidate: Product,
        model: defineModel({
          name: 'ScanProbe',
          entity: Product,
          score(products, request) {
            seen.set(
              request.request_id as string,
              structuredClone(products as Array<Record<string, unknown>>),
            );
            return products.map(() => 1);
          },
        }),
      }),
    ],
  });
  let redis: TestRedis;
  let server: FastifyInstance;
  let lz4Server: FastifyInstance;
  let raw: RawRedis;

  before(async () => {
    redis = await startTestRedis();
    // The fast path itself is under test: on whatever RANKD_TEST_FAST_PATHS says.
    server = await testServer(redis, { app: httpApp, env: { FAST_PATHS: 'true' } });
    lz4Server = await testServer(redis, {
      app: httpApp,
      env: { FAST_PATHS: 'true', INDEX_CODEC: 'lz4', PROJECT_NAME: 'lz4' },
    });
    raw = await RawRedis.connect(redis);
  });

  after(async () => {
    await server?.close();
    await lz4Server?.close();
    await raw?.close();
    await redis?.stop();
  });

  const texts = [
    '{"product_id":"h1","title":"Lamp \\"XL\\"","price":12.5,"tags":["é","中"],"dims":{"w":10,"h":0.25}}',
    '{"product_id":"h2","title":"😀\\n","price":-3,"nested":[[],{},[{"a":null}]],"ok":false}',
    '{"product_id":77,"price":100000000000000000000}',
  ];
  const sent = `{"entity_type":"product","entities":[${texts.join(',')}]}`;

  async function upload(target: FastifyInstance, payload: string) {
    const response = await target.inject({
      method: 'POST',
      url: '/api/v1/entities/upload',
      payload,
      headers: { 'content-type': 'application/json' },
    });
    return { status: response.statusCode, body: response.body };
  }

  test('stored byte for byte as sent, read back byte for byte, answered as the slow path answers', async () => {
    assert.ok(scan(sent), 'the body takes the fast path');
    const response = await upload(server, sent);
    assert.equal(response.status, 200, response.body);
    assert.equal(response.body, '{"entity_type":"product","entity_ids":["h1","h2","77"]}');
    for (const [id, text] of [
      ['h1', texts[0]],
      ['h2', texts[1]],
      ['77', texts[2]],
    ] as const)
      assert.equal(await raw.get(raw.keys.entity('product', id)), text);
    const read = await server.inject({
      method: 'POST',
      url: '/api/v1/entities/get',
      payload: { entity_type: 'product', entity_ids: ['h1', 'h2', '77'] },
    });
    assert.equal(read.statusCode, 200);
    assert.equal(
      read.body,
      `{"entity_type":"product","entities":{"h1":${texts[0]},"h2":${texts[1]},"77":${texts[2]}}}`,
    );
  });

  test('entity_key: the stored entity gets the id field, as the slow path stores it', async () => {
    const body = '{"entity_type":"product","entity_key":"sku","entities":[{"sku":"k1","price":1}]}';
    assert.ok(scan(body));
    assert.equal((await upload(server, body)).status, 200);
    assert.equal(await raw.get(raw.keys.entity('product', 'k1')), '{"sku":"k1","price":1,"product_id":"k1"}');
  });

  test('hydration sees fast-path entities', async () => {
    assert.equal((await upload(server, sent)).status, 200);
    const response = await postJson(server, '/api/v1/ranking', {
      request_id: 'scan-1',
      candidates: [{ product_id: 'h1' }, { product_id: 'h2' }, { product_id: '77' }],
    });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    const candidates = seen.get('scan-1');
    assert.ok(candidates);
    const byId = new Map(candidates.map((c) => [String(c.product_id), c]));
    for (const text of texts) {
      const expected = JSON.parse(text) as Record<string, unknown>;
      const got = byId.get(String(expected.product_id));
      assert.ok(got, `candidate ${String(expected.product_id)} hydrated`);
      // The id field is the request's own (a string); every other field comes from the index.
      for (const [field, value] of Object.entries(expected))
        if (field !== 'product_id') assert.deepEqual(got[field], value, field);
    }
  });

  test('with INDEX_CODEC=lz4 the same bytes are stored in an LZ4 frame and read back unchanged', async () => {
    assert.equal((await upload(lz4Server, sent)).status, 200);
    const stored = await raw.getBytes(lz4Key('h1'));
    assert.ok(stored);
    assert.deepEqual([...stored.subarray(0, 4)], [0x04, 0x22, 0x4d, 0x18], 'an LZ4 frame');
    const read = await lz4Server.inject({
      method: 'POST',
      url: '/api/v1/entities/get',
      payload: { entity_type: 'product', entity_ids: ['h1', 'h2', '77'] },
    });
    assert.equal(
      read.body,
      `{"entity_type":"product","entities":{"h1":${texts[0]},"h2":${texts[1]},"77":${texts[2]}}}`,
    );
  });

  test('a body that falls back is stored re-serialised, as before', async () => {
    const body =
      '{"entity_type":"product","entities":[{ "product_id" : "w1", "a" : 1.50, "b": "\\u00e9\\/" }]}';
    assert.equal(scan(body), undefined);
    assert.equal((await upload(server, body)).status, 200);
    assert.equal(await raw.get(raw.keys.entity('product', 'w1')), '{"product_id":"w1","a":1.5,"b":"é/"}');
  });

  test('errors are the slow path errors: nothing written', async () => {
    const missing = await upload(server, entity('{"product_id":"e1"},{"a":1}'));
    assert.equal(missing.status, 422);
    assert.deepEqual(JSON.parse(missing.body).detail[0].loc, ['body', 'entities', 1, 'product_id']);
    const proto = await upload(server, entity('{"product_id":"e2","__proto__":{"x":1}}'));
    assert.equal(proto.status, 400);
    assert.equal(JSON.parse(proto.body).error_code, 'RANKD_MALFORMED_JSON');
    const typed = await upload(
      server,
      '{"entity_type":"product","entities":[{"product_id":"e3","price":"x"}]}',
    );
    assert.equal(typed.status, 422);
    const tooMany = await upload(
      server,
      entity(Array.from({ length: 1001 }, (_, i) => `{"product_id":"t${i}"}`).join(',')),
    );
    assert.equal(tooMany.status, 422);
    // (Not DBSIZE: the ranking request above writes its events to a stream in the background.)
    const keys = ['e1', 'e2', 'e3', 't0', 't1000'].map((id) => raw.keys.entity('product', id));
    assert.equal(await raw.exists(keys), 0);
  });
});

/** The index key of a product in the lz4 server's project. */
function lz4Key(id: string): string {
  return new RedisKeys('lz4', '1', TEST_REDIS_MODE).entity('product', id);
}
