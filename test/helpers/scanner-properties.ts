/**
 * Properties of the hand-written scanners whose progress depends on their input: the upload and
 * get body scanners (src/fast-paths), and the JSON Lines and CSV readers of `rankd load`
 * (src/cli/load). Each must finish on any input (arbitrary bytes, truncated or mutated bodies,
 * unterminated strings and quotes, lone CRs, huge numbers, deep nesting, `\u` escapes of lone
 * surrogates), and give what the plain path gives: the body scanners decline or equal the
 * JSON.parse-based slow path; the line readers equal a reference that splits the whole file.
 * Run in a worker by test/scanner-termination.test.ts (`workerData.property` names the property),
 * so that a scan that never ends fails the test instead of hanging the run.
 * @module
 */
import assert from 'node:assert/strict';
import { workerData } from 'node:worker_threads';
import fc from 'fast-check';
import { readCsv } from '../../src/cli/load/csv.js';
import { readJsonLines } from '../../src/cli/load/jsonl.js';
import { InputError, type SourceRecord } from '../../src/cli/load/records.js';
import { BODY_MAX_BATCH, bodyApp, getBodies, uploadBodies } from './body-arbitraries.js';
import { answerFromWorker } from './in-worker.js';
import { idListPaths, uploadPaths } from './scanner-paths.js';

const upload = uploadPaths(bodyApp, BODY_MAX_BATCH);
const idList = idListPaths(bodyApp, BODY_MAX_BATCH);

/** The input cut into chunks at arbitrary byte positions (inside UTF-8 characters too). */
function chunked(bytes: Buffer, cuts: number[]): Buffer[] {
  const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const chunks: Buffer[] = [];
  let from = 0;
  for (const cut of [...at, bytes.length]) {
    if (cut > from) chunks.push(bytes.subarray(from, cut));
    from = cut;
  }
  return chunks;
}

async function* fromChunks(chunks: Buffer[]): AsyncGenerator<Buffer> {
  for (const chunk of chunks) yield chunk;
}

/** Everything a reader yields, and the line and message it stopped at, if it did. */
async function readAll(records: AsyncIterable<SourceRecord>): Promise<Array<SourceRecord | string>> {
  const out: Array<SourceRecord | string> = [];
  try {
    for await (const record of records) out.push(record);
  } catch (error) {
    assert.ok(error instanceof InputError, `not an InputError: ${error}`);
    out.push(`stopped at line ${error.line}`);
  }
  return out;
}

/** JSON Lines as the reader documents them, read from the whole file at once. */
function referenceJsonLines(bytes: Buffer): SourceRecord[] {
  const records: SourceRecord[] = [];
  bytes
    .toString('utf8')
    .split('\n')
    .forEach((raw, i) => {
      const text = i === 0 && raw.startsWith('\ufeff') ? raw.slice(1) : raw;
      if (text.trim() === '') return;
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        records.push({ line: i + 1, problem: 'not valid JSON' });
        return;
      }
      if (typeof value === 'object' && value !== null && !Array.isArray(value))
        records.push({ line: i + 1, value: value as Record<string, unknown> });
      else records.push({ line: i + 1, problem: 'not an object' });
    });
  return records;
}

/** The reader's records with problems reduced to their kind (the reference does not word them). */
function comparable(records: Array<SourceRecord | string>): Array<SourceRecord | string> {
  return records.map((r) =>
    typeof r === 'string' || !('problem' in r)
      ? r
      : {
          line: r.line,
          problem: r.problem.startsWith('not valid JSON') ? 'not valid JSON' : 'not an object',
        },
  );
}

/**
 * CSV without quotes, as the reader documents it: records end at `\r\n`, `\n` or `\r`; lines are
 * the file's lines; empty lines are skipped; the first record is the header.
 */
function referenceCsv(text: string): Array<SourceRecord | string> {
  const lines = text.replace(/^\ufeff/, '').split(/\r\n|\n|\r/);
  const out: Array<SourceRecord | string> = [];
  let header: string[] | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    if (line === '') continue;
    const fields = line.split(',');
    if (header === undefined) {
      header = fields.map((f) => f.trim());
      if (header.some((name) => name === '') || new Set(header).size !== header.length) {
        out.push(`stopped at line ${i + 1}`);
        return out;
      }
      continue;
    }
    if (fields.length !== header.length) {
      out.push({ line: i + 1, problem: 'field count' });
      continue;
    }
    const value: Record<string, unknown> = {};
    fields.forEach((cell, k) => {
      if (cell !== '') value[header?.[k] as string] = cell;
    });
    out.push({ line: i + 1, value });
  }
  return out;
}

