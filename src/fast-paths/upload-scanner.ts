import { isUtf8 } from 'node:buffer';
import type { EntityType } from '../entities/define-entity.js';
import { MAX_ENTITY_ID_LENGTH } from '../entity-index/entity-index.js';

/**
 * The upload fast path: one pass over the raw bytes of a `POST /api/v1/entities/upload` body that
 * finds each entity's bytes and id without building any JavaScript object, so that an entity can
 * be stored as the very bytes it was sent as (DR-001).
 *
 * The slow path (`JSON.parse`, schema validation, `JSON.stringify` per entity) defines what is
 * stored and answered. The scanner only accepts bodies for which the bytes it would store are
 * exactly what the slow path would store, and declines everything else (`undefined`): the caller
 * then runs the slow path, which also produces every error, so errors keep one shape and one
 * source. It declines, among others:
 *
 * - invalid UTF-8, or anything that is not a JSON object `{entity_type, entities, entity_key?}`
 *   (an unknown or repeated top-level key, an unknown type, more than `maxBatch` entities, an
 *   entity that is not an object, broken JSON);
 * - inside an entity: whitespace between tokens, string escapes other than `\" \\ \n \r \t \b \f`
 *   (`JSON.stringify` rewrites `\/` and `\u....`), numbers `JSON.stringify` would print
 *   differently (exponents, `-0`, a trailing zero in the fraction, more than 15 significant
 *   digits, magnitudes printed in exponent form), keys made of digits only (V8 puts array-index keys
 *   first), duplicate keys, `__proto__` and `constructor` keys (the JSON parser refuses some), and
 *   nesting deeper than {@link MAX_SCAN_DEPTH};
 * - an id that is missing, empty, too long or neither a string nor a number, an entity that
 *   fails its type's declared fields, and one with a field its type does not declare (when the
 *   type declares any): the slow path names such fields in its answer's x-rankd-unknown-fields.
 *
 * Within what it accepts every string has exactly one encoding, so comparing keys as bytes is
 * comparing them as strings.
 */

/** Containers nested deeper than this inside an entity send the body down the slow path. */
export const MAX_SCAN_DEPTH = 32;

/**
 * An upload the scanner accepted: what to store, exactly as the slow path would store it. It is
 * the upload route's body on the fast path, a class of its own so that the route's validator can
 * let it through unchanged and its handler can tell it from a parsed body (`instanceof`), with no
 * stand-in body made to pass the schema.
 */
export class ScannedUpload {
  /** The entities' type. */
  readonly type: EntityType;
  /** The ids, as strings, in the order of the entities (a repeated id appears each time). */
  readonly ids: string[];
  /** Each entity's compact JSON: a view of the body, or a copy with the id field added. */
  readonly values: Buffer[];

