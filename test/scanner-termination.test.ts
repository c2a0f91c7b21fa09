/**
 * The hand-written scanners whose progress depends on their input finish on any input and agree
 * with the plain path (properties in test/helpers/scanner-properties.ts): the upload and get body
 * scanners decline or give what JSON.parse and the route's schema give; the JSON Lines and CSV
 * readers of `rankd load` give what reading the whole file at once gives, in any chunks. Each
 * property runs in a worker thread, terminated if it does not finish: a loop that never moves on
 * fails its test instead of hanging the run.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readCsv } from '../src/cli/load/csv.js';
import { readJsonLines } from '../src/cli/load/jsonl.js';
import type { InputError, SourceRecord } from '../src/cli/load/records.js';
import { runInWorker } from './helpers/in-worker.js';

const PROPERTIES = new URL('./helpers/scanner-properties.ts', import.meta.url);

for (const [property, what] of [
  [
    'upload',
    'upload scanner: arbitrary, truncated, mutated and deeply nested bodies: declined or as the slow path',
  ],
  ['idList', 'get scanner: arbitrary, truncated and mutated bodies: declined or as the slow path'],
  ['jsonLines', 'JSON Lines reader: any bytes in any chunks read as the whole file split at \\n'],
  ['csvPlain', 'CSV reader, no quotes: records and file lines as the file split at \\r\\n, \\n or \\r'],
  [
    'csvQuoted',
    'CSV reader, quotes open or closed, arbitrary bytes: finishes, lines in the file, the same in any chunks',
  ],
] as const) {
  test(what, async () => {
    const answer = await runInWorker<{ property: string }>(PROPERTIES, { property });
    assert.equal(answer.property, property);
  });
}

/** What the CSV reader yields for `text` read in one chunk, the error it stops at as its line. */
async function csvRecords(text: string): Promise<unknown[]> {
  const out: unknown[] = [];
  async function* one() {
    yield Buffer.from(text);
  }
  try {
    for await (const record of readCsv(one(), () => (cell) => cell)) out.push(record);
  } catch (error) {
    out.push(`stopped at line ${(error as InputError).line}`);
  }
  return out;
}

test('CSV: a lone \\r ends a line, and any mix of line breaks gives the file lines (line 0 and 1 before)', async () => {
  assert.deepEqual(await csvRecords('a\r1\r\n2\r3'), [
    { line: 2, value: { a: '1' } },
    { line: 3, value: { a: '2' } },
    { line: 4, value: { a: '3' } },
  ]);
  assert.deepEqual(await csvRecords('a,b\n1,2\r3,4\n'), [
    { line: 2, value: { a: '1', b: '2' } },
    { line: 3, value: { a: '3', b: '4' } },
  ]);
  assert.deepEqual(await csvRecords('\r\n\na\r"x\r\ny"\r\n5'), [
    { line: 4, value: { a: 'x\r\ny' } },
    { line: 6, value: { a: '5' } },
  ]);
});

test('JSON Lines: a line of Unicode spaces only is blank, like one that starts with an ASCII space', async () => {
  async function* file() {
    yield Buffer.from('\u00a0\n \u00a0\n\u2028\n{"a":1}\n');
  }
  const records: SourceRecord[] = [];
  for await (const record of readJsonLines(file())) records.push(record);
  assert.deepEqual(records, [{ line: 4, value: { a: 1 } }]);
});
