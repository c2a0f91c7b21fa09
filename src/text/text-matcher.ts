/**
 * `textMatcher`: how well an entity's text fields match a search query, scored with BM25, for
 * real-time features. docs/reference/text-matching.md is the user's page.
 * @module
 */
import { countTerm, fold, tokenize } from './words.js';

/** How one scored field is read and scored. */
export interface TextField {
  /**
   * The entity fields whose text it scores (a string, an array of strings; anything else is no text).
   * Several fields count as one text. @defaultValue the scored field's own name
   */
  readonly from?: string | readonly string[];
  /**
   * BM25's term-frequency saturation: what a further occurrence of a query word adds. 0 counts only
   * whether a word occurs, which suits short fields (titles, brands). @defaultValue 1.2
   */
  readonly k1?: number;
  /**
   * BM25's length normalization, from 0 (length does not matter) to 1. Length is counted in characters
   * of the folded text: as good as words within one field, and it costs no scan. @defaultValue 0.75
   */
  readonly b?: number;
}

/** What {@link textMatcher} scores: field names, or names with options. */
export type TextFields<F extends string> = readonly F[] | { readonly [K in F]: TextField };

/** The options of {@link textMatcher}. */
export interface TextMatcherOptions<F extends string> {
  /** The scored fields: each gets its own score. */
  readonly fields: TextFields<F>;
  /** The most distinct query words used, bounding the work per candidate. @defaultValue 32 */
  readonly maxQueryTerms?: number;
}

/** A score per field, each in [0, 1]: 0 when no query word occurs in it. */
export type TextScores<F extends string> = Record<F, number>;

/** One query matched against a set of entities: term weights and term counts computed once. */
export interface QueryMatch<F extends string> {
  /** The query's distinct words, stemmed (see `tokenize`), in order. */
  readonly terms: readonly string[];
  /** Each term's IDF over the entities: ln(1 + (N − n + 0.5) / (n + 0.5)), N entities, n of them holding it. */
  readonly idf: readonly number[];
  /** The scores of `entity`: one of the entities this match was made for, or any other (scored on its own). */
  scores(entity: object): TextScores<F>;
}

/** Scores entities' text fields against queries; made by {@link textMatcher}. */
export interface TextMatcher<F extends string> {
  /** The scored fields' names, in order. */
  readonly fields: readonly F[];
  /**
   * The scores of `entity` for `query`, weights and average lengths taken from `among` (a real-time
   * feature's `request.candidates`; anything but an array counts as `[entity]`). The work for all of
   * `among` is done on the first call and kept while the array lives: one pass for every candidate.
   */
  match(query: string, entity: object, among?: unknown): TextScores<F>;
  /** The same work, done explicitly and kept by the caller: `prepare(query, among).scores(entity)`. */
  prepare(query: string, among: readonly object[]): QueryMatch<F>;
}

/** A field as scored: its name, where its text comes from, its BM25 parameters. */
interface ResolvedField {
  readonly name: string;
  readonly from: readonly string[];
  readonly k1: number;
  readonly b: number;
}

const DEFAULT_K1 = 1.2;
const DEFAULT_B = 0.75;
const DEFAULT_MAX_QUERY_TERMS = 32;

function resolveFields(fields: TextFields<string>): ResolvedField[] {
  const entries: Array<[string, TextField]> = Array.isArray(fields)
    ? (fields as readonly string[]).map((name) => [name, {}])
    : Object.entries(fields as Record<string, TextField>);
  if (entries.length === 0) throw new TypeError('textMatcher: `fields` names no field');
  return entries.map(([name, field]) => {
    const k1 = field.k1 ?? DEFAULT_K1;
    const b = field.b ?? DEFAULT_B;
    if (!(Number.isFinite(k1) && k1 >= 0))
      throw new TypeError(`textMatcher: field ${name}: k1 must be a number ≥ 0, not ${k1}`);
    if (!(b >= 0 && b <= 1)) throw new TypeError(`textMatcher: field ${name}: b must be in [0, 1], not ${b}`);
    const from =
      field.from === undefined ? [name] : typeof field.from === 'string' ? [field.from] : field.from;
    return { name, from: [...from], k1, b };
  });
}

/**
 * Texts this short are labels (brands, categories, colours) that repeat across candidates: each is
 * counted once per query. Titles are mostly longer and differ from candidate to candidate; a cache
 * entry for each would cost more than it saves.
 */