  constructor(type: EntityType, ids: string[], values: Buffer[]) {
    this.type = type;
    this.ids = ids;
    this.values = values;
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const MINUS = 0x2d;
const DOT = 0x2e;
const ZERO = 0x30;
const ONE = 0x31;
const NINE = 0x39;
const LBRACE = 0x7b;
const RBRACE = 0x7d;
const LBRACKET = 0x5b;
const RBRACKET = 0x5d;
const LOWER_E = 0x65;
const UPPER_E = 0x45;
const LOWER_N = 0x6e;
const LOWER_T = 0x74;
const LOWER_F = 0x66;

const TRUE = Buffer.from('true');
const FALSE = Buffer.from('false');
const NULL = Buffer.from('null');
const PROTO = Buffer.from('__proto__');
const CONSTRUCTOR = Buffer.from('constructor');
const ENTITY_TYPE = Buffer.from('entity_type');
const ENTITIES = Buffer.from('entities');
const ENTITY_KEY = Buffer.from('entity_key');
const CLOSE_BRACE = Buffer.from('}');

/** `JSON.stringify` writes these numbers without an exponent; beyond, it switches to one. */
const MAX_INTEGER_DIGITS = 21;
const MAX_FRACTION_LEADING_ZEROS = 5;
/** Any decimal of at most 15 significant digits survives the round trip through a double unchanged. */
const MAX_SIGNIFICANT_DIGITS = 15;

/**
 * A cheap hash of a key's bytes `[start, end)`: its length and three of its bytes. Keys of one
 * object rarely agree on all four, so the duplicate check compares bytes only when they do.
 */
function keyHash(buf: Buffer, start: number, end: number): number {
  const size = end - start;
  if (size === 0) return 0;
  return (
    (size & 0xff) |
    ((buf[start] as number) << 8) |
    ((buf[start + (size >> 1)] as number) << 16) |
    ((buf[end - 1] as number) << 24)
  );
}

/** Words (4 bytes) per call of {@link quotesInWords}. */
const WORDS_PER_BLOCK = 1024;

/**
 * {@link plainQuotes} over the words `[from, to)` of `view` (whose first byte is body byte
 * `head`): appends the quotes' positions to `scratch.quotes` after the `count` found so far and
 * returns the new count, or -1 at a byte below 0x20 or a backslash.
 */
function quotesInWords(view: Int32Array, from: number, to: number, head: number, count: number): number {
  let quotes = scratch.quotes;
  let refused = 0;
  for (let i = from; i < to; i++) {
    const word = view[i] as number;
    const backslashes = word ^ 0x5c5c5c5c;
    refused |= ((word - 0x20202020) & ~word) | ((backslashes - 0x01010101) & ~backslashes);
    const quoteBytes = word ^ 0x22222222;
    if (((quoteBytes - 0x01010101) & ~quoteBytes & 0x80808080) === 0) continue;
    if (count + 5 > quotes.length) quotes = scratch.quotes = grown(quotes, count + 5);
    // Little-endian: the word's lowest byte comes first in the body.
    const at = head + i * 4;
    if ((quoteBytes & 0xff) === 0) quotes[count++] = at;
    if ((quoteBytes & 0xff00) === 0) quotes[count++] = at + 1;
    if ((quoteBytes & 0xff0000) === 0) quotes[count++] = at + 2;
    if ((quoteBytes & 0xff000000) === 0) quotes[count++] = at + 3;
  }
  return (refused & 0x80808080) === 0 ? count : -1;
}

/**
 * For a body with no byte below 0x20 and no backslash (most: no whitespace, no escapes), where
 * therefore every quote opens or closes a string: the positions of all its quotes, in
 * `scratch.quotes` followed by -1, and their number. -1 for any other body.
 *
 * Four bytes at a time (the "has a zero byte" bit trick on 32-bit words): looking for a string's
 * end byte by byte costs more than the rest of the scan together.
 */
function plainQuotes(buf: Buffer): number {
  let quotes = scratch.quotes;
  let count = 0;
  const aligned = Math.min((buf.byteOffset + 3) & ~3, buf.byteOffset + buf.length);
  const head = aligned - buf.byteOffset;
  const words = (buf.length - head) >>> 2;
  const tail = head + words * 4;
  // At most 3 bytes before the first whole word: the scratch array always has room for them.
  for (let i = 0; i < head; i++) {
    const byte = buf[i] as number;
    if (byte < 0x20 || byte === BACKSLASH) return -1;
    if (byte === QUOTE) quotes[count++] = i;
  }
  const view = new Int32Array(buf.buffer, aligned, words);
  // In blocks, through a small function called many times: one call over the whole body would be
  // compiled on-stack with no type feedback for what follows its loop, and deoptimize on every
  // request (seen with --trace-deopt), leaving most of the loop to the interpreter.
  for (let from = 0; from < words && count !== -1; from += WORDS_PER_BLOCK)
    count = quotesInWords(view, from, Math.min(from + WORDS_PER_BLOCK, words), head, count);
  if (count === -1) return -1;
  quotes = scratch.quotes;
  for (let i = tail; i < buf.length; i++) {
    const byte = buf[i] as number;
    if (byte < 0x20 || byte === BACKSLASH) return -1;
    if (count + 2 > quotes.length) quotes = scratch.quotes = grown(quotes, count + 2);
    if (byte === QUOTE) quotes[count++] = i;
  }
  if (count + 1 > quotes.length) quotes = scratch.quotes = grown(quotes, count + 1);
  quotes[count] = -1;
  return count;
}

/** JSON's insignificant whitespace. */
export function isWhitespace(byte: number | undefined): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}

/** A key as the scanner compares it: the bytes between its quotes, and their hash. */
interface KeyBytes {
  readonly bytes: Buffer;
  readonly hash: number;
}

/** What the scanner needs to know about one entity type, worked out once per type. */
interface TypePlan {
  readonly type: EntityType;
  readonly idField: KeyBytes;
  /** `<type>_id`: where the id is looked for when the entity has no id field. */
  readonly fallbackField: KeyBytes;
  /** `,"<idField>":`, spliced in before the closing brace when the id came from another field. */
  readonly idFieldInsert: Buffer;
  /**
   * The type's declared fields. Those whose schema is a simple one carry a `check` of the value's
   * bytes; the others are parsed and checked with the type's validator.
   */
  readonly declared: ReadonlyArray<DeclaredField>;
  /** Reference fields the type does not also declare: known, not named as undeclared. */
  readonly referenceKeys: ReadonlyArray<KeyBytes>;
  /** Whether `<type>_id` is a declared or reference field (counted already when it holds the id). */
  readonly fallbackKnown: boolean;
}

/**
 * A field name as the scanner finds it in a body, or undefined when no accepted body can spell it
 * (it needs a `\u` escape) or when the slow path reads it differently from an own property: a name
 * `Object.prototype` has (`entity.toString` is never undefined), or an array index.
 */
function keyBytesOf(name: string): KeyBytes | undefined {
  const json = JSON.stringify(name);
  if (name === '' || json.includes('\\u') || name in Object.prototype || /^[0-9]+$/.test(name))
    return undefined;
  const bytes = Buffer.from(json.slice(1, -1));
  return { bytes, hash: keyHash(bytes, 0, bytes.length) };
}

/** A declared field of a type, as the scanner checks it. */
interface DeclaredField extends KeyBytes {
  readonly name: string;
  /** Whether the value at `[start, end)` (already known to be valid JSON) passes the field's schema. */
  readonly check: ValueCheck | undefined;
}

type ValueCheck = (buf: Buffer, start: number, end: number) => boolean;

/** Schema keywords that only annotate: the validator ignores them. */
const ANNOTATIONS = new Set(['default', 'description', 'title', 'examples', '$comment', 'deprecated']);

/**
 * A check of a value's bytes equivalent to the validator's check of the parsed value, for the
 * plain schemas apps declare most (`Type.String()`, `Number`, `Integer`, `Boolean`, `Null`, unions
 * of them, arrays of them, with annotations such as `default`); undefined for any other schema
 * (constraints, formats, objects, ...), whose values are parsed and given to the validator.
 * Parsing each value costs as much as the rest of the scan.
 */
function valueCheckOf(schema: unknown, inArray = false): ValueCheck | undefined {
  if (typeof schema !== 'object' || schema === null) return undefined;
  const fields = schema as Record<string, unknown>;
  const keys = Object.keys(fields).filter((key) => !ANNOTATIONS.has(key));
  if (keys.length === 1 && keys[0] === 'anyOf' && Array.isArray(fields.anyOf)) {
    const checks = fields.anyOf.map((member) => valueCheckOf(member, inArray));
    if (checks.length === 0 || checks.some((check) => check === undefined)) return undefined;
    return (buf, start, end) => checks.some((check) => (check as ValueCheck)(buf, start, end));
  }
  if (keys.length === 1 && keys[0] === 'type') {
    if (fields.type === 'string') return (buf, start) => buf[start] === QUOTE;
    if (fields.type === 'number') return (buf, start) => isNumberStart(buf[start]);
    // Accepted numbers have no exponent: an integer is one without a fraction.
    if (fields.type === 'integer')
      return (buf, start, end) => isNumberStart(buf[start]) && !hasDot(buf, start, end);
    if (fields.type === 'boolean') return (buf, start) => buf[start] === LOWER_T || buf[start] === LOWER_F;
    if (fields.type === 'null') return (buf, start) => buf[start] === LOWER_N;
    return undefined;
  }
  // Arrays of the kinds above only (not of arrays or objects: walking those is left to the parser).
  if (!inArray && keys.length === 2 && fields.type === 'array' && 'items' in fields) {
    const item = valueCheckOf(fields.items, true);
    if (item === undefined) return undefined;
    return (buf, start, end) => buf[start] === LBRACKET && everyItem(buf, start, end, item);
  }
  return undefined;
}

function hasDot(buf: Buffer, start: number, end: number): boolean {
  for (let i = start; i < end; i++) if (buf[i] === DOT) return true;
  return false;
}

function isNumberStart(byte: number | undefined): boolean {
  return byte === MINUS || (byte !== undefined && byte >= ZERO && byte <= NINE);
}

/** Whether every item of the compact, valid JSON array at `[start, end)` is a scalar passing `check`. */
function everyItem(buf: Buffer, start: number, end: number, check: ValueCheck): boolean {
  let pos = start + 1;
  if (buf[pos] === RBRACKET) return true;
  while (pos < end) {
    const byte = buf[pos];
    if (byte === LBRACE || byte === LBRACKET) return false;
    let itemEnd: number;
    if (byte === QUOTE) itemEnd = stringEnd(buf, pos) + 1;
    else {
      itemEnd = pos + 1;
      while (buf[itemEnd] !== COMMA && buf[itemEnd] !== RBRACKET) itemEnd++;
    }
    if (!check(buf, pos, itemEnd)) return false;
    // The comma, or the closing bracket.
    pos = itemEnd + 1;
  }
  return true;
}

/** Plans by type; `null` for a type whose field names the fast path cannot handle. */
const plans = new WeakMap<EntityType, TypePlan | null>();

function planFor(type: EntityType): TypePlan | null {
  let plan = plans.get(type);
  if (plan !== undefined) return plan;
  const idField = keyBytesOf(type.idField);
  const fallbackField = keyBytesOf(`${type.name}_id`);
  const declared: DeclaredField[] = [];
  let eligible = idField !== undefined && fallbackField !== undefined;
  for (const name of Object.keys(type.fields)) {
    const bytes = keyBytesOf(name);
    if (bytes === undefined) eligible = false;
    else declared.push({ ...bytes, name, check: valueCheckOf(type.fields[name]) });
  }
  const referenceKeys: KeyBytes[] = [];
  for (const name of Object.keys(type.references)) {
    if (name === type.idField || Object.hasOwn(type.fields, name)) continue;
    const bytes = keyBytesOf(name);
    if (bytes === undefined) eligible = false;
    else referenceKeys.push(bytes);
  }
  const fallbackName = `${type.name}_id`;
  plan =
    eligible && idField && fallbackField
      ? {
          type,
          idField,
          fallbackField,
          idFieldInsert: Buffer.from(`,${JSON.stringify(type.idField)}:`),
          declared,
          referenceKeys,
          fallbackKnown:
            Object.hasOwn(type.fields, fallbackName) || Object.hasOwn(type.references, fallbackName),
        }
      : null;
  plans.set(type, plan);
  return plan;
}

/**
 * The index of the closing quote of the string whose opening quote is at `pos`, or -1 when there
 * is no acceptable string there (an escape other than the kept ones, a control character, no end).
 * For bodies that are not plain (see {@link plainQuotes}).
 */
function stringEnd(buf: Buffer, pos: number): number {
  let at = pos + 1;
  const length = buf.length;
  while (at < length) {
    const byte = buf[at] as number;
    if (byte === QUOTE) return at;
    if (byte === BACKSLASH) {
      if (!isKeptEscape(buf[at + 1])) return -1;
      at += 2;
      continue;
    }
    if (byte < 0x20) return -1;
    at++;
  }
  return -1;
}

/**
 * The end of the number at `pos`, or -1 unless it is one `JSON.stringify` prints exactly as
 * written (see MAX_SIGNIFICANT_DIGITS and its neighbours): then it is also what `String(number)`
 * writes.
 */
export function numberEnd(buf: Buffer, start: number): number {
  let pos = start;
  const negative = buf[pos] === MINUS;
  if (negative) pos++;
  let byte = buf[pos] as number;
  let significant: number;
  let integerIsZero = false;
  let integerDigits = 0;
  let integerTrailingZeros = 0;
  if (byte === ZERO) {
    integerIsZero = true;
    pos++;
    byte = buf[pos] as number;
    if (byte >= ZERO && byte <= NINE) return -1;
  } else if (byte >= ONE && byte <= NINE) {
    while (byte >= ZERO && byte <= NINE) {
      integerDigits++;
      integerTrailingZeros = byte === ZERO ? integerTrailingZeros + 1 : 0;
      pos++;
      byte = buf[pos] as number;
    }
    if (integerDigits > MAX_INTEGER_DIGITS) return -1;
  } else {
    return -1;
  }
  if (byte === DOT) {
    pos++;
    const fractionStart = pos;
    let leadingZeros = 0;
    let sawNonZero = false;
    byte = buf[pos] as number;
    while (byte >= ZERO && byte <= NINE) {
      if (byte !== ZERO) sawNonZero = true;
      else if (!sawNonZero) leadingZeros++;
      pos++;
      byte = buf[pos] as number;
    }
    const fractionDigits = pos - fractionStart;
    // `1.50` and `1.0` come back as `1.5` and `1`.
    if (fractionDigits === 0 || buf[pos - 1] === ZERO) return -1;
    if (integerIsZero) {
      // Below 1e-6 JSON.stringify switches to exponent form.
      if (leadingZeros > MAX_FRACTION_LEADING_ZEROS) return -1;
      significant = fractionDigits - leadingZeros;
    } else {
      significant = integerDigits + fractionDigits;
    }
  } else {
    // `-0` comes back as `0`.
    if (integerIsZero && negative) return -1;
    significant = integerDigits - integerTrailingZeros;
  }
  if (byte === LOWER_E || byte === UPPER_E) return -1;
  if (significant > MAX_SIGNIFICANT_DIGITS) return -1;
  return pos;
}

/**
 * Scratch space, reused by every scan: a scan runs synchronously from start to end, so no two
 * scans ever share it. Grown by doubling when a body needs more.
 *
 * `keyStack`: `[start, end, hash]` of the keys of every object being scanned, innermost last (the
 * duplicate check compares a new key with its object's earlier ones).
 * `entityKeys`: `[start, end, hash, valueStart, valueEnd]` of each entity's own keys, all entities.
 * `entitySpans`: `[start, end, firstKey, endKey]` per entity (indexes into `entityKeys`, in keys).
 * `quotes`: where a plain body's quotes are (see {@link plainQuotes}).
 */
const scratch = {
  keyStack: new Int32Array(3 * 256),
  entityKeys: new Int32Array(5 * 16 * 1024),
  entitySpans: new Int32Array(4 * 1024),
  quotes: new Int32Array(64 * 1024),
  kinds: new Uint8Array(MAX_SCAN_DEPTH + 1),
  bases: new Int32Array(MAX_SCAN_DEPTH + 1),
};

const OBJECT = 1;
const ARRAY = 2;

function grown(array: Int32Array<ArrayBuffer>, needed: number): Int32Array<ArrayBuffer> {
  if (needed <= array.length) return array;
  let length = array.length * 2;
  while (length < needed) length *= 2;
  const bigger = new Int32Array(length);
  bigger.set(array);
  return bigger;
}

/** One pass over a body. Every method returns false as soon as the body is not one it accepts. */
class Scan {
  readonly buf: Buffer;
  pos = 0;
  entityKeyTop = 0;
  entityCount = 0;
  /** `[start, end)` of the `entity_type` string, quotes included; -1 when absent. */
  typeStart = -1;
  typeEnd = -1;
  /** `[start, end)` of the `entity_key` string, quotes included; -1 when absent or null. */
  keyFieldStart = -1;
  keyFieldEnd = -1;
  sawEntityKey = false;
  sawEntities = false;
  /** The body has no escape and no control character (nor whitespace) at all: see {@link plainQuotes}. */
  readonly plain: boolean;
  /** In a plain body, the index in `quotes` of the next string's opening quote. */
  quoteAt = 0;
  // The scratch arrays, as fields: faster to reach in the hot loops than module variables.
  keyStack = scratch.keyStack;
  entityKeys = scratch.entityKeys;
  entitySpans = scratch.entitySpans;
  /** Set once plainQuotes has filled it (and may have replaced it with a larger one). */
  readonly quotes: Int32Array<ArrayBuffer>;
  /** Per depth inside an entity: whether the container there is an object or an array. */
  readonly kinds = scratch.kinds;
  /** Per depth: where the keys of the object there start in `keyStack`. */
  readonly bases = scratch.bases;

