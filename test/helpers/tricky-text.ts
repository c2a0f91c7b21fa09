/**
 * Arbitrary text for the text-matching properties and the query fuzz: words that broke or may
 * break matching mixed with separators and arbitrary Unicode.
 * @module
 */
import fc from 'fast-check';

/** Text that hit a bug once or may: one-letter words, case folds, marks, astral letters, plurals. */
export const TRICKY = [
  'y',
  'Y',
  'ý',
  'ｙ',
  'Ý',
  'İ',
  'ı',
  'ß',
  'ẞ',
  'ℌ',
  'K',
  'Å',
  'e\u0301',
  '\u0301',
  '𝐲',
  '𐐨',
  '𐐀',
  '𠀀',
  '😀',
  '\ud800',
  '\udc00',
  'ies',
  'berries',
  'berry',
  'berrys',
  'days',
  'candles',
  'candle',
  'glass',
  'bus',
  'iris',
  's',
  'ss',
  '2',
  '½',
  '٣',
  'ﬁ',
  'Ǆ',
];
/** What separates words, or does not ("_", "'"): a few kinds. */
export const SEPARATORS = [' ', '', '-', ',', '.', '\t', '\n', '\u00a0', '_', "'", '&'];

/** Any single UTF-16 code unit, lone surrogates included. */
export const codeUnit = fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c));

/** Text made of tricky words, separators and arbitrary strings (full Unicode and raw code units). */
export const trickyText = fc
  .array(
    fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom(...TRICKY) },
      { weight: 3, arbitrary: fc.constantFrom(...SEPARATORS) },
      { weight: 2, arbitrary: fc.string({ unit: 'grapheme-ascii', maxLength: 8 }) },
      { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 6 }) },
      { weight: 1, arbitrary: fc.string({ unit: codeUnit, maxLength: 4 }) },
    ),
    { maxLength: 12 },
  )
  .map((parts) => parts.join(''));
