import { isUtf8 } from 'node:buffer';
import type { EntityType } from '../entities/define-entity.js';
import { MAX_ENTITY_ID_LENGTH } from './entity-index.js';
import { isWhitespace, numberEnd } from './upload-scanner.js';

/**
 * The fast path of `POST /api/v1/entities/get`: the body `{"entity_type": ..., "entity_ids": [...]}`
 * read straight from its bytes. `JSON.parse` would do the same work but internalizes every short
 * string it makes (V8 dedupes them through its string table), and for a thousand ids that lookup
 * is the single largest cost of a get.
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
  let pos = 0;
  const skip = () => {
    while (isWhitespace(body[pos])) pos++;
  };
  /** The end (closing quote) of a string at pos without escapes or control characters, or -1. */
  const stringEnd = () => {
    for (let at = pos + 1; at < body.length; at++) {
      const byte = body[at] as number;
      if (byte === 0x22) return at;
      if (byte === 0x5c || byte < 0x20) return -1;
    }
    return -1;
  };
  let entityType: string | undefined;
  let ids: string[] | undefined;
  skip();
  if (body[pos] !== 0x7b) return undefined;
  pos++;
  for (;;) {
    skip();
    if (body[pos] !== 0x22) return undefined;
    const keyEnd = stringEnd();
    if (keyEnd === -1) return undefined;
    const key = body.toString('latin1', pos + 1, keyEnd);
    pos = keyEnd + 1;
    skip();
    if (body[pos] !== 0x3a) return undefined;
    pos++;
    skip();
    if (key === 'entity_type' && entityType === undefined) {
      if (body[pos] !== 0x22) return undefined;
      const end = stringEnd();
      if (end === -1) return undefined;
      // Type names are [a-z0-9_]: a name spelled any other way is simply unknown here.
      entityType = body.toString('latin1', pos + 1, end);
      if (!types.has(entityType)) return undefined;
      pos = end + 1;
    } else if (key === 'entity_ids' && ids === undefined) {
      if (body[pos] !== 0x5b) return undefined;
      pos++;
      skip();
      ids = [];
      if (body[pos] === 0x5d) pos++;
      else {
        for (;;) {
          if (ids.length === maxBatch) return undefined;
          if (body[pos] === 0x22) {
            const end = stringEnd();
            // Over MAX_ENTITY_ID_LENGTH bytes may still be few enough characters: the schema decides.
            if (end === -1 || end === pos + 1 || end - pos - 1 > MAX_ENTITY_ID_LENGTH) return undefined;
            ids.push(body.toString('utf8', pos + 1, end));
            pos = end + 1;
          } else {
            const end = numberEnd(body, pos);
            if (end === -1) return undefined;
            ids.push(body.toString('latin1', pos, end));
            pos = end;
          }
          skip();
          const byte = body[pos];
          pos++;
          if (byte === 0x5d) break;
          if (byte !== 0x2c) return undefined;
          skip();
        }
      }
    } else {
      return undefined;
    }
    skip();
    const byte = body[pos];
    pos++;
    if (byte === 0x7d) break;
    if (byte !== 0x2c) return undefined;
  }
  skip();
  if (pos !== body.length || entityType === undefined || ids === undefined) return undefined;
  return { entity_type: entityType, entity_ids: ids };
}