  constructor(
    buf: Buffer,
    readonly maxBatch: number,
  ) {
    this.buf = buf;
    this.plain = plainQuotes(buf) !== -1;
    this.quotes = scratch.quotes;
  }

  skipWhitespace(): void {
    const buf = this.buf;
    let pos = this.pos;
    while (isWhitespace(buf[pos])) pos++;
    this.pos = pos;
  }

  /** A string at `pos` (its opening quote); on success `pos` is just past its closing quote. */
  string(): boolean {
    let end: number;
    if (this.plain) {
      if (this.quotes[this.quoteAt] !== this.pos) return false;
      end = this.quotes[this.quoteAt + 1] as number;
      this.quoteAt += 2;
    } else {
      end = stringEnd(this.buf, this.pos);
    }
    if (end === -1) return false;
    this.pos = end + 1;
    return true;
  }

  literal(word: Buffer): boolean {
    if (!bytesAt(this.buf, this.pos, word)) return false;
    this.pos += word.length;
    return true;
  }

  /**
   * One entity, at `pos` (its `{`), with no whitespace anywhere in it; on success `pos` is just
   * past its `}` and its own keys, with their values' places, are in `entityKeys`.
   *
   * One loop with an explicit stack rather than recursive calls: an upload has tens of thousands
   * of tokens, and a call per token costs as much as the scanning itself.
   */
  entity(): boolean {
    const buf = this.buf;
    const plain = this.plain;
    const kinds = this.kinds;
    const bases = this.bases;
    const quotes = this.quotes;
    let quoteAt = this.quoteAt;
    let keyStack = this.keyStack;
    let entityKeys = this.entityKeys;
    let entityKeyTop = this.entityKeyTop;
    let keyTop = 0;
    let pos = this.pos + 1;
    let depth = 1;
    kinds[1] = OBJECT;
    bases[1] = 0;
    if (buf[pos] === RBRACE) {
      this.pos = pos + 1;
      return true;
    }
    let expectKey = true;
    for (;;) {
      const byte = buf[pos] as number;
      // A string, whether a key or a value: where it ends.
      let end = -1;
      if (byte === QUOTE) {
        if (plain) {
          if (quotes[quoteAt] !== pos) return false;
          end = quotes[quoteAt + 1] as number;
          quoteAt += 2;
        } else {
          end = stringEnd(buf, pos);
        }
        if (end === -1) return false;
      }
      if (expectKey) {
        if (byte !== QUOTE) return false;
        const start = pos + 1;
        const size = end - start;
        const first = buf[start] as number;
        // Refused keys: array indexes (V8 orders them first), and the two the JSON parser may refuse.
        if (first >= ZERO && first <= NINE && isDigits(buf, start, end)) return false;
        if (size === PROTO.length && bytesAt(buf, start, PROTO)) return false;
        if (size === CONSTRUCTOR.length && bytesAt(buf, start, CONSTRUCTOR)) return false;
        const hash = keyHash(buf, start, end);
        for (let k = bases[depth] as number; k < keyTop; k += 3) {
          if (keyStack[k + 2] !== hash) continue;
          const other = keyStack[k] as number;
          if ((keyStack[k + 1] as number) - other === size && sameBytes(buf, other, start, size))
            return false;
        }
        if (keyTop + 3 > keyStack.length)
          keyStack = this.keyStack = scratch.keyStack = grown(keyStack, keyTop + 3);
        keyStack[keyTop] = start;
        keyStack[keyTop + 1] = end;
        keyStack[keyTop + 2] = hash;
        keyTop += 3;
        pos = end + 1;
        if (buf[pos] !== COLON) return false;
        pos++;
        if (depth === 1) {
          if (entityKeyTop + 5 > entityKeys.length)
            entityKeys = this.entityKeys = scratch.entityKeys = grown(entityKeys, entityKeyTop + 5);
          entityKeys[entityKeyTop] = start;
          entityKeys[entityKeyTop + 1] = end;
          entityKeys[entityKeyTop + 2] = hash;
          entityKeys[entityKeyTop + 3] = pos;
          // [+4], where the value ends, is written once it has.
          entityKeyTop += 5;
        }
        // The value, on the next turn.
        expectKey = false;
        continue;
      }
      // A value at `pos`.
      if (byte === QUOTE) {
        pos = end + 1;
      } else if (byte === LBRACE || byte === LBRACKET) {
        if (depth >= MAX_SCAN_DEPTH) return false;
        depth++;
        pos++;
        if (byte === LBRACE) {
          kinds[depth] = OBJECT;
          bases[depth] = keyTop;
          expectKey = true;
          if (buf[pos] !== RBRACE) continue;
        } else {
          kinds[depth] = ARRAY;
          expectKey = false;
          if (buf[pos] !== RBRACKET) continue;
        }
        // An empty container is a complete value at once.
        pos++;
        depth--;
      } else if (byte === MINUS || (byte >= ZERO && byte <= NINE)) {
        pos = numberEnd(buf, pos);
        if (pos === -1) return false;
      } else if (byte === LOWER_T) {
        if (!bytesAt(buf, pos, TRUE)) return false;
        pos += TRUE.length;
      } else if (byte === LOWER_F) {
        if (!bytesAt(buf, pos, FALSE)) return false;
        pos += FALSE.length;
      } else if (byte === LOWER_N) {
        if (!bytesAt(buf, pos, NULL)) return false;
        pos += NULL.length;
      } else {
        return false;
      }
      // A value just ended inside the container at `depth`: a comma, or closing brackets.
      for (;;) {
        if (depth === 1) entityKeys[entityKeyTop - 1] = pos;
        const next = buf[pos];
        const kind = kinds[depth];
        if (next === COMMA) {
          pos++;
          expectKey = kind === OBJECT;
          break;
        }
        if (next !== (kind === OBJECT ? RBRACE : RBRACKET)) return false;
        pos++;
        if (kind === OBJECT) keyTop = bases[depth] as number;
        depth--;
        if (depth === 0) {
          this.pos = pos;
          this.quoteAt = quoteAt;
          this.entityKeyTop = entityKeyTop;
          return true;
        }
      }
    }
  }

