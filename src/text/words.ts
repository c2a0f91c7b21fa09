/**
 * Words of free text, as text matching compares them: folded (lower case, no accents), split into
 * runs of letters and digits, and stemmed (English plurals). `countTerm` finds a term in text
 * without splitting the text into words, which is what makes matching a thousand candidates cheap.
 * @module
 */

/** Anything but printable ASCII and whitespace: such text may need Unicode folding. */
const NON_ASCII = /[^ -~\t\n\r]/;
const COMBINING_MARKS = /\p{M}+/gu;
const LETTER_OR_DIGIT = /[\p{L}\p{N}]/u;

/**
 * Lower case without accents: "Crème" and "creme" fold alike, so do "ＣＡＮＤＬＥ" and "candle".
 * Folding twice changes nothing.
 */
export function fold(text: string): string {
  // Most catalogue text is ASCII: the Unicode normalization is skipped then (several times slower).
  if (!NON_ASCII.test(text)) return text.toLowerCase();
  // Decomposed before lowering: "ℌ" and "𝐇" have no lower case, their decomposition "H" has.
  return text.normalize('NFKD').toLowerCase().replace(COMBINING_MARKS, '');
}

/** Whether the UTF-16 unit at `i` of folded text belongs to a word (a letter or a digit). */
function isWordChar(text: string, i: number): boolean {
  const c = text.charCodeAt(i);
  if (c < 128) return (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || (c >= 65 && c <= 90);
  // A letter past U+FFFF ("𠀀") is a surrogate pair: both halves are tested as the whole letter.
  const start =
    c >= 0xdc00 && c <= 0xdfff && i > 0 && (text.charCodeAt(i - 1) & 0xfc00) === 0xd800 ? i - 1 : i;
  return LETTER_OR_DIGIT.test(String.fromCodePoint(text.codePointAt(start) ?? 0));
}

/**
 * The stem of a folded word: English plurals made singular, nothing else. Words of fewer than 4
 * letters, and words ending in "ss", "us" or "is" ("glass", "bus", "iris"), are kept; then
 * "ies" → "y" ("berries" → "berry"), "sses", "xes", "ches", "shes" lose "es" ("glasses" →
 * "glass", "boxes" → "box", "matches" → "match"), and any other final "s" goes ("candles" →
 * "candle"). Light on purpose: it never merges words of different meanings that a shop would
 * tell apart, at the price of missing some ("mice"). A stem is its own stem.
 */
export function stem(word: string): string {
  const n = word.length;
  if (n < 4 || word.charCodeAt(n - 1) !== 115 /* s */) return word;
  if (word.endsWith('ss') || word.endsWith('us') || word.endsWith('is')) return word;
  if (n > 4 && word.endsWith('ies')) return `${word.slice(0, -3)}y`;
  if (
    n > 4 &&
    (word.endsWith('sses') || word.endsWith('xes') || word.endsWith('ches') || word.endsWith('shes'))
  )
    return word.slice(0, -2);
  return word.slice(0, -1);
}

/**
 * The stemmed words of `text`, in order: "Soy Candles, 2-pack" → ["soy", "candle", "2", "pack"].
 * A word is a run of letters and digits after folding; everything else separates words.
 *
 * @example
 * import { tokenize } from 'rankd';
 * console.log(tokenize('Crème Candles, hand-poured')); // folded and stemmed words
 */
export function tokenize(text: string): string[] {
  const folded = fold(text);
  const words: string[] = [];
  let start = -1;
  for (let i = 0; i <= folded.length; i++) {
    if (i < folded.length && isWordChar(folded, i)) {
      if (start < 0) start = i;
    } else if (start >= 0) {
      words.push(stem(folded.slice(start, i)));
      start = -1;
    }
  }
  return words;
}

/**
 * How many words of `folded` (text already {@link fold}ed) have the stem `term`: the same count
 * as `tokenize(text).filter((w) => w === term).length`, found with `indexOf` instead of splitting
 * the text. `term` should be a stem (a word of {@link tokenize}); any other string still returns.
 */
export function countTerm(folded: string, term: string): number {
  if (term === '') return 0;
  // Every word whose stem is `term` starts with this prefix: the term itself, or without its "y"
  // ("berr" for "berry": "berries"). Only a stem of 3 or more letters comes from an "ies" word;
  // cutting "y" off a shorter one could leave "" (the term "y"), which indexOf finds at `from`
  // itself: the loop would never move on (it did, and hung the server on the query "y").
  const prefix = term.length >= 3 && term.endsWith('y') ? term.slice(0, -1) : term;
  let count = 0;
  let from = 0;
  for (;;) {
    const at = folded.indexOf(prefix, from);
    if (at < 0) return count;
    from = at + prefix.length;
    if (at > 0 && isWordChar(folded, at - 1)) continue;
    let end = from;
    while (end < folded.length && isWordChar(folded, end)) end++;
    if (end - at === term.length ? folded.startsWith(term, at) : stem(folded.slice(at, end)) === term)
      count++;
    from = end;
  }
}
