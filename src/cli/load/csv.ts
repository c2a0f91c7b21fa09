import { type Info, parse } from 'csv-parse';
import { InputError, reasonOf, type SourceRecord } from './records.js';

/** Turns one CSV cell (never empty: empty cells are missing values) into the value to validate. */
export type CellParser = (cell: string) => unknown;

/** How to read each column, by its header name. */
export type ColumnParsers = (column: string) => CellParser;

interface ParsedRecord {
  readonly fields: string[];
  readonly line: number;
}

/**
 * Counts line breaks (`\r\n`, `\n`, or a lone `\r`: the record delimiters the parser is given) up
 * to an offset of the input, keeping only the chunks not yet counted. File lines are counted here
 * rather than taken from csv-parse, whose count goes one too far for every `\r\n` inside a quoted
 * cell. A `\r\n` is counted at its `\n`, so that the `\n` ending a record is on that record's line.
 */
class LineBreakCounter {
  readonly #chunks: Buffer[] = [];
  /** Offset in the input of `#chunks[0]`. */
  #start = 0;
  /** Offset up to which line breaks are counted. */
  #counted = 0;
  #breaks = 0;

  push(chunk: Buffer): void {
    if (chunk.length > 0) this.#chunks.push(chunk);
  }

  /** Line breaks in the input before `offset` (offsets only grow: earlier ones give the count so far). */
  before(offset: number): number {
    while (this.#counted < offset) {
      const chunk = this.#chunks[0];
      if (chunk === undefined) break;
      const end = this.#start + chunk.length;
      const to = Math.min(offset, end);
      for (let i = this.#counted - this.#start; i < to - this.#start; i++) {
        const byte = chunk[i];
        // A `\r` is followed by its `\n` in this chunk or at the start of the next; past the input
        // so far (only at its very end: offsets asked for are inside records) it is a lone one.
        if (
          byte === LF ||
          (byte === CR && (i + 1 < chunk.length ? chunk[i + 1] : this.#chunks[1]?.[0]) !== LF)
        )
          this.#breaks++;
      }
      this.#counted = to;
      if (to === end) {
        this.#chunks.shift();
        this.#start = end;
      }
    }
    return this.#breaks;
  }
}

const LF = 0x0a;
const CR = 0x0d;

/** Line breaks inside a record's cells (a quoted cell may span lines), counted as the file's are. */
function lineBreaksIn(fields: readonly string[]): number {
  let count = 0;
  for (const field of fields) {
    for (let i = 0; i < field.length; i++) {
      const c = field.charCodeAt(i);
      if (c === LF || (c === CR && field.charCodeAt(i + 1) !== LF)) count++;
    }
  }
  return count;
}

/**
 * Reads CSV with a header row: each later record becomes an object keyed by the header, each cell
 * read by `parsers(column)`; an empty cell is left out (a missing value). Line numbers are the
 * file's lines, the header being line 1. A record with the wrong number of fields is a bad row;
 * a syntax error csv-parse cannot recover from (an unclosed quote) ends the file with an
 * {@link InputError}.
 *
 * The file is fed to csv-parse chunk by chunk and its records are collected as it parses, rather
 * than read from its output stream, so that the records parsed before a syntax error are kept.
 */
export async function* readCsv(
  chunks: AsyncIterable<Buffer>,
  parsers: ColumnParsers,
): AsyncGenerator<SourceRecord> {
  const parsed: ParsedRecord[] = [];
  const lineBreaks = new LineBreakCounter();
  const parser = parse({
    bom: true,
    skip_empty_lines: true,
    // Every usual line break ends a record. Left to itself csv-parse takes the first break it sees
    // as the only one: in a file of `\r` lines every row was line 1 (or 0), and after a first
    // `\r\n` a lone `\n` became part of a cell.
    record_delimiter: ['\r\n', '\n', '\r'],
    // The field count is checked here, so that a short row is a bad row rather than the end of the file.
    relax_column_count: true,
    on_record: (fields: string[], info: Info) => {
      // `bytes` is where the record ends, its line break included: the line breaks before its last
      // byte give the line it ends on, and those inside its cells lead back to where it starts.
      const endLine = 1 + lineBreaks.before(info.bytes - 1);
      parsed.push({ fields, line: endLine - lineBreaksIn(fields) });
      return undefined;
    },
  });
  // The errors arrive through the write and end callbacks; this keeps them from being unhandled.
  parser.on('error', () => undefined);
  parser.resume();
  let header: { names: string[]; read: CellParser[] } | undefined;
  let lastLine = 0;

  const drain = function* (): Generator<SourceRecord> {
    for (const { fields, line } of parsed.splice(0)) {
      lastLine = line;
      if (header === undefined) {
        header = headerOf(fields, line);
        continue;
      }
      if (fields.length !== header.names.length) {
        yield {
          line,
          problem: `has ${fields.length} field${fields.length === 1 ? '' : 's'}, the header has ${header.names.length}`,
        };
        continue;
      }
      const cells: Array<[string, unknown]> = [];
      for (let i = 0; i < fields.length; i++) {
        const cell = fields[i] as string;
        if (cell.length > 0) cells.push([header.names[i] as string, (header.read[i] as CellParser)(cell)]);
      }
      // Own members whatever the column's name: a `__proto__` column is a field (refused as
      // unknown), not the row's prototype, as JSON Lines rows read it too.
      yield { line, value: Object.fromEntries(cells) };
    }
  };
  const failure = (error: unknown) => {
    if (error instanceof InputError) return error;
    // A CsvError's `bytes` is where the record it failed in starts; its own line count can be off.
    const bytes = (error as { bytes?: unknown }).bytes;
    const line = typeof bytes === 'number' ? 1 + lineBreaks.before(bytes) : lastLine + 1;
    return new InputError(line, reasonOf(error).replace(/ at line \d+/, ''));
  };
  const headerOf = (fields: string[], line: number) => {
    const names = fields.map((name) => name.trim());
    const seen = new Set<string>();
    for (const name of names) {
      if (name.length === 0) throw new InputError(line, 'the header row has an empty column name');
      if (seen.has(name)) throw new InputError(line, `the header row names column ${name} twice`);
      seen.add(name);
    }
    return { names, read: names.map(parsers) };
  };

  try {
    for await (const chunk of chunks) {
      lineBreaks.push(chunk);
      const written = await new Promise<unknown>((resolve) => parser.write(chunk, resolve));
      yield* drain();
      if (written) throw failure(written);
    }
    const ended = await new Promise<unknown>((resolve) => {
      parser.once('error', resolve);
      parser.end(() => resolve(undefined));
    });
    yield* drain();
    if (ended) throw failure(ended);
  } catch (error) {
    throw failure(error);
  } finally {
    parser.destroy();
  }
}