  /** The `entities` array: whitespace allowed between entities, none inside them. */
  entities(): boolean {
    const buf = this.buf;
    this.pos++;
    this.skipWhitespace();
    if (buf[this.pos] === RBRACKET) {
      this.pos++;
      return true;
    }
    for (;;) {
      if (buf[this.pos] !== LBRACE) return false;
      if (this.entityCount >= this.maxBatch) return false;
      const start = this.pos;
      const firstKey = this.entityKeyTop;
      if (!this.entity()) return false;
      const at = this.entityCount * 4;
      if (at + 4 > this.entitySpans.length)
        this.entitySpans = scratch.entitySpans = grown(this.entitySpans, at + 4);
      this.entitySpans[at] = start;
      this.entitySpans[at + 1] = this.pos;
      this.entitySpans[at + 2] = firstKey;
      this.entitySpans[at + 3] = this.entityKeyTop;
      this.entityCount++;
      this.skipWhitespace();
      const byte = buf[this.pos];
      this.pos++;
      if (byte === RBRACKET) return true;
      if (byte !== COMMA) return false;
      this.skipWhitespace();
    }
  }

  /** Whether the key just scanned (quotes included, `[start, end)`) spells `name`. */
  isKey(start: number, end: number, name: Buffer): boolean {
    return end - start - 2 === name.length && bytesAt(this.buf, start + 1, name);
  }

