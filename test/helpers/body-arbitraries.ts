/**
 * Arbitrary upload and get bodies for the index routes, valid and not: bodies the slow path
 * accepts, bodies of every kind of id and value (compact or spaced out) edited (cut, spliced with
 * pieces that end, open or break JSON, bytes deleted), and arbitrary bytes. Shared by the scanners' properties
 * (test/helpers/scanner-properties.ts: each scanner against the slow path) and the HTTP
 * properties of test/fast-paths.test.ts (a server with FAST_PATHS on against one with it off), so
 * that both are held to the same inputs.
 * @module
 */
import fc from 'fast-check';
import { defineApp } from '../../src/app/define-app.js';
import { defineEntity } from '../../src/entities/define-entity.js';
import { Type } from '../../src/index.js';
import { TemplateProduct } from './ranking-app.js';

/** The `MAX_BATCH` the bodies are made for: some of them hold more entities or ids. */
export const BODY_MAX_BATCH = 4;
/** A type whose id field is not `<name>_id` and with one declared field. */
const Item = defineEntity({ name: 'item', idField: 'sku', fields: { n: Type.Integer() } });
/** The app the bodies are made for: the template's product, and `item`. */
export const bodyApp = defineApp({ entities: [TemplateProduct, Item] });

/** Bytes and tokens that end, open or break JSON, spliced into otherwise valid bodies. */
const PIECES = [
  '"',
  '\\',
  '\\u',
  '\\u00',
  '\\ud800',
  '\\udc00',
  '\\ud83d\\ude00',
  '\\u0000',
  '\\u00e9',
  '\\/',
  '{',
  '}',
  '[',
  ']',
  ',',
  ':',
  ' ',
  '\r',
  '\n',
  '\t',
  '\x00',
  '\x1f',
  'é',
  '😀',
  '\ud800',
  '\u2028',
  '1e400',
  '-0',
  '-',
  '0.',
  '1.0',
  '123456789012345678901234567890',
  '0.0000001',
  'null',
  'tru',
  'nul',
  '"p1"',
  '"product_id":',
  '"sku":',
  '"entity_type":"item"',
  '['.repeat(40),
  '{"a":'.repeat(40),
  ']'.repeat(40),
];

type Edit =
  | { kind: 'cut'; at: number }
  | { kind: 'insert'; at: number; piece: string }
  | { kind: 'delete'; at: number; size: number };

const edit: fc.Arbitrary<Edit> = fc.oneof(
  fc.record({ kind: fc.constant('cut' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), piece: fc.constantFrom(...PIECES) }),
  fc.record({ kind: fc.constant('delete' as const), at: fc.nat(), size: fc.integer({ min: 1, max: 6 }) }),
);

function applyEdit(text: string, e: Edit): string {
  const at = e.at % (text.length + 1);
  if (e.kind === 'cut') return text.slice(0, at);
  if (e.kind === 'insert') return text.slice(0, at) + e.piece + text.slice(at);
  return text.slice(0, at) + text.slice(at + e.size);
}

/** `base`, as is or with up to three edits (a cut leaves it truncated). */
function edited(base: fc.Arbitrary<string>): fc.Arbitrary<string> {
  return fc
    .tuple(base, fc.array(edit, { maxLength: 3 }))
    .map(([text, edits]) => edits.reduce(applyEdit, text));
}

/** A body as bytes: mostly the text's UTF-8, sometimes arbitrary bytes (invalid UTF-8 too). */
function asBytes(text: fc.Arbitrary<string>): fc.Arbitrary<Buffer> {
  return fc.oneof(
    { weight: 5, arbitrary: text.map((t) => Buffer.from(t)) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)) },
  );
}

/**
 * Ids an index may hold that are awkward to write as JSON or as object keys: a line break (a
 * schema serialiser's `^.*$` key pattern misses it), `__proto__`, an array index, quotes,
 * backslashes, non-ASCII, U+2028.
 */
export const AWKWARD_IDS = ['a\nb', '__proto__', '7', 'q"uote', 'back\\slash', 'é中😀', 'x\u2028y', 'p1'];

