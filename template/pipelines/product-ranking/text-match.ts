/**
 * Text matching between a search query and product text, for the `text_match` real-time features.
 *
 * Words are compared after folding (lower case, accents removed: "Crème" matches "creme") and a
 * tiny stemming (a plural "s" or "ies" dropped: "candles" matches "candle", "berries" "berry").
 * Term weights (IDF) come from the request's own candidates: a query word that few candidates
 * contain tells more about relevance than one most of them contain.
 *
 * Speed matters: a request may carry 1000 candidates. The query is tokenized once (and cached);
 * product text is never split into tokens: each query word is found with `indexOf` and checked at
 * word boundaries, so the cost is a few native string scans per candidate.
 * @module
 */

/** BM25's term-frequency saturation: more occurrences help less and less. */
const K1 = 1.2;
/** BM25's length normalization: a long description needs more occurrences to score as high. */
const B = 0.75;

/** Anything but printable ASCII and whitespace: such text may need Unicode folding. */
const NON_ASCII = /[^ -~\t\n\r]/;
const COMBINING_MARKS = /\p{M}+/gu;
const LETTER_OR_DIGIT = /[\p{L}\p{N}]/u;

/** Lower case without accents, so that "Crème" and "creme" compare equal. */
export function fold(text: string): string {
  // Most shop text is ASCII: skip the (comparatively slow) Unicode normalization then.
  if (!NON_ASCII.test(text)) return text.toLowerCase();
  // Decomposed before lowering: "ℌ" and "𝐇" have no lower case, their decomposition "H" has.
  return text.normalize('NFKD').toLowerCase().replace(COMBINING_MARKS, '');
}