  /** The whole body: `{entity_type, entities, entity_key?}` in any order, whitespace allowed around them. */
  body(): boolean {
    const buf = this.buf;
    this.skipWhitespace();
    if (buf[this.pos] !== LBRACE) return false;
    this.pos++;
    this.skipWhitespace();
    for (;;) {
      const keyStart = this.pos;
      if (buf[keyStart] !== QUOTE || !this.string()) return false;
      const keyEnd = this.pos;
      this.skipWhitespace();
      if (buf[this.pos] !== COLON) return false;
      this.pos++;
      this.skipWhitespace();
      if (this.isKey(keyStart, keyEnd, ENTITY_TYPE)) {
        if (this.typeStart !== -1 || buf[this.pos] !== QUOTE) return false;
        this.typeStart = this.pos;
        if (!this.string()) return false;
        this.typeEnd = this.pos;
      } else if (this.isKey(keyStart, keyEnd, ENTITIES)) {
        if (this.sawEntities || buf[this.pos] !== LBRACKET || !this.entities()) return false;
        this.sawEntities = true;
      } else if (this.isKey(keyStart, keyEnd, ENTITY_KEY)) {
        if (this.sawEntityKey) return false;
        this.sawEntityKey = true;
        if (buf[this.pos] === QUOTE) {
          this.keyFieldStart = this.pos;
          if (!this.string()) return false;
          this.keyFieldEnd = this.pos;
        } else if (!this.literal(NULL)) {
          return false;
        }
      } else {
        return false;
      }
      this.skipWhitespace();
      const byte = buf[this.pos];
      this.pos++;
      if (byte === RBRACE) break;
      if (byte !== COMMA) return false;
      this.skipWhitespace();
    }
    this.skipWhitespace();
    return this.pos === buf.length && this.typeStart !== -1 && this.sawEntities;
  }