const SHORT_TEXT = 16;

/**
 * Term counting for one query: a text's T term counts, then its folded length, added at `base`
 * of `counts`. Short texts are counted once (see {@link SHORT_TEXT}).
 */
class TermCounter {
  readonly #terms: readonly string[];
  readonly #short = new Map<string, Float64Array>();

  constructor(terms: readonly string[]) {
    this.#terms = terms;
  }

  add(counts: Float64Array, base: number, text: string): void {
    if (text.length > SHORT_TEXT) {
      this.#count(counts, base, text);
      return;
    }
    let known = this.#short.get(text);
    if (known === undefined) {
      known = new Float64Array(this.#terms.length + 1);
      this.#count(known, 0, text);
      this.#short.set(text, known);
    }
    for (let i = 0; i < known.length; i++)
      counts[base + i] = (counts[base + i] as number) + (known[i] as number);
  }

  #count(counts: Float64Array, base: number, text: string): void {
    const folded = fold(text);
    const terms = this.#terms;
    for (let i = 0; i < terms.length; i++)
      counts[base + i] = (counts[base + i] as number) + countTerm(folded, terms[i] as string);
    counts[base + terms.length] = (counts[base + terms.length] as number) + folded.length;
  }
}

/** Writes an entity's counts at `at`: per field, its T term counts and then its length. */
function countInto(
  counter: TermCounter,
  counts: Float64Array,
  at: number,
  entity: object,
  fields: readonly ResolvedField[],
  t: number,
): void {
  // A candidate list may hold anything: only an object has fields.
  if (typeof entity !== 'object' || entity === null) return;
  for (let f = 0; f < fields.length; f++) {
    const base = at + f * (t + 1);
    const from = (fields[f] as ResolvedField).from;
    for (let k = 0; k < from.length; k++) {
      const value = (entity as Record<string, unknown>)[from[k] as string];
      if (typeof value === 'string') counter.add(counts, base, value);
      else if (Array.isArray(value)) {
        for (let j = 0; j < value.length; j++) {
          const item: unknown = value[j];
          if (typeof item === 'string') counter.add(counts, base, item);
        }
      }
    }
  }
}

/**
 * A {@link QueryMatch}: every entity's counts in one array (one allocation, not one per entity),
 * laid out per entity, per field: T term counts, then the field's length.
 */
class PreparedQuery<F extends string> implements QueryMatch<F> {
  readonly terms: readonly string[];
  readonly idf: readonly number[];
  readonly #fields: readonly ResolvedField[];
  /** Every score 0: each result starts as a copy (one shape for all, cheap to copy). */
  readonly #zero: Readonly<Record<string, number>>;
  readonly #totalIdf: number;
  /** Per field, the average length over the entities (at least 1). */
  readonly #averageLength: Float64Array;
  readonly #counts: Float64Array;
  readonly #counter: TermCounter;
  /** Where each entity's counts start in {@link #counts}. */
  readonly #offsets = new Map<object, number>();

  constructor(fields: readonly ResolvedField[], terms: readonly string[], among: readonly object[]) {
    this.#fields = fields;
    this.terms = terms;
    const zero: Record<string, number> = {};
    for (const field of fields) zero[field.name] = 0;
    this.#zero = zero;
    const counter = new TermCounter(terms);
    this.#counter = counter;
    const t = terms.length;
    const width = t + 1;
    const stride = fields.length * width;
    // No words: every score is 0, and nothing needs counting.
    const entities = t === 0 ? [] : among;
    const counts = new Float64Array(entities.length * stride);
    this.#counts = counts;
    const documentFrequency = new Float64Array(t);
    const totalLength = new Float64Array(fields.length);
    for (let e = 0; e < entities.length; e++) {
      const entity = entities[e] as object;
      const at = e * stride;
      countInto(counter, counts, at, entity, fields, t);
      this.#offsets.set(entity, at);
      for (let f = 0; f < fields.length; f++)
        totalLength[f] = (totalLength[f] as number) + (counts[at + f * width + t] as number);
      for (let i = 0; i < t; i++) {
        for (let f = 0; f < fields.length; f++) {
          if ((counts[at + f * width + i] as number) > 0) {
            documentFrequency[i] = (documentFrequency[i] as number) + 1;
            break;
          }
        }
      }
    }
    const n = among.length;
    this.idf = Array.from(documentFrequency, (df) => Math.log(1 + (n - df + 0.5) / (df + 0.5)));
    this.#totalIdf = this.idf.reduce((sum, w) => sum + w, 0);
    this.#averageLength = totalLength.map((length) => (n > 0 ? Math.max(1, length / n) : 1));
  }

