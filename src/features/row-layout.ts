import type { FeatureKind, FeatureSpec, FeatureValue } from './feature-kind.js';

/** Where a feature sits in the rows of one layout (see {@link RowLayout.slotOf}). */
export interface RowSlot {
  readonly kind: FeatureKind;
  /** Its index among the fixed-size or among the variable-size features. */
  readonly index: number;
  readonly fixed: boolean;
}

/**
 * The binary layout of a feature row: fixed-size values (float, integer, boolean as f64, NaN for
 * missing) first at fixed offsets so that reading one is a single `readDoubleLE`, then the
 * variable-size ones (string as UTF-8, vector as f32), each behind a u32 length
 * (0xFFFFFFFF for missing). Header: format version (u8), layout fingerprint (u32), event
 * timestamp in ms (f64). See docs/reference/feature-store.md; why binary: DR-011.
 */
export class RowLayout {
  static readonly FORMAT_VERSION = 1;
  static readonly HEADER_BYTES = 13;
  static readonly MISSING_LENGTH = 0xffffffff;

  /** Feature names in declared order, with their kinds. */
  readonly features: ReadonlyArray<readonly [name: string, kind: FeatureKind]>;
  /** Identifies the layout: rows carry it so a changed declaration can still read old rows. */
  readonly fingerprint: number;
  /**
   * Per feature: its kind and its index among the fixed-size or the variable-size ones. One map,
   * so that a read (which runs per feature a model reads) is one look-up.
   */
  readonly #slots = new Map<string, RowSlot>();
  readonly #fixedCount: number;
  /** The kinds of the variable-size features, in stored order. */
  readonly #variableKinds: FeatureKind[] = [];

  constructor(features: ReadonlyArray<readonly [string, FeatureKind]>) {
    this.features = features;
    let fixed = 0;
    let variable = 0;
    for (const [name, kind] of features) {
      if (kind === 'string' || kind === 'vector') {
        this.#slots.set(name, { kind, index: variable++, fixed: false });
        this.#variableKinds.push(kind);
      } else {
        this.#slots.set(name, { kind, index: fixed++, fixed: true });
      }
    }
    this.#fixedCount = fixed;
    this.fingerprint = fnv1a(features.map(([n, k]) => `${n}:${k}`).join(','));
  }

  /** The layout of a declared set of features. */
  static of(features: Readonly<Record<string, FeatureSpec>>): RowLayout {
    return new RowLayout(Object.entries(features).map(([name, spec]) => [name, spec.kind] as const));
  }

  /** Whether `name` is in this layout. */
  has(name: string): boolean {
    return this.#slots.has(name);
  }

  /** Encodes one row. `values` holds valid values (see featureValueProblem); absent and null mean missing. */
  encode(values: Readonly<Record<string, unknown>>, eventTimestampMs: number): Buffer {
    const variableParts: Array<Buffer | null> = [];
    let size = RowLayout.HEADER_BYTES + 8 * this.#fixedCount;
    for (const [name, kind] of this.features) {
      if (kind !== 'string' && kind !== 'vector') continue;
      const value = values[name];
      let part: Buffer | null = null;
      if (value !== null && value !== undefined) {
        if (kind === 'string') part = Buffer.from(value as string, 'utf8');
        else {
          const floats = Float32Array.from(value as ArrayLike<number>);
          part = Buffer.from(floats.buffer, floats.byteOffset, floats.byteLength);
        }
      }
      variableParts.push(part);
      size += 4 + (part?.length ?? 0);
    }
    const row = Buffer.allocUnsafe(size);
    row.writeUInt8(RowLayout.FORMAT_VERSION, 0);
    row.writeUInt32LE(this.fingerprint, 1);
    row.writeDoubleLE(eventTimestampMs, 5);
    for (const [name, { index, fixed }] of this.#slots) {
      if (!fixed) continue;
      const value = values[name];
      const number =
        value === null || value === undefined
          ? Number.NaN
          : value === true
            ? 1
            : value === false
              ? 0
              : (value as number);
      row.writeDoubleLE(number, RowLayout.HEADER_BYTES + 8 * index);
    }
    let offset = RowLayout.HEADER_BYTES + 8 * this.#fixedCount;
    for (const part of variableParts) {
      if (part === null) {
        row.writeUInt32LE(RowLayout.MISSING_LENGTH, offset);
        offset += 4;
      } else {
        row.writeUInt32LE(part.length, offset);
        part.copy(row, offset + 4);
        offset += 4 + part.length;
      }
    }
    return row;
  }

  /**
   * Whether `row` (whose header names this layout) has exactly the shape of one of its rows.
   * A cut or damaged row has not, and {@link read} would run past its end.
   */
  fits(row: Buffer): boolean {
    let offset = RowLayout.HEADER_BYTES + 8 * this.#fixedCount;
    for (const kind of this.#variableKinds) {
      if (offset + 4 > row.length) return false;
      const length = row.readUInt32LE(offset);
      offset += 4;
      if (length === RowLayout.MISSING_LENGTH) continue;
      if (kind === 'vector' && length % 4 !== 0) return false;
      offset += length;
    }
    return offset === row.length;
  }

  /** Reads one feature from a row of this layout; null when missing or not in the layout. */
  read(row: Buffer, name: string): FeatureValue | null {
    return this.readSlot(row, this.#slots.get(name));
  }

  /**
   * Where feature `name` sits in this layout's rows, undefined when it is not in the layout: a
   * reader of many rows looks it up once, then reads each with {@link readSlot}.
   */
  slotOf(name: string): RowSlot | undefined {
    return this.#slots.get(name);
  }

  /** {@link read} at a slot of this layout (from {@link slotOf}); null when missing or no slot. */
  readSlot(row: Buffer, slot: RowSlot | undefined): FeatureValue | null {
    if (slot === undefined) return null;
    if (slot.fixed) {
      const number = row.readDoubleLE(RowLayout.HEADER_BYTES + 8 * slot.index);
      if (Number.isNaN(number)) return null;
      return slot.kind === 'boolean' ? number !== 0 : number;
    }
    let offset = RowLayout.HEADER_BYTES + 8 * this.#fixedCount;
    for (let i = 0; i < slot.index; i++) {
      const length = row.readUInt32LE(offset);
      offset += 4 + (length === RowLayout.MISSING_LENGTH ? 0 : length);
    }
    const length = row.readUInt32LE(offset);
    if (length === RowLayout.MISSING_LENGTH) return null;
    const start = offset + 4;
    if (slot.kind === 'string') return row.toString('utf8', start, start + length);
    // Copy: the row's buffer is shared and may not be 4-byte aligned.
    const floats = new Float32Array(length / 4);
    for (let i = 0; i < floats.length; i++) floats[i] = row.readFloatLE(start + 4 * i);
    return floats;
  }

  /** All features of a row, missing ones as null. */
  readAll(row: Buffer): Record<string, FeatureValue | null> {
    const values: Record<string, FeatureValue | null> = {};
    for (const [name] of this.features) values[name] = this.read(row, name);
    return values;
  }

  /** The fingerprint stored in a row, or undefined when the row is not in a format rankd knows. */
  static fingerprintOf(row: Buffer): number | undefined {
    if (row.length < RowLayout.HEADER_BYTES || row.readUInt8(0) !== RowLayout.FORMAT_VERSION)
      return undefined;
    return row.readUInt32LE(1);
  }

  /** The event timestamp (ms since the epoch) stored in a row. */
  static timestampOf(row: Buffer): number {
    return row.readDoubleLE(5);
  }
}

/** 32-bit FNV-1a: a stable, cheap fingerprint (not a security measure). */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}