  /** Index in `entityKeys` of entity `e`'s key `key`, or -1. */
  findKey(e: number, key: KeyBytes): number {
    const buf = this.buf;
    const end = this.entitySpans[e * 4 + 3] as number;
    const size = key.bytes.length;
    for (let k = this.entitySpans[e * 4 + 2] as number; k < end; k += 5) {
      if (this.entityKeys[k + 2] !== key.hash) continue;
      const start = this.entityKeys[k] as number;
      if ((this.entityKeys[k + 1] as number) - start === size && bytesAt(buf, start, key.bytes)) return k;
    }
    return -1;
  }

  /** The id held by the value of entity key `k`, as the slow path's `entityIdOf` reads it; undefined if unusable. */
  idAt(k: number): string | undefined {
    const buf = this.buf;
    const start = this.entityKeys[k + 3] as number;
    const end = this.entityKeys[k + 4] as number;
    const first = buf[start];
    let id: string;
    if (first === QUOTE) {
      if (end - start === 2) return undefined;
      let escaped = false;
      for (let pos = start + 1; pos < end - 1 && !escaped; pos++) escaped = buf[pos] === BACKSLASH;
      id = escaped
        ? (JSON.parse(buf.toString('utf8', start, end)) as string)
        : buf.toString('utf8', start + 1, end - 1);
      if (id.length > MAX_ENTITY_ID_LENGTH) return undefined;
      return id;
    }
    // Accepted numbers are written as String(number) writes them.
    if (first === MINUS || (first !== undefined && first >= ZERO && first <= NINE))
      return buf.toString('latin1', start, end);
    return undefined;
  }

