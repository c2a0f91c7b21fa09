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
 * Counts `\n` bytes up to an offset of the input, keeping only the chunks not yet counted. File
 * lines are counted here rather than taken from csv-parse, whose count goes one too far for every
 * `\r\n` inside a quoted cell.
 */
class NewlineCounter {
  readonly #chunks: Buffer[] = [];
  /** Offset in the input of `#chunks[0]`. */
  #start = 0;
  /** Offset up to which newlines are counted. */
  #counted = 0;
  #newlines = 0;

  push(chunk: Buffer): void {
    this.#chunks.push(chunk);
  }

  /** `\n` bytes in the input before `offset` (offsets only grow: earlier ones give the count so far). */
  before(offset: number): number {
    while (this.#counted < offset) {
      const chunk = this.#chunks[0];
      if (chunk === undefined) break;
      const end = this.#start + chunk.length;
      const to = Math.min(offset, end);
      for (let i = chunk.indexOf(NEWLINE, this.#counted - this.#start); i !== -1 && this.#start + i < to; ) {
        this.#newlines++;
        i = chunk.indexOf(NEWLINE, i + 1);
      }
      this.#counted = to;
      if (to === end) {
        this.#chunks.shift();
        this.#start = end;
      }
    }
    return this.#newlines;
  }
}

const NEWLINE = 0x0a;

/** `\n` characters inside a record's cells: a quoted cell may span lines. */
function newlinesIn(fields: readonly string[]): number {
  let count = 0;
  for (const field of fields) {
    for (let i = field.indexOf('\n'); i !== -1; i = field.indexOf('\n', i + 1)) count++;
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
  const newlines = new NewlineCounter();
  const parser = parse({
    bom: true,
    skip_empty_lines: true,
    // The field count is checked here, so that a short row is a bad row rather than the end of the file.
    relax_column_count: true,
    on_record: (fields: string[], info: Info) => {
      // `bytes` is where the record ends, its line break included: the newlines before its last
      // byte give the line it ends on, and those inside its cells lead back to where it starts.
      const endLine = 1 + newlines.before(info.bytes - 1);
      parsed.push({ fields, line: endLine - newlinesIn(fields) });
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
      const value: Record<string, unknown> = {};
      for (let i = 0; i < fields.length; i++) {
        const cell = fields[i] as string;
        if (cell.length > 0) value[header.names[i] as string] = (header.read[i] as CellParser)(cell);
      }
      yield { line, value };
    }
  };
  const failure = (error: unknown) => {
    if (error instanceof InputError) return error;
    // A CsvError's `bytes` is where the record it failed in starts; its own line count can be off.
    const bytes = (error as { bytes?: unknown }).bytes;
    const line = typeof bytes === 'number' ? 1 + newlines.before(bytes) : lastLine + 1;
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
      newlines.push(chunk);
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