  scores(entity: object): TextScores<F> {
    const scores = { ...this.#zero };
    const t = this.terms.length;
    if (t === 0) return scores as TextScores<F>;
    const fields = this.#fields;
    let counts = this.#counts;
    let at = this.#offsets.get(entity);
    if (at === undefined) {
      // Not one of the entities the match was made for: counted on its own, with their weights.
      counts = new Float64Array(fields.length * (t + 1));
      countInto(this.#counter, counts, 0, entity, fields, t);
      at = 0;
    }
    const idf = this.idf;
    for (let f = 0; f < fields.length; f++) {
      const field = fields[f] as ResolvedField;
      const base = at + f * (t + 1);
      // BM25: idf × tf (k1 + 1) / (tf + k1 (1 − b + b × length / average)), divided by its bound
      // (k1 + 1) × Σ idf; (k1 + 1) cancels out.
      const saturation =
        field.k1 *
        (1 - field.b + (field.b * (counts[base + t] as number)) / (this.#averageLength[f] as number));
      let score = 0;
      for (let i = 0; i < t; i++) {
        const tf = counts[base + i] as number;
        if (tf > 0) score += ((idf[i] as number) * tf) / (tf + saturation);
      }
      scores[field.name] = score / this.#totalIdf;
    }
    return scores as TextScores<F>;
  }
}

/**
 * A text matcher: how well an entity's text fields match a search query, each field on its own,
 * each score in [0, 1]. Words are compared folded ("Crème" matches "creme") and stemmed ("candles"
 * matches "candle"). Each score is BM25 (a word counts more the fewer entities hold it, more the more
 * often the field holds it up to `k1`, less in a longer text by `b`) divided by the best possible.
 *
 * Made once, at module level. Fast enough for a thousand candidates per request: the query is split
 * once per request, and each candidate's text is searched without being split.
 *
 * @example
 * ```ts
 * import { defineRealtimeFeatures, Feature, QueryEntity, textMatcher } from 'rankd';
 * import { Product } from './pipelines/product-ranking/schemas.js';
 *
 * const productText = textMatcher({ fields: { title: { k1: 0 }, description: {} } });
 * export const TextMatch = defineRealtimeFeatures({
 *   name: 'text_match',
 *   entity: Product,
 *   with: QueryEntity,
 *   features: { title: Feature.float({ default: 0 }), description: Feature.float({ default: 0 }) },
 *   // Word weights from all the request's candidates, worked out once per request.
 *   compute: (product, query, request) => productText.match(String(query.query ?? ''), product, request.candidates),
 * });
 * ```
 */
export function textMatcher<const F extends string>(options: TextMatcherOptions<F>): TextMatcher<F> {
  const fields = resolveFields(options.fields as TextFields<string>);
  const maxTerms = options.maxQueryTerms ?? DEFAULT_MAX_QUERY_TERMS;
  if (!(Number.isInteger(maxTerms) && maxTerms >= 1))
    throw new TypeError(`textMatcher: maxQueryTerms must be an integer ≥ 1, not ${maxTerms}`);
  const prepare = (query: string, among: readonly object[]): QueryMatch<F> =>
    new PreparedQuery<F>(fields, [...new Set(tokenize(query))].slice(0, maxTerms), among);
  // Per `among` array (a request's candidates), per query: dropped with the array.
  const prepared = new WeakMap<object, Map<string, QueryMatch<F>>>();
  return {
    fields: fields.map((field) => field.name as F),
    prepare,
    match(query, entity, among) {
      if (!Array.isArray(among)) return prepare(query, [entity]).scores(entity);
      let byQuery = prepared.get(among);
      if (byQuery === undefined) {
        byQuery = new Map();
        prepared.set(among, byQuery);
      }
      let match = byQuery.get(query);
      if (match === undefined) {
        match = prepare(query, among as object[]);
        byQuery.set(query, match);
      }
      return match.scores(entity);
    },
  };
}