  /**
   * How many declared fields entity `e` has, or -1 unless they pass the type's validator, which
   * checks nothing else (every declared field is optional, other fields are allowed): simple ones
   * by their bytes, the others parsed and given to the validator.
   */
  declaredFieldsFound(e: number, plan: TypePlan): number {
    let parsed: Record<string, unknown> | undefined;
    let found = 0;
    for (const field of plan.declared) {
      const k = this.findKey(e, field);
      if (k === -1) continue;
      found++;
      const start = this.entityKeys[k + 3] as number;
      const end = this.entityKeys[k + 4] as number;
      if (field.check !== undefined) {
        if (!field.check(this.buf, start, end)) return -1;
        continue;
      }
      parsed ??= {};
      parsed[field.name] = JSON.parse(this.buf.toString('utf8', start, end));
    }
    return parsed === undefined || plan.type.uploadValidator.Check(parsed) ? found : -1;
  }

  /** How many keys entity `e` has (the scan declines repeated keys: each is a distinct field). */
  keyCount(e: number): number {
    return ((this.entitySpans[e * 4 + 3] as number) - (this.entitySpans[e * 4 + 2] as number)) / 5;
  }
}

/** Whether `buf` holds `bytes` at `at` (a loop: short keys compare faster in JavaScript than through `Buffer.compare`). */
function bytesAt(buf: Buffer, at: number, bytes: Buffer): boolean {
  for (let i = 0; i < bytes.length; i++) if (buf[at + i] !== bytes[i]) return false;
  return true;
}

/** Whether `buf[start, end)` are all ASCII digits. */
function isDigits(buf: Buffer, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const byte = buf[i] as number;
    if (byte < ZERO || byte > NINE) return false;
  }
  return true;
}

