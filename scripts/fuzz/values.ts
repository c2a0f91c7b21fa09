/**
 * Hostile JSON values and the mutations applied to valid bodies: type swaps, deletions, huge
 * numbers, deep nesting, long strings, unicode, unpaired surrogates, prototype keys.
 */
import fc from 'fast-check';
import { deepText, Entries, isPlainObject, type Json, pathsOf, Raw, updateAt } from './json-text.js';

/** A string with one unpaired UTF-16 surrogate (ASCII around it, so that it stays unpaired). */
export const loneSurrogate: fc.Arbitrary<string> = fc
  .tuple(fc.string({ maxLength: 4 }), fc.integer({ min: 0xd800, max: 0xdfff }), fc.string({ maxLength: 4 }))
  .map(([a, code, b]) => `${a}${String.fromCharCode(code)}${b}`);

/** Strings the query text folding and stemming are known to choke on, and their neighbours. */
export const KILLER_WORDS = ['y', 'Y', 'ý', 'ｙ', 'Ÿ', 'ÿ', 'blue y candle', 's', 'ies', 'ss', 'us', 'is'];

/** Words of the sample catalogue, so that generated queries also match real products. */
const SHOP_WORDS = ['candle', 'candles', 'soy', 'mug', 'berries', 'berry', 'ceramic', 'blue', 'fig', 'cedar'];

/** Arbitrary query text: one-letter words (all of them), shop words, unicode, surrogates. */
export const queryText: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...KILLER_WORDS),
  fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789'.split('')),
  fc.string({ minLength: 1, maxLength: 1, unit: 'binary' }),
  fc
    .array(fc.constantFrom(...SHOP_WORDS, ...'abcxyz'.split(''), 'Crème', 'ÉTÉ', '焼き'), { maxLength: 6 })
    .map((words) => words.join(' ')),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  loneSurrogate,
  fc.nat({ max: 1000 }).map((n) => 'candle '.repeat(n)),
);

/** Strings of every kind: empty, long, unicode, control characters, prototype names, surrogates. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary' }),
  fc.string({ unit: 'grapheme' }),
  loneSurrogate,
  fc.constantFrom(4096, 4097, 70_000, 1_000_000).map((n) => 'x'.repeat(n)),
  fc.constantFrom(
    '',
    ' ',
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
    '\ufeff',
    'Zoë 焼き菓子',
    'NaN',
    'Infinity',
    '1e400',
  ),
);

/** Object keys: hostile strings and the names rankd's bodies use. */
export const hostileKey: fc.Arbitrary<string> = fc.oneof(
  hostileString.filter((s) => s.length < 100),
  fc.constantFrom(
    '__proto__',
    'constructor',
    'prototype',
    'entity_type',
    'entities',
    'entity_ids',
    'product_id',
    'event_timestamp',
    'feature_view',
    'candidates',
    'query',
  ),
);

/** Numbers: ordinary, huge, tiny, out of the range of dates, past 2^53, and literals JS cannot hold. */
export const hostileNumber: fc.Arbitrary<Json> = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom<Json>(
    0,
    -1,
    1.5,
    8.64e15,
    8.64e15 + 1,
    -8.64e15 - 1,
    8.7e15,
    1e16,
    1e19,
    1e21,
    1e300,
    Number.MAX_VALUE,
    Number.MAX_SAFE_INTEGER,
    new Raw('9007199254740993'),
    new Raw('1e400'),
    new Raw('-1e400'),
    new Raw('1e-400'),
    new Raw('-0'),
    new Raw('123456789012345678901234567890'),
    new Raw('1E5'),
  ),
);

/** Any hostile value: scalars, empty and big containers, prototype-keyed objects, deep nesting. */
export const hostileValue: fc.Arbitrary<Json> = fc.oneof(
  { arbitrary: fc.constantFrom<Json>(null, true, false, [], {}), weight: 3 },
  { arbitrary: hostileNumber, weight: 4 },
  { arbitrary: hostileString, weight: 4 },
  { arbitrary: fc.array(fc.oneof(hostileNumber, hostileString), { maxLength: 5 }), weight: 1 },
  {
    arbitrary: fc
      .array(fc.tuple(hostileKey, fc.oneof(hostileNumber, hostileString)), { maxLength: 4 })
      .map((entries) => new Entries(entries)),
    weight: 1,
  },
  {
    arbitrary: fc.tuple(fc.integer({ min: 50, max: 50_000 }), fc.boolean()).map(([n, a]) => deepText(n, a)),
    weight: 1,
  },
  { arbitrary: fc.constantFrom(1001, 20_000).map((n) => new Raw(`[${'1,'.repeat(n - 1)}1]`)), weight: 1 },
);

/** One change to a valid body; `pick` chooses the place (modulo the number of places). */
type Mutation =
  | { op: 'replace'; pick: number; value: Json }
  | { op: 'delete'; pick: number }
  | { op: 'add'; pick: number; key: string; value: Json }
  | { op: 'wrap'; pick: number; inArray: boolean }
  | { op: 'duplicate-key'; pick: number; value: Json };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  {
    arbitrary: fc.record({ op: fc.constant('replace'), pick: fc.noBias(fc.nat()), value: hostileValue }),
    weight: 5,
  },
  { arbitrary: fc.record({ op: fc.constant('delete'), pick: fc.noBias(fc.nat()) }), weight: 2 },
  {
    arbitrary: fc.record({
      op: fc.constant('add'),
      pick: fc.noBias(fc.nat()),
      key: hostileKey,
      value: hostileValue,
    }),
    weight: 2,
  },
  {
    arbitrary: fc.record({ op: fc.constant('wrap'), pick: fc.noBias(fc.nat()), inArray: fc.boolean() }),
    weight: 1,
  },
  {
    arbitrary: fc.record({
      op: fc.constant('duplicate-key'),
      pick: fc.noBias(fc.nat()),
      value: hostileValue,
    }),
    weight: 1,
  },
) as fc.Arbitrary<Mutation>;

function apply(body: Json, m: Mutation): Json {
  // Not the root: a body replaced whole is a 422 at the first check and exercises nothing else
  // (whole bodies of every shape are the content cases' job).
  const paths = pathsOf(body).slice(1);
  const path = paths[m.pick % Math.max(1, paths.length)] ?? [];
  switch (m.op) {
    case 'replace':
      return updateAt(body, path, () => m.value);
    case 'delete':
      return updateAt(body, path, () => undefined);
    case 'wrap':
      return updateAt(body, path, (old) => (m.inArray ? [old] : { x: old }));
    case 'add':
    case 'duplicate-key':
      // As Entries: `__proto__` must be a key, and a duplicate needs two entries with one name.
      return updateAt(body, path, (old) => {
        if (!isPlainObject(old)) return m.value;
        const entries = Object.keys(old).map((k) => [k, old[k] ?? null] as const);
        const key = m.op === 'add' ? m.key : (entries.at(-1)?.[0] ?? '__proto__');
        return new Entries([...entries, [key, m.value]]);
      });
  }
}

/** `body` with one to three mutations applied, and a note of what they were. */
export function mutated(body: fc.Arbitrary<Json>): fc.Arbitrary<{ body: Json; note: string }> {
  return fc.tuple(body, fc.array(mutation, { minLength: 1, maxLength: 3 })).map(([base, mutations]) => ({
    body: mutations.reduce(apply, base),
    note: mutations.map((m) => m.op).join('+'),
  }));
}
