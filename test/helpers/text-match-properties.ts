/**
 * rankd's text matching (src/text/) against a plain reference: every word of the folded text found
 * by a regular expression, stemmed by the rules as the doc comment states them, BM25 computed
 * term by term. Run in a worker by test/text-match.test.ts (a scan that never ends must fail the
 * test, not hang it): `workerData.property` names the property, and the outcome is posted back.
 * @module
 */
import assert from 'node:assert/strict';
import { workerData } from 'node:worker_threads';
import fc from 'fast-check';
import { type TextField, textMatcher } from '../../src/text/text-matcher.js';
import { countTerm, fold, stem, tokenize } from '../../src/text/words.js';
import { answerFromWorker } from './in-worker.js';
import { trickyText as text } from './tricky-text.js';

/** The words of folded text: runs of letters and digits, whole code points (astral ones too). */
function referenceWords(folded: string): string[] {
  return folded.match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** The stemming rules as `stem`'s doc comment states them, written out case by case. */
function referenceStem(word: string): string {
  if (word.length < 4 || !word.endsWith('s')) return word;
  if (/(ss|us|is)$/.test(word)) return word;
  if (word.length > 4 && word.endsWith('ies')) return `${word.slice(0, -3)}y`;
  if (word.length > 4 && /(sses|xes|ches|shes)$/.test(word)) return word.slice(0, -2);
  return word.slice(0, -1);
}

/** Lower case without accents: decomposed first, so that a letter with a compatibility form ("ℌ") is lowered too. */
function referenceFold(t: string): string {
  return t.normalize('NFKD').toLowerCase().replace(/\p{M}/gu, '');
}

/** The stemmed words of `t`, by the reference. */
function referenceTokens(t: string): string[] {
  return referenceWords(referenceFold(t)).map(referenceStem);
}

/** Occurrences of `term` among the reference tokens of `t`. */
function referenceCount(t: string, term: string): number {
  return referenceTokens(t).filter((word) => word === term).length;
}

/** A scored field as the reference reads it: defaults filled in. */
interface Field {
  readonly name: string;
  readonly from: readonly string[];
  readonly k1: number;
  readonly b: number;
}

const sum = (values: readonly number[]) => values.reduce((a, b) => a + b, 0);

/** BM25 per field, divided by its bound, as textMatcher's doc comments describe it. */
function referenceScores(
  fields: readonly Field[],
  maxTerms: number,
  query: string,
  among: readonly unknown[],
) {
  const terms = [...new Set(referenceTokens(query))].slice(0, maxTerms);
  const texts = (entity: unknown, field: Field): string[] =>
    field.from.flatMap((key) => {
      const value =
        typeof entity === 'object' && entity !== null ? (entity as Record<string, unknown>)[key] : null;
      if (typeof value === 'string') return [value];
      return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
    });
  const tf = (entity: unknown, field: Field, term: string) =>
    sum(texts(entity, field).map((t) => referenceCount(t, term)));
  const length = (entity: unknown, field: Field) =>
    sum(texts(entity, field).map((t) => referenceFold(t).length));
  const n = among.length;
  const idf = terms.map((term) => {
    const df = among.filter((entity) => fields.some((field) => tf(entity, field, term) > 0)).length;
    return Math.log(1 + (n - df + 0.5) / (df + 0.5));
  });
  const average = fields.map((field) =>
    n > 0 ? Math.max(1, sum(among.map((entity) => length(entity, field))) / n) : 1,
  );
  return (entity: unknown): Record<string, number> =>
    Object.fromEntries(
      fields.map((field, j) => {
        if (terms.length === 0) return [field.name, 0];
        let score = 0;
        terms.forEach((term, i) => {
          const f = tf(entity, field, term);
          const norm = field.k1 * (1 - field.b + (field.b * length(entity, field)) / (average[j] as number));
          if (f > 0) score += ((idf[i] as number) * f * (field.k1 + 1)) / (f + norm);
        });
        return [field.name, score / ((field.k1 + 1) * sum(idf))];
      }),
    );
}

/** Equal within rounding: the implementation adds in another order. */
function assertClose(got: Record<string, number>, want: Record<string, number>, what: string): void {
  assert.deepEqual(Object.keys(got), Object.keys(want), what);
  for (const [key, value] of Object.entries(want)) {
    const actual = got[key] as number;
    assert.ok(
      Math.abs(actual - value) <= 1e-9 * Math.max(1, Math.abs(value)),
      `${what} ${key}: ${actual} but the reference has ${value}`,
    );
    assert.ok(actual >= 0 && actual <= 1 + 1e-12, `${what} ${key}: ${actual} is not in [0, 1]`);
  }
}

const KEYS = ['title', 'description', 'brand', 'category', 'categories'] as const;

/** A field value: text, a list of texts (with odd members), absent, or not text at all. */
const value = fc.oneof(
  { weight: 4, arbitrary: text },
  { weight: 1, arbitrary: fc.array(fc.oneof(text, fc.constant(null), fc.integer()), { maxLength: 3 }) },
  { weight: 1, arbitrary: fc.constantFrom(null, undefined, 7, true) },
);
const entity = fc.record(Object.fromEntries(KEYS.map((key) => [key, value])), { requiredKeys: [] });

/** Scored fields: some names, each reading some keys, with any k1 and b. */
const fieldSet = fc.uniqueArray(
  fc.record({
    name: fc.constantFrom('title', 'description', 'brand', 'category', 'all'),
    from: fc.uniqueArray(fc.constantFrom(...KEYS), { minLength: 1, maxLength: 3 }),
    k1: fc.oneof(fc.constant(0), fc.constant(1.2), fc.double({ min: 0, max: 3, noNaN: true })),
    b: fc.oneof(
      fc.constant(0),
      fc.constant(0.75),
      fc.constant(1),
      fc.double({ min: 0, max: 1, noNaN: true }),
    ),
  }),
  { minLength: 1, maxLength: 4, selector: (field) => field.name },
);

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
    const word = fc.oneof(
      fc.constantFrom(
        'glasses',
        'boxes',
        'matches',
        'dishes',
        'berries',
        'candles',
        'bus',
        'iris',
        'axes',
        'ies',
      ),
      fc.stringMatching(/^[a-z]{1,8}(s|es|ies|sses|xes|ches|shes|ss|us|is)?$/),
    );
    fc.assert(
      fc.property(fc.oneof(word, text), (t) => {
        for (const w of referenceWords(referenceFold(t))) {
          assert.equal(stem(w), referenceStem(w), w);
          assert.equal(stem(stem(w)), stem(w), `a stem is its own stem: ${w}`);
        }
      }),
      { numRuns: RUNS },
    );
  },

  tokenize() {
    fc.assert(
      fc.property(text, (t) => assert.deepEqual(tokenize(t), referenceTokens(t))),
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
    fc.assert(
      fc.property(
        fieldSet,
        fc.option(fc.integer({ min: 1, max: 4 }), { nil: undefined }),
        text,
        fc.array(entity, { maxLength: 6 }),
        entity,
        (fieldList, maxQueryTerms, query, among, stranger) => {
          const fields = Object.fromEntries(
            fieldList.map(({ name, from, k1, b }): [string, TextField] => [name, { from, k1, b }]),
          );
          const matcher = textMatcher({ fields, ...(maxQueryTerms === undefined ? {} : { maxQueryTerms }) });
          const reference = referenceScores(fieldList, maxQueryTerms ?? 32, query, among);
          const prepared = matcher.prepare(query, among);
          among.forEach((e, i) => {
            assertClose(prepared.scores(e), reference(e), `entity ${i}`);
            assertClose(matcher.match(query, e, among), reference(e), `match, entity ${i}`);
          });
          // One not among them: its own counts, their weights.
          assertClose(prepared.scores(stranger), reference(stranger), 'an entity not among them');
        },
      ),
      { numRuns: RUNS / 3 },
    );
  },
};

const name = (workerData as { property: string }).property;
await answerFromWorker(() => {
  const property = properties[name];
  if (property === undefined) throw new Error(`no property ${name}`);
  property();
  return name;
});