const asText = () => (cell: string) => cell;
const cuts = fc.array(fc.nat(), { maxLength: 6 });

/** CSV-ish text: cells, separators, every kind of line break, quotes (balanced or not), a BOM. */
function csvText(quotes: boolean): fc.Arbitrary<string> {
  const pieces = ['a', 'b', 'é', '😀', ' ', ',', ',', '\n', '\n', '\r\n', '\r', 'x1'];
  if (quotes) pieces.push('"', '""', '"q,\n"', '"\r\n"', '"\r"');
  return fc
    .tuple(fc.boolean(), fc.array(fc.constantFrom(...pieces), { maxLength: 40 }))
    .map(([bom, parts]) => (bom ? '\ufeff' : '') + parts.join(''));
}

const RUNS = 2000;

const properties: Record<string, () => Promise<unknown>> = {
  async upload() {
    let taken = 0;
    fc.assert(
      fc.property(uploadBodies, (body) => {
        if (upload.check(body)) taken++;
      }),
      { numRuns: RUNS },
    );
    // Not vacuous: the fast path takes some (most bodies are edited, deep or arbitrary: declined).
    assert.ok(taken > RUNS / 100, `only ${taken} of ${RUNS} upload bodies were taken`);
    return taken;
  },

  async idList() {
    let taken = 0;
    fc.assert(
      fc.property(getBodies, (body) => {
        if (idList.check(body)) taken++;
      }),
      { numRuns: RUNS },
    );
    assert.ok(taken > RUNS / 100, `only ${taken} of ${RUNS} get bodies were taken`);
    return taken;
  },

  async jsonLines() {
    const line = fc.oneof(
      fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v)),
      fc.constantFrom(
        '',
        ' ',
        '\r',
        ' \u00a0',
        '\u00a0',
        '\u2028',
        '\ufeff',
        '{',
        '[1]',
        '{"a":"\\ud800"}',
        '{}\r',
      ),
      fc.string({ unit: 'binary', maxLength: 6 }),
    );
    const file = fc
      .tuple(fc.boolean(), fc.array(line, { maxLength: 8 }), fc.boolean())
      .map(([bom, lines, newlineAtEnd]) =>
        Buffer.from((bom ? '\ufeff' : '') + lines.join('\n') + (newlineAtEnd ? '\n' : '')),
      );
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          { weight: 4, arbitrary: file },
          fc.uint8Array({ maxLength: 80 }).map((b) => Buffer.from(b)),
        ),
        cuts,
        async (bytes, at) => {
          const read = await readAll(readJsonLines(fromChunks(chunked(bytes, at))));
          assert.deepEqual(comparable(read), referenceJsonLines(bytes));
        },
      ),
      { numRuns: RUNS },
    );
  },

  async csvPlain() {
    await fc.assert(
      fc.asyncProperty(csvText(false), cuts, async (text, at) => {
        const bytes = Buffer.from(text);
        const read = await readAll(readCsv(fromChunks(chunked(bytes, at)), asText));
        const reduced = read.map((r) =>
          typeof r !== 'string' && 'problem' in r ? { line: r.line, problem: 'field count' } : r,
        );
        assert.deepEqual(reduced, referenceCsv(text));
      }),
      { numRuns: RUNS },
    );
  },

  async csvQuoted() {
    // With quotes (balanced or not) there is no simple reference: the reader must finish, give
    // lines within the file, and read the same in any chunks as in one.
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          { weight: 4, arbitrary: csvText(true).map((t) => Buffer.from(t)) },
          fc.uint8Array({ maxLength: 60 }).map((b) => Buffer.from(b)),
        ),
        cuts,
        async (bytes, at) => {
          const whole = await readAll(readCsv(fromChunks(bytes.length > 0 ? [bytes] : []), asText));
          const pieces = await readAll(readCsv(fromChunks(chunked(bytes, at)), asText));
          assert.deepEqual(pieces, whole);
          const lines = bytes.toString('latin1').split(/\r\n|\n|\r/).length;
          for (const r of whole) {
            const line = typeof r === 'string' ? Number(r.replace(/\D/g, '')) : r.line;
            assert.ok(line >= 1 && line <= lines, `line ${line} of a file of ${lines}`);
          }
        },
      ),
      { numRuns: RUNS },
    );
  },
};

const name = (workerData as { property: string }).property;
await answerFromWorker(async () => {
  const property = properties[name];
  if (property === undefined) throw new Error(`no property ${name}`);
  return { property: name, result: await property() };
});