/** Whether `buf` holds the same `size` bytes at `a` and at `b`. */
function sameBytes(buf: Buffer, a: number, b: number, size: number): boolean {
  for (let i = 0; i < size; i++) if (buf[a + i] !== buf[b + i]) return false;
  return true;
}

function isKeptEscape(byte: number | undefined): boolean {
  // \" \\ \b \f \n \r \t: the escapes JSON.stringify writes itself (it writes other control characters as \u00XX).
  return (
    byte === QUOTE ||
    byte === BACKSLASH ||
    byte === 0x62 ||
    byte === 0x66 ||
    byte === 0x6e ||
    byte === 0x72 ||
    byte === 0x74
  );
}

/**
 * Scans an upload body. Returns what to store when storing the entities' own bytes gives exactly
 * what the slow path would store and answer; undefined otherwise (the caller then runs the slow
 * path, which reports any error).
 *
 * @param types the app's entity types by name.
 * @param maxBatch most entities in one call; more is declined (the slow path answers 422).
 */
export function scanUpload(
  body: Buffer,
  types: ReadonlyMap<string, EntityType>,
  maxBatch: number,
): ScannedUpload | undefined {
  if (!isUtf8(body)) return undefined;
  const scan = new Scan(body, maxBatch);
  if (!scan.body()) return undefined;

  // Type names are [a-z0-9_]: any other byte, escapes included, simply finds no type.
  const type = types.get(body.toString('latin1', scan.typeStart + 1, scan.typeEnd - 1));
  if (type === undefined) return undefined;
  const plan = planFor(type);
  if (plan === null) return undefined;
  let entityKey: KeyBytes | undefined;
  let entityKeyKnown = false;
  if (scan.keyFieldStart !== -1) {
    const name = JSON.parse(body.toString('utf8', scan.keyFieldStart, scan.keyFieldEnd)) as string;
    if (name.length === 0) return undefined;
    entityKey = keyBytesOf(name);
    if (entityKey === undefined) return undefined;
    entityKeyKnown =
      name === type.idField || Object.hasOwn(type.fields, name) || Object.hasOwn(type.references, name);
  }

  const ids = new Array<string>(scan.entityCount);
  const values = new Array<Buffer>(scan.entityCount);
  for (let e = 0; e < scan.entityCount; e++) {
    // As EntityIndex.prepare: entity_key, else the id field, else `<type>_id`.
    let idAt: number;
    let hasIdField: boolean;
    if (entityKey !== undefined) {
      idAt = scan.findKey(e, entityKey);
      hasIdField = entityKey.bytes.equals(plan.idField.bytes)
        ? idAt !== -1
        : scan.findKey(e, plan.idField) !== -1;
    } else {
      idAt = scan.findKey(e, plan.idField);
      hasIdField = idAt !== -1;
      if (!hasIdField) idAt = scan.findKey(e, plan.fallbackField);
    }
    if (idAt === -1) return undefined;
    // The id read from another field than the id field: a known field unless counted already.
    const otherIdKeyCounts =
      (entityKey === undefined ? !hasIdField && !plan.fallbackKnown : !entityKeyKnown) &&
      plan.declared.length > 0;
    const id = scan.idAt(idAt);
    if (id === undefined) return undefined;
    if (plan.declared.length > 0) {
      const declared = scan.declaredFieldsFound(e, plan);
      if (declared === -1) return undefined;
      // A field the type does not declare is named to the caller (a typo, mostly): the plain path does it.
      let known = declared + (hasIdField ? 1 : 0) + (otherIdKeyCounts ? 1 : 0);
      for (const key of plan.referenceKeys) if (scan.findKey(e, key) !== -1) known++;
      if (scan.keyCount(e) > known) return undefined;
    }
    const start = scan.entitySpans[e * 4] as number;
    const end = scan.entitySpans[e * 4 + 1] as number;
    ids[e] = id;
    values[e] = hasIdField
      ? body.subarray(start, end)
      : Buffer.concat([
          body.subarray(start, end - 1),
          plan.idFieldInsert,
          body.subarray(scan.entityKeys[idAt + 3] as number, scan.entityKeys[idAt + 4] as number),
          CLOSE_BRACE,
        ]);
  }
  return new ScannedUpload(type, ids, values);
}
