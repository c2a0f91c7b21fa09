import { isAscii, isUtf8 } from 'node:buffer';
import type { EntityType } from '../entities/define-entity.js';
import { MAX_ENTITY_ID_LENGTH } from '../entity-index/entity-index.js';
import { isWhitespace, numberEnd } from './upload-scanner.js';

/**
 * The fast path of `POST /api/v1/entities/get`: the body `{"entity_type": ..., "entity_ids": [...]}`
 * read straight from its bytes. `JSON.parse` would do the same work but internalizes every short
 * string it makes (V8 dedupes them through its string table), and for a thousand ids that lookup
 * is the single largest cost of a get (DR-002).
 *
 * Returns exactly the object `JSON.parse` would, for the bodies it accepts: both members once and
 * nothing else, a known type, at most `maxBatch` ids that the route's schema accepts as they are
 * (strings of 1 to MAX_ENTITY_ID_LENGTH characters without escapes or control characters, numbers
 * as `String(number)` writes them, given as that string: what the route turns ids into anyway).
 * Anything else: undefined, and the body is parsed and validated as usual, errors included.
 */
export function scanIdList(
  body: Buffer,
  types: ReadonlyMap<string, EntityType>,
  maxBatch: number,
): { entity_type: string; entity_ids: string[] } | undefined {
  if (!isUtf8(body)) return undefined;
  // An ASCII body is decoded once, and each id is a slice of that text (character and byte
  // positions agree): far cheaper than decoding a thousand ids one by one.
  const text = isAscii(body) ? body.toString('latin1') : undefined;
  let entityType: string | undefined;
  let ids: string[] | undefined;
  let pos = skipWhitespace(body, 0);
  if (body[pos] !== LBRACE) return undefined;
  pos++;
  for (;;) {
    pos = skipWhitespace(body, pos);
    if (body[pos] !== QUOTE) return undefined;
    const keyEnd = plainStringEnd(body, pos);
    if (keyEnd === -1) return undefined;
    const key = body.toString('latin1', pos + 1, keyEnd);
    pos = skipWhitespace(body, keyEnd + 1);
    if (body[pos] !== COLON) return undefined;
    pos = skipWhitespace(body, pos + 1);
    if (key === 'entity_type' && entityType === undefined) {
      if (body[pos] !== QUOTE) return undefined;
      const end = plainStringEnd(body, pos);
      if (end === -1) return undefined;
      // Type names are [a-z0-9_]: a name spelled any other way is simply unknown here.
      entityType = body.toString('latin1', pos + 1, end);
      if (!types.has(entityType)) return undefined;
      pos = end + 1;
    } else if (key === 'entity_ids' && ids === undefined) {
      if (body[pos] !== LBRACKET) return undefined;
      pos = skipWhitespace(body, pos + 1);
      ids = [];
      if (body[pos] === RBRACKET) pos++;
      else {
        for (;;) {
          if (ids.length === maxBatch) return undefined;
          let start: number;
          let end: number;
          if (body[pos] === QUOTE) {
            start = pos + 1;
            end = plainStringEnd(body, pos);
            // Over MAX_ENTITY_ID_LENGTH bytes may still be few enough characters: the schema decides.
            if (end === -1 || end === start || end - start > MAX_ENTITY_ID_LENGTH) return undefined;
            pos = end + 1;
          } else {
            start = pos;
            end = numberEnd(body, pos);
            if (end === -1) return undefined;
            pos = end;
          }
          ids.push(text === undefined ? body.toString('utf8', start, end) : text.slice(start, end));
          pos = skipWhitespace(body, pos);
          const byte = body[pos];
          pos++;
          if (byte === RBRACKET) break;
          if (byte !== COMMA) return undefined;
          pos = skipWhitespace(body, pos);
        }
      }
    } else {
      return undefined;
    }
    pos = skipWhitespace(body, pos);
    const byte = body[pos];
    pos++;
    if (byte === RBRACE) break;
    if (byte !== COMMA) return undefined;
  }
  pos = skipWhitespace(body, pos);
  if (pos !== body.length || entityType === undefined || ids === undefined) return undefined;
  return { entity_type: entityType, entity_ids: ids };
}

const QUOTE = 0x22;
const COMMA = 0x2c;
const COLON = 0x3a;
const LBRACE = 0x7b;
const RBRACE = 0x7d;
const LBRACKET = 0x5b;
const RBRACKET = 0x5d;

function skipWhitespace(body: Buffer, from: number): number {
  let pos = from;
  while (isWhitespace(body[pos])) pos++;
  return pos;
}

/** The closing quote of the string at `pos` if it has no escape or control character, else -1. */
function plainStringEnd(body: Buffer, pos: number): number {
  for (let at = pos + 1; at < body.length; at++) {
    const byte = body[at] as number;
    if (byte === QUOTE) return at;
    if (byte === 0x5c || byte < 0x20) return -1;
  }
  return -1;
}
