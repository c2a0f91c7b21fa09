import { ModelInvalidError } from '../../errors/index.js';
/**
 * Typed access to a parsed JSON document, each failure naming the path of the offending field,
 * because "Cannot read properties of undefined" says nothing about which part of a model file is
 * wrong.
 */

/** A JSON object, with the path it was reached by. */
export class JsonObject {
  constructor(
    readonly value: Record<string, unknown>,
    readonly path: string,
  ) {}

  /** Wraps `value`, which must be a JSON object. */
  static of(value: unknown, path: string): JsonObject {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new ModelInvalidError(`${path} is not an object`);
    }
    return new JsonObject(value as Record<string, unknown>, path);
  }

  has(key: string): boolean {
    return this.value[key] !== undefined;
  }

  object(key: string): JsonObject {
    return JsonObject.of(this.value[key], this.at(key));
  }

  array(key: string): unknown[] {
    const value = this.value[key];
    if (!Array.isArray(value))
      throw new ModelInvalidError(`${this.at(key)} is ${describe(value)}, not an array`);
    return value;
  }

  string(key: string): string {
    const value = this.value[key];
    if (typeof value !== 'string')
      throw new ModelInvalidError(`${this.at(key)} is ${describe(value)}, not a string`);
    return value;
  }

  /**
   * A number array. `null` entries become NaN: XGBoost writes NaN (a non-JSON token the reader
   * turns into null) as the threshold of categorical splits. Booleans become 0/1 (older XGBoost
   * writes default_left as booleans).
   */
  numbers(key: string): Float64Array {
    const list = this.array(key);
    const out = new Float64Array(list.length);
    list.forEach((entry, i) => {
      if (entry === null) out[i] = Number.NaN;
      else if (typeof entry === 'number') out[i] = entry;
      else if (typeof entry === 'boolean') out[i] = entry ? 1 : 0;
      else throw new ModelInvalidError(`${this.at(key)}[${i}] is ${describe(entry)}, not a number`);
    });
    return out;
  }

  integers(key: string): Int32Array {
    const numbers = this.numbers(key);
    numbers.forEach((n, i) => {
      if (!Number.isInteger(n)) throw new ModelInvalidError(`${this.at(key)}[${i}] is ${n}, not an integer`);
    });
    return Int32Array.from(numbers);
  }

  /** The path of `key` in this object, for messages. */
  at(key: string): string {
    return `${this.path}.${key}`;
  }
}

/** A short description of a JSON value for error messages. */
export function describe(value: unknown): string {
  if (value === undefined) return 'missing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `${typeof value} ${JSON.stringify(value)}`.slice(0, 60);
}

/**
 * Parses JSON that may contain the non-standard tokens `NaN`, `Infinity` and `-Infinity`
 * (XGBoost writes them): NaN becomes null, the infinities numbers that overflow to ±Infinity.
 */
export function parseLenientJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (strictError) {
    const patched = text.replace(/"(?:[^"\\]|\\.)*"|-?Infinity|NaN/g, (token) => {
      if (token.startsWith('"')) return token;
      if (token === 'NaN') return 'null';
      return token.startsWith('-') ? '-1e999' : '1e999';
    });
    if (patched === text) throw strictError;
    return JSON.parse(patched);
  }
}
