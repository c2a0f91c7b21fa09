import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { pipeline } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { ErrorCode } from '../../errors/index.js';
import { CliError } from '../cli-error.js';

/** The file formats the loaders read. */
export type InputFormat = 'jsonl' | 'csv';

/** An input file opened for streaming. */
interface OpenedInput {
  readonly format: InputFormat;
  /** The file's bytes, decompressed when it is gzipped, in chunks of about a MiB. */
  readonly chunks: AsyncIterable<Buffer>;
  /** Bytes on disk; undefined for standard input, where no ETA can be given. */
  readonly totalBytes: number | undefined;
  /** Bytes read from disk so far: compressed bytes for `.gz`, so that it compares with `totalBytes`. */
  bytesRead(): number;
}

const EXTENSIONS: ReadonlyArray<readonly [RegExp, InputFormat]> = [
  [/\.(jsonl|ndjson|json)$/i, 'jsonl'],
  [/\.csv$/i, 'csv'],
];

/**
 * The format of `path`: `explicit` when given, else from the extension (a `.gz` suffix is looked
 * through). `.json` counts as JSON Lines: most "JSON" exports of rows are one object per line.
 */
function formatOf(path: string, explicit: InputFormat | undefined): InputFormat {
  if (explicit !== undefined) return explicit;
  const name = path.replace(/\.gz$/i, '');
  for (const [pattern, format] of EXTENSIONS) if (pattern.test(name)) return format;
  throw new CliError(
    `cannot tell the format of ${path} from its name (.jsonl, .ndjson, .json, .csv, optionally .gz); pass --format jsonl or --format csv`,
    ErrorCode.CLI_USAGE,
  );
}

// Large chunks: fewer trips through the loop, and a MiB is nothing next to the batch in memory.
const CHUNK_BYTES = 1024 * 1024;

/**
 * Opens `path` (or standard input for `-`) for streaming. Gzip is recognised by the `.gz` suffix
 * and decompressed on the fly. Nothing is read until `chunks` is iterated, and only as fast as the
 * iteration goes, which is what keeps memory constant whatever the file's size.
 */
export async function openInput(path: string, explicit: InputFormat | undefined): Promise<OpenedInput> {
  const format = formatOf(path === '-' ? 'stdin' : path, path === '-' ? (explicit ?? 'jsonl') : explicit);
  let bytes = 0;
  let totalBytes: number | undefined;
  let source: AsyncIterable<Buffer>;
  if (path === '-') {
    source = process.stdin;
  } else {
    try {
      const info = await stat(path);
      if (!info.isFile()) throw new CliError(`${path} is not a file`, ErrorCode.INPUT_INVALID);
      totalBytes = info.size;
    } catch (error) {
      if (error instanceof CliError) throw error;
      throw new CliError(
        `cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
        ErrorCode.INPUT_INVALID,
      );
    }
    source = createReadStream(path, { highWaterMark: CHUNK_BYTES });
  }
  async function* counted(): AsyncGenerator<Buffer> {
    for await (const chunk of source) {
      bytes += chunk.length;
      yield chunk;
    }
  }
  const chunks: AsyncIterable<Buffer> = /\.gz$/i.test(path) ? gunzipped(path, counted()) : counted();
  return { format, chunks, totalBytes, bytesRead: () => bytes };
}

async function* gunzipped(path: string, source: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  const gunzip = createGunzip({ chunkSize: CHUNK_BYTES });
  // pipeline, not pipe: a read error must end the iteration with that error, not hang it.
  const output = pipeline(source, gunzip, () => undefined);
  try {
    for await (const chunk of output) yield chunk as Buffer;
  } catch (error) {
    throw new CliError(`cannot decompress ${path}: ${(error as Error).message}`, ErrorCode.INPUT_INVALID);
  }
}