const id = fc.oneof(
  { weight: 12, arbitrary: fc.stringMatching(/^[a-z0-9]{1,6}$/) },
  { weight: 4, arbitrary: fc.constantFrom(...AWKWARD_IDS) },
  fc.integer(),
  fc.double(),
  fc.constant(''),
  fc.string({ unit: 'binary', maxLength: 6 }),
);
/** Numbers as JSON.stringify writes them, the scanner's edge cases among them. */
const number = fc.oneof(
  { weight: 12, arbitrary: fc.integer({ min: -1000, max: 1000 }) },
  fc.constantFrom(1.5, 0.25, 24, -0, 1e21, 1e-7, 123456789012345680000, 0.1 + 0.2),
  fc.double(),
);
const product = fc.record(
  {
    product_id: id,
    title: fc.option(
      fc.oneof({ weight: 4, arbitrary: fc.string() }, fc.string({ unit: 'binary', maxLength: 8 })),
    ),
    price: fc.option(number),
    number_in_stock: fc.option(number),
    categories: fc.array(fc.string({ maxLength: 4 }), { maxLength: 3 }),
    extra: fc.jsonValue({ maxDepth: 2 }),
    more: fc.dictionary(fc.string({ maxLength: 3 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 2 }),
  },
  { requiredKeys: ['product_id'] },
);
const item = fc.record({ sku: id, n: number }, { requiredKeys: [] });
const indent = fc.constantFrom(undefined, undefined, undefined, 1);

/** Upload bodies that the slow path mostly accepts, compact or spaced out. */
const uploadBody = fc
  .tuple(
    fc.oneof(
      fc.record({ entity_type: fc.constant('product'), entities: fc.array(product, { maxLength: 5 }) }),
      fc.record({ entity_type: fc.constant('item'), entities: fc.array(item, { maxLength: 5 }) }),
    ),
    indent,
  )
  .map(([body, spaces]) => JSON.stringify(body, null, spaces));

/** Get bodies: known and unknown types, ids of every kind. */
const getBody = fc
  .tuple(
    fc.constantFrom('product', 'item', 'user', 'nope'),
    fc.array(fc.oneof(id, fc.constant(null), fc.string({ unit: 'binary', maxLength: 4 })), { maxLength: 6 }),
    indent,
  )
  .map(([type, ids, spaces]) => JSON.stringify({ entity_type: type, entity_ids: ids }, null, spaces));

/** A body nested `depth` deep inside one entity, closed or not. */
const deepBody = fc
  .tuple(fc.integer({ min: 0, max: 80 }), fc.integer({ min: 0, max: 80 }), fc.constantFrom('[', '{"k":'))
  .map(([open, close, opener]) => {
    const closer = opener === '[' ? ']' : '}';
    return `{"entity_type":"product","entities":[{"product_id":"p","x":${opener.repeat(open)}1${closer.repeat(close)}}]}`;
  });

/** Ids the routes accept: the awkward ones, short names, numbers. */
const usableId = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...AWKWARD_IDS) },
  fc.stringMatching(/^[a-z0-9]{1,6}$/),
  fc.nat(),
);

/** Upload bodies the slow path accepts (but for a repeated id field, say): usable ids, declared fields of their type. */
const sensibleUploadBody = fc
  .tuple(
    fc.oneof(
      fc.record({
        entity_type: fc.constant('product'),
        entities: fc.array(
          fc.record(
            {
              product_id: usableId,
              title: fc.option(fc.string()),
              price: fc.option(number),
              number_in_stock: fc.option(fc.integer()),
              extra: fc.jsonValue({ maxDepth: 2 }),
            },
            { requiredKeys: ['product_id'] },
          ),
          { maxLength: BODY_MAX_BATCH },
        ),
      }),
      fc.record({
        entity_type: fc.constant('item'),
        entities: fc.array(fc.record({ sku: usableId, n: fc.integer() }), { maxLength: BODY_MAX_BATCH }),
      }),
    ),
    indent,
  )
  .map(([body, spaces]) => JSON.stringify(body, null, spaces));

/** Get bodies the slow path accepts: a known type, usable ids. */
const sensibleGetBody = fc
  .tuple(fc.constantFrom('product', 'item'), fc.array(usableId, { maxLength: BODY_MAX_BATCH }), indent)
  .map(([type, ids, spaces]) => JSON.stringify({ entity_type: type, entity_ids: ids }, null, spaces));

/** Upload bodies for {@link bodyApp}: sensible, or arbitrary, truncated, mutated, deeply nested. */
export const uploadBodies: fc.Arbitrary<Buffer> = asBytes(
  fc.oneof(sensibleUploadBody, edited(uploadBody), edited(deepBody)),
);

/** Get bodies for {@link bodyApp}: sensible, or arbitrary, truncated, mutated. */
export const getBodies: fc.Arbitrary<Buffer> = asBytes(fc.oneof(sensibleGetBody, edited(getBody)));
