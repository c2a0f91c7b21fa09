import { createReadStream, createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Writable } from 'node:stream';
import type { TrainingRow } from './training-join.js';

/** Writes text, waiting when the stream's buffer is full, so a slow disk or pipe bounds memory. */
async function writeText(stream: Writable, text: string): Promise<void> {
  if (!stream.write(text)) await new Promise<void>((resolve) => stream.once('drain', () => resolve()));
}

/** Where exported rows go. */
export interface RowWriter {
  write(row: TrainingRow): Promise<void>;
  /** Finishes the output (the CSV is written here). Does not close the stream. */
  end(): Promise<void>;
}

/** One JSON object per row and line; `experiments` and `features` stay nested objects. */
export class JsonlRowWriter implements RowWriter {
  readonly #out: Writable;

  constructor(out: Writable) {
    this.#out = out;
  }

  write(row: TrainingRow): Promise<void> {
    return writeText(this.#out, `${JSON.stringify(row)}\n`);
  }

  async end(): Promise<void> {}
}

/** The fixed CSV columns before the experiment and feature columns, and the labels after them. */
const LEADING = [
  'request_id',
  'timestamp',
  'api_source',
  'run_id',
  'entity_type',
  'entity_id',
  'position',
  'score',
  'model_name',
  'model_version',
] as const;
const LABELS = ['clicked', 'added_to_cart', 'purchased', 'label'] as const;

/** One CSV cell: booleans as 1/0 (what trainers read), vectors as JSON, quoted when needed. */
function csvCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  const text =
    typeof value === 'boolean'
      ? value
        ? '1'
        : '0'
      : typeof value === 'object'
        ? JSON.stringify(value)
        : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/**
 * CSV with one column per experiment (`experiment:<id>`) and per feature (`view:feature`), sorted.
 * Those columns are known only at the end, so rows wait in a temporary JSONL file (not in memory)
 * and the CSV is written from it by `end()`.
 */
export class CsvRowWriter implements RowWriter {
  readonly #out: Writable;
  readonly #dir = mkdtempSync(join(tmpdir(), 'rankd-export-'));
  readonly #spool: Writable;
  readonly #experiments = new Set<string>();
  readonly #features = new Set<string>();

  constructor(out: Writable) {
    this.#out = out;
    this.#spool = createWriteStream(join(this.#dir, 'rows.jsonl'));
  }

  write(row: TrainingRow): Promise<void> {
    for (const id of Object.keys(row.experiments)) this.#experiments.add(id);
    for (const name of Object.keys(row.features ?? {})) this.#features.add(name);
    return writeText(this.#spool, `${JSON.stringify(row)}\n`);
  }

  async end(): Promise<void> {
    try {
      await new Promise<void>((resolve, reject) =>
        this.#spool.end((error?: Error | null) => (error ? reject(error) : resolve())),
      );
      const experiments = [...this.#experiments].sort();
      const features = [...this.#features].sort();
      const header = [...LEADING, ...experiments.map((id) => `experiment:${id}`), ...features, ...LABELS];
      await writeText(this.#out, `${header.map(csvCell).join(',')}\n`);
      const lines = createInterface({
        input: createReadStream(join(this.#dir, 'rows.jsonl')),
        crlfDelay: Number.POSITIVE_INFINITY,
      });
      for await (const line of lines) {
        const row = JSON.parse(line) as TrainingRow;
        // Own members only: a row without an experiment or feature named `constructor` has an empty cell.
        const own = (object: object | null, key: string) =>
          object !== null && Object.hasOwn(object, key)
            ? (object as Record<string, unknown>)[key]
            : undefined;
        const cells = [
          ...LEADING.map((c) => row[c]),
          ...experiments.map((id) => own(row.experiments, id)),
          ...features.map((name) => own(row.features, name)),
          ...LABELS.map((c) => row[c]),
        ];
        await writeText(this.#out, `${cells.map(csvCell).join(',')}\n`);
      }
    } finally {
      rmSync(this.#dir, { recursive: true, force: true });
    }
  }
}
