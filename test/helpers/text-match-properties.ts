/**
 * The template's text matching (template/pipelines/product-ranking/text-match.ts) against a plain
 * reference: every word of the folded text found by a regular expression, stemmed, compared. Run
 * in a worker by test/text-match.test.ts (a scan that never ends must fail the test, not hang it):
 * `workerData.property` names the property, and the outcome is posted back.
 * @module
 */
import assert from 'node:assert/strict';
import { workerData } from 'node:worker_threads';
import fc from 'fast-check';
import {
  countTerm,
  fold,
  type ProductText,
  QueryMatcher,
  queryTerms,
  stem,
  tokenize,
} from '../../template/pipelines/product-ranking/text-match.js';
import { answerFromWorker } from './in-worker.js';
import { trickyText as text } from './tricky-text.js';

/** The words of folded text: runs of letters and digits, whole code points (astral ones too). */
function referenceWords(folded: string): string[] {
  return folded.match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** The stemming rule as the template's doc comment states it, written out case by case. */
function referenceStem(word: string): string {
  if (word.length < 4 || !word.endsWith('s')) return word;
  if (/(ss|us|is)$/.test(word)) return word;
  if (word.length > 4 && word.endsWith('ies')) return `${word.slice(0, -3)}y`;
  return word.slice(0, -1);
}

/** Lower case without accents: decomposed first, so that a letter with a compatibility form ("ℌ") is lowered too. */
function referenceFold(text: string): string {
  return text.normalize('NFKD').toLowerCase().replace(/\p{M}/gu, '');
}

/** The stemmed words of `text`, by the reference. */
function referenceTokens(text: string): string[] {
  return referenceWords(referenceFold(text)).map(referenceStem);
}

/** Occurrences of `term` among the reference tokens of `text`. */
function referenceCount(text: string, term: string): number {
  return referenceTokens(text).filter((word) => word === term).length;
}

const RUNS = 3000;

const properties: Record<string, () => void> = {
  fold() {
    fc.assert(
      fc.property(text, (t) => {
        assert.equal(fold(t), referenceFold(t), 'fold');
        assert.equal(fold(fold(t)), fold(t), 'folding twice changes nothing');
      }),
      { numRuns: RUNS },
    );
  },

  stem() {
    fc.assert(
      fc.property(text, (t) => {
        for (const word of referenceWords(referenceFold(t))) {
          assert.equal(stem(word), referenceStem(word));
          assert.equal(stem(stem(word)), stem(word), 'a stem is its own stem');
        }
      }),
      { numRuns: RUNS },
    );
  },

  tokenize() {
    fc.assert(
      fc.property(text, (t) => {
        assert.deepEqual(tokenize(t), referenceTokens(t));
        assert.deepEqual(queryTerms(t), [...new Set(referenceTokens(t))].slice(0, 31));
      }),
      { numRuns: RUNS },
    );
  },

  countTerm() {
    fc.assert(
      fc.property(text, text, (t, query) => {
        const folded = fold(t);
        for (const term of new Set([...referenceTokens(query), ...referenceTokens(t)])) {
          assert.equal(countTerm(folded, term), referenceCount(t, term), `term ${JSON.stringify(term)}`);
        }
      }),
      { numRuns: RUNS },
    );
  },

  countTermAnyTerm() {
    // A term that is no stem at all ("", punctuation, a lone surrogate) counts nothing sensible,
    // but the scan must end: every call returns a count.
    fc.assert(
      fc.property(text, fc.oneof(text, fc.constantFrom('', 'y', 's', ' ', '\ud800')), (t, term) => {
        const count = countTerm(fold(t), term);
        assert.ok(Number.isInteger(count) && count >= 0);
      }),
      { numRuns: RUNS },
    );
  },

  match() {
    const product = fc.record(
      {
        title: fc.option(text),
        description: fc.option(text),
        brand: fc.option(text),
        category: fc.option(text),
        categories: fc.option(fc.array(text, { maxLength: 3 })),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(text, fc.array(product, { maxLength: 6 }), (query, products) => {
        const matcher = new QueryMatcher(query, products);
        const expected = referenceScores(query, products);
        products.forEach((p, i) => {
          const got = matcher.match(p);
          const want = expected[i] as Record<keyof typeof got, number>;
          for (const key of ['title', 'description', 'brand', 'category'] as const) {
            assert.ok(
              Math.abs(got[key] - want[key]) <= 1e-9,
              `${key}: ${got[key]} but the reference has ${want[key]} (product ${i})`,
            );
          }
        });
      }),
      { numRuns: RUNS / 3 },
    );
  },
};

/** BM25 and the shares of query terms, as the template's doc comments describe them. */
function referenceScores(query: string, products: readonly ProductText[]) {
  const terms = [...new Set(referenceTokens(query))].slice(0, 31);
  const n = products.length;
  const has = (texts: Array<string | null | undefined>, term: string) =>
    texts.some((s) => referenceCount(s ?? '', term) > 0);
  const df = terms.map((term) => products.filter((p) => has([p.title, p.description], term)).length);
  const idf = df.map((d) => Math.log(1 + (n - d + 0.5) / (d + 0.5)));
  const total = idf.reduce((a, b) => a + b, 0);
  const lengths = products.map((p) => referenceFold(p.description ?? '').length);
  const average = n > 0 ? Math.max(1, lengths.reduce((a, b) => a + b, 0) / n) : 1;
  return products.map((p, j) => {
    const scores = { title: 0, description: 0, brand: 0, category: 0 };
    if (total === 0) return scores;
    terms.forEach((term, i) => {
      const w = idf[i] as number;
      const tf = referenceCount(p.description ?? '', term);
      if (has([p.title], term)) scores.title += w;
      scores.description += (w * tf) / (tf + 1.2 * (1 - 0.75 + (0.75 * (lengths[j] as number)) / average));
      if (has([p.brand], term)) scores.brand += w;
      if (has([p.category, ...(p.categories ?? [])], term)) scores.category += w;
    });
    for (const key of ['title', 'description', 'brand', 'category'] as const) scores[key] /= total;
    return scores;
  });
}

const name = (workerData as { property: string }).property;
await answerFromWorker(() => {
  const property = properties[name];
  if (property === undefined) throw new Error(`no property ${name}`);
  property();
  return name;
});
