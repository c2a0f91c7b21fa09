/** Where progress goes: a terminal gets a redrawn bar, anything else plain lines. */
export interface ProgressStream {
  write(text: string): unknown;
  readonly isTTY?: boolean;
  readonly columns?: number;
}

/** How progress is shown. */
interface ProgressOptions {
  readonly stream: ProgressStream;
  /** What is being loaded, at the start of each plain line: `features load product_stats`. */
  readonly label: string;
  /** Bytes of the file, for the percentage and ETA; undefined when unknown (standard input). */
  readonly totalBytes: number | undefined;
  /** Bytes read so far, comparable with `totalBytes`. */
  readonly bytesRead: () => number;
  /** Seconds between plain lines when not on a terminal. @defaultValue 5 */
  readonly intervalSeconds?: number;
  /** Clock in ms, injectable for tests. @defaultValue `performance.now` */
  readonly now?: () => number;
  /** What is counted. @defaultValue `rows` */
  readonly unit?: string;
  /** What the total measures, in plain lines: `42% of the file`. @defaultValue `the file` */
  readonly totalName?: string;
}

const REDRAW_MS = 100;
const BAR_WIDTH = 24;

/** `12345.6` → `12,346`. */
export function formatCount(value: number): string {
  return Math.round(value).toLocaleString('en-US');
}

/** A duration as `850 ms`, `12.3 s` or `4 min 05 s`. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const seconds = Math.round(ms / 1000);
  const hours = Math.floor(seconds / 3600);
  const minutes = Math.floor((seconds % 3600) / 60);
  const rest = String(seconds % 60).padStart(2, '0');
  return hours > 0 ? `${hours} h ${String(minutes).padStart(2, '0')} min` : `${minutes} min ${rest} s`;
}

/**
 * Progress of a load, written by hand rather than with a library: one line redrawn in place
 * (at most ten times a second) on a terminal — bar, percentage of the file read, rows, rows/s,
 * ETA — and a plain line every few seconds otherwise, so logs of a long load show it is alive
 * without being flooded. The percentage and ETA come from bytes read against the file's size,
 * the only measure known before the end of a stream.
 */
export class Progress {
  readonly #options: ProgressOptions;
  readonly #now: () => number;
  readonly #started: number;
  readonly #tty: boolean;
  #last = Number.NEGATIVE_INFINITY;
  #drawn = false;
  #rows = 0;

  constructor(options: ProgressOptions) {
    this.#options = options;
    this.#now = options.now ?? (() => performance.now());
    this.#started = this.#now();
    this.#tty = options.stream.isTTY === true;
    if (!this.#tty) this.#last = this.#started;
  }

  /** Records the rows done; draws when it is time to. */
  update(rows: number): void {
    this.#rows = rows;
    const now = this.#now();
    const interval = this.#tty ? REDRAW_MS : (this.#options.intervalSeconds ?? 5) * 1000;
    if (now - this.#last < interval) return;
    this.#last = now;
    if (this.#tty) this.#draw();
    else this.#options.stream.write(`${this.#options.label}: ${this.line(now)}\n`);
  }

  /** Runs `print` (which writes a message line, e.g. a bad row) without tearing the bar. */
  around(print: () => void): void {
    const redraw = this.#tty && this.#drawn;
    if (redraw) this.#options.stream.write('\r\x1b[2K');
    print();
    if (redraw) this.#draw();
  }

  /** Removes the bar, before the summary is printed. */
  finish(): void {
    if (this.#tty && this.#drawn) this.#options.stream.write('\r\x1b[2K');
    this.#drawn = false;
  }

  /** The figures as one line: `42% [#####.....] 420,000 rows, 61,234 rows/s, ETA 9.4 s`. */
  line(now = this.#now()): string {
    const elapsed = now - this.#started;
    const rate = elapsed > 0 ? (this.#rows * 1000) / elapsed : 0;
    const unit = this.#options.unit ?? 'rows';
    const figures = `${formatCount(this.#rows)} ${unit}, ${formatCount(rate)} ${unit}/s`;
    const total = this.#options.totalBytes;
    if (total === undefined || total === 0) return figures;
    const share = Math.min(1, this.#options.bytesRead() / total);
    const percent = `${Math.floor(share * 100)}%`.padStart(4);
    const eta = share > 0 ? `, ETA ${formatDuration((elapsed * (1 - share)) / share)}` : '';
    if (!this.#tty) return `${figures} (${percent.trim()} of ${this.#options.totalName ?? 'the file'})${eta}`;
    const filled = Math.round(share * BAR_WIDTH);
    return `${percent} [${'#'.repeat(filled)}${'.'.repeat(BAR_WIDTH - filled)}] ${figures}${eta}`;
  }

  #draw(): void {
    const width = this.#options.stream.columns ?? 80;
    this.#options.stream.write(`\r\x1b[2K${this.line().slice(0, Math.max(width - 1, 10))}`);
    this.#drawn = true;
  }
}
