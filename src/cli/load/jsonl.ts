import { InputError, reasonOf, type SourceRecord } from './records.js';

/** Longest line read: a file with no newline at all must not be read into memory whole. */
const MAX_LINE_BYTES = 64 * 1024 * 1024;

const NEWLINE = 0x0a;

/** The JSON value's kind, for "expected a JSON object, got …". */
function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}

/** A file holding one JSON array is the likeliest wrong input: said at its first line. */
function arrayHint(text: string, line: number): string {
  return line === 1 && text.trimStart().startsWith('[')
    ? '; expected JSON Lines (one object per line), not a JSON array'
    : '';
}

function recordOf(text: string, line: number): SourceRecord | undefined {
  // JSON.parse ignores surrounding whitespace and a trailing \r, so only blank lines need a look.
  // Blank is what trim() removes, Unicode spaces too: a line of only "\u00a0" or "\u2028" was
  // reported as bad JSON while " \u00a0" was skipped. Lines start with "{": trimmed only when not.
  const first = text.charCodeAt(0);
  if (text.length === 0 || ((first <= 0x20 || first >= 0x80) && text.trim().length === 0)) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { line, problem: `not valid JSON (${reasonOf(error)})${arrayHint(text, line)}` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { line, problem: `expected a JSON object, got ${kindOf(value)}${arrayHint(text, line)}` };
  return { line, value: value as Record<string, unknown> };
}

/**
 * Reads JSON Lines: one JSON object per line, blank lines skipped, `\n` or `\r\n` endings, a UTF-8
 * BOM ignored. Each line is yielded as it is reached with its 1-based line number, so at most a
 * chunk of text is held at a time. Splitting at `\n` bytes is safe in UTF-8, where that byte never
 * occurs inside a multi-byte character.
 */
export async function* readJsonLines(chunks: AsyncIterable<Buffer>): AsyncGenerator<SourceRecord> {
  let line = 0;
  const pending: Buffer[] = [];
  let pendingBytes = 0;
  const lines = function* (text: string): Generator<SourceRecord> {
    let start = 0;
    for (;;) {
      const end = text.indexOf('\n', start);
      line++;
      let piece = end === -1 ? text.slice(start) : text.slice(start, end);
      if (line === 1 && piece.charCodeAt(0) === 0xfeff) piece = piece.slice(1);
      const record = recordOf(piece, line);
      if (record !== undefined) yield record;
      if (end === -1) return;
      start = end + 1;
    }
  };
  try {
    for await (const chunk of chunks) {
      const last = chunk.lastIndexOf(NEWLINE);
      if (last === -1) {
        pending.push(chunk);
        pendingBytes += chunk.length;
        if (pendingBytes > MAX_LINE_BYTES)
          throw new InputError(line + 1, `the line is longer than ${MAX_LINE_BYTES / 2 ** 20} MiB`);
        continue;
      }
      const head = chunk.subarray(0, last);
      const text = (pending.length === 0 ? head : Buffer.concat([...pending, head])).toString('utf8');
      pending.length = 0;
      pendingBytes = 0;
      if (last + 1 < chunk.length) {
        pending.push(chunk.subarray(last + 1));
        pendingBytes = chunk.length - last - 1;
      }
      yield* lines(text);
    }
  } catch (error) {
    if (error instanceof InputError) throw error;
    throw new InputError(line + 1, reasonOf(error));
  }
  if (pendingBytes > 0) yield* lines(Buffer.concat(pending).toString('utf8'));
}