function isWordChar(text: string, i: number): boolean {
  const c = text.charCodeAt(i);
  if (c < 128) return (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || (c >= 65 && c <= 90);
  // A letter past U+FFFF ("𠀀") is a surrogate pair: both halves are tested as the whole letter.
  const start =
    c >= 0xdc00 && c <= 0xdfff && i > 0 && (text.charCodeAt(i - 1) & 0xfc00) === 0xd800 ? i - 1 : i;
  return LETTER_OR_DIGIT.test(String.fromCodePoint(text.codePointAt(start) ?? 0));
}

/** The stem of a folded word: a plural "s" dropped ("candles" → "candle", "berries" → "berry"). */
export function stem(word: string): string {
  if (word.length < 4 || !word.endsWith('s')) return word;
  if (word.endsWith('ss') || word.endsWith('us') || word.endsWith('is')) return word;
  if (word.length > 4 && word.endsWith('ies')) return `${word.slice(0, -3)}y`;
  return word.slice(0, -1);
}

/** The stemmed words of `text`, in order: "Soy Candles, 2-pack" → ["soy", "candle", "2", "pack"]. */
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

/** How many words of `folded` (already {@link fold}ed) have the stem `term`. */
export function countTerm(folded: string, term: string): number {
  if (term === '') return 0;
  // Every word whose stem is `term` starts with this prefix ("berr" for "berry": "berries"). Only
  // a stem of 3 or more letters comes from an "ies" word; cutting "y" off a shorter one could leave
  // "" (the term "y"), which indexOf finds at `from` itself: the loop would never move on.
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

const queryCache = new Map<string, readonly string[]>();
const QUERY_CACHE_SIZE = 1000;
/** Terms are tracked as bits of a 32-bit integer; a longer query keeps its first 31 distinct words. */
const MAX_QUERY_TERMS = 31;

/** The distinct stemmed words of a query; cached, since the same queries come back all the time. */
export function queryTerms(query: string): readonly string[] {
  let terms = queryCache.get(query);
  if (terms === undefined) {
    terms = [...new Set(tokenize(query))].slice(0, MAX_QUERY_TERMS);
    // A full cache starts over: simpler than LRU, and popular queries come back in at once.
    if (queryCache.size >= QUERY_CACHE_SIZE) queryCache.clear();
    queryCache.set(query, terms);
  }
  return terms;
}

/** The product fields text matching reads. */
export interface ProductText {
  readonly title?: string | null;
  readonly description?: string | null;
  readonly brand?: string | null;
  readonly category?: string | null;
  readonly categories?: readonly string[] | null;
}

/** How well a product matches a query, each in [0, 1]. */
export interface TextMatchScores {
  /** IDF-weighted share of the query's terms in the title: titles are short, presence is what counts. */
  title: number;
  /** BM25 of the description (occurrences and length count), divided by its maximum. */
  description: number;
  /** IDF-weighted share of the query's terms in the brand. */
  brand: number;
  /** IDF-weighted share of the query's terms in the category and categories. */
  category: number;
}

/**
 * Writes the term counts of one product at `at` in `counts`: title counts at [0, T), description
 * counts at [T, 2T), and the description's length (in characters: cheaper than words, and as good
 * for normalizing) at 2T.
 */
function countInto(counts: Float64Array, at: number, product: ProductText, terms: readonly string[]): void {
  const title = fold(product.title ?? '');
  const description = fold(product.description ?? '');
  for (let i = 0; i < terms.length; i++) {
    const term = terms[i] as string;
    counts[at + i] = countTerm(title, term);
    counts[at + terms.length + i] = countTerm(description, term);
  }
  counts[at + 2 * terms.length] = description.length;
}

/**
 * A query matched against a set of products (the request's candidates): term weights, the
 * average description length and each product's term counts are computed once for all of them.
 */
export class QueryMatcher {
  /** The query's distinct stemmed words. */
  readonly terms: readonly string[];
  /** IDF of each term over the products: ln(1 + (N − df + 0.5) / (df + 0.5)), always positive. */
  readonly idf: Float64Array;
  readonly #totalIdf: number;
  readonly #averageDescriptionLength: number;
  /** Every product's counts (see {@link countInto}) in one array: one allocation, not one per product. */
  readonly #counts: Float64Array;
  /** Where each product's counts start in {@link #counts}. */
  readonly #offsets = new Map<object, number>();
  /** Brands and categories repeat across products: each label is matched once per request. */
  readonly #labels = new Map<string, number>();

  constructor(query: string, products: readonly ProductText[]) {
    const terms = queryTerms(query);
    this.terms = terms;
    const t = terms.length;
    const stride = 2 * t + 1;
    const documentFrequency = new Float64Array(t);
    this.#counts = new Float64Array(products.length * stride);
    let descriptionLength = 0;
    products.forEach((product, p) => {
      const at = p * stride;
      countInto(this.#counts, at, product, terms);
      this.#offsets.set(product, at);
      descriptionLength += this.#counts[at + 2 * t] ?? 0;
      for (let i = 0; i < t; i++) {
        if ((this.#counts[at + i] ?? 0) > 0 || (this.#counts[at + t + i] ?? 0) > 0)
          documentFrequency[i] = (documentFrequency[i] ?? 0) + 1;
      }
    });
    const n = products.length;
    this.idf = documentFrequency.map((df) => Math.log(1 + (n - df + 0.5) / (df + 0.5)));
    this.#totalIdf = this.idf.reduce((sum, w) => sum + w, 0);
    this.#averageDescriptionLength = n > 0 ? Math.max(1, descriptionLength / n) : 1;
  }

  /** How well `product` matches the query; all zero for a query without words. */
  match(product: ProductText): TextMatchScores {
    const scores = { title: 0, description: 0, brand: 0, category: 0 };
    if (this.#totalIdf === 0) return scores;
    const t = this.terms.length;
    let counts = this.#counts;
    let at = this.#offsets.get(product);
    if (at === undefined) {
      // Not one of the products the matcher was made for: counted on its own.
      counts = new Float64Array(2 * t + 1);
      countInto(counts, 0, product, this.terms);
      at = 0;
    }
    const lengthFactor = K1 * (1 - B + (B * (counts[at + 2 * t] ?? 0)) / this.#averageDescriptionLength);
    const brand = this.#labelTerms(product.brand);
    let category = this.#labelTerms(product.category);
    for (const label of product.categories ?? []) category |= this.#labelTerms(label);
    for (let i = 0; i < t; i++) {
      const idf = this.idf[i] ?? 0;
      const tf = counts[at + t + i] ?? 0;
      if ((counts[at + i] ?? 0) > 0) scores.title += idf;
      scores.description += (idf * tf) / (tf + lengthFactor);
      if (brand & (1 << i)) scores.brand += idf;
      if (category & (1 << i)) scores.category += idf;
    }
    scores.title /= this.#totalIdf;
    scores.description /= this.#totalIdf;
    scores.brand /= this.#totalIdf;
    scores.category /= this.#totalIdf;
    return scores;
  }

  /** Which terms (bit i for term i) occur in a brand or category label. */
  #labelTerms(label: string | null | undefined): number {
    if (!label) return 0;
    let mask = this.#labels.get(label);
    if (mask === undefined) {
      const folded = fold(label);
      mask = 0;
      for (let i = 0; i < this.terms.length; i++) {
        if (countTerm(folded, this.terms[i] as string) > 0) mask |= 1 << i;
      }
      this.#labels.set(label, mask);
    }
    return mask;
  }
}

const matchers = new WeakMap<object, Map<string, QueryMatcher>>();

/**
 * The matcher of `query` over the request's candidates, built on first use and kept with the
 * request object (a WeakMap: it goes away with the request, and no request sees another's).
 */
export function matcherFor(request: { candidates?: unknown }, query: string): QueryMatcher {
  let byQuery = matchers.get(request);
  if (byQuery === undefined) {
    byQuery = new Map();
    matchers.set(request, byQuery);
  }
  let matcher = byQuery.get(query);
  if (matcher === undefined) {
    const candidates = Array.isArray(request.candidates) ? (request.candidates as ProductText[]) : [];
    matcher = new QueryMatcher(query, candidates);
    byQuery.set(query, matcher);
  }
  return matcher;
}
