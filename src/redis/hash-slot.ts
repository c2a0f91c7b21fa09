/**
 * Redis Cluster's key → hash slot function (`keyHashSlot` in Redis's `cluster.c`): CRC16/XMODEM of
 * the key's UTF-8 bytes, or of its hash tag, modulo 16384. Written out here rather than imported:
 * node-redis keeps its copy internal (vendored from the archived `cluster-key-slot`), and grouping
 * a batch by slot must agree with the server byte for byte, which `test/hash-slot.test.ts` checks
 * against `CLUSTER KEYSLOT` itself.
 */

/** How many hash slots a Redis Cluster has. */
export const HASH_SLOTS = 16384;

const TABLE = (() => {
  const table = new Uint16Array(256);
  for (let byte = 0; byte < 256; byte++) {
    let crc = byte << 8;
    for (let bit = 0; bit < 8; bit++)
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    table[byte] = crc;
  }
  return table;
})();

function step(crc: number, byte: number): number {
  return ((crc << 8) & 0xffff) ^ (TABLE[((crc >> 8) ^ byte) & 0xff] as number);
}

/**
 * CRC16/XMODEM of `text[start, end)` encoded as UTF-8, without allocating: the bytes are produced
 * as they are hashed. An unpaired surrogate counts as U+FFFD, as Node's UTF-8 encoder sends it.
 */
function crc16(text: string, start: number, end: number): number {
  let crc = 0;
  for (let i = start; i < end; i++) {
    let code = text.charCodeAt(i);
    if (code < 0x80) {
      crc = step(crc, code);
      continue;
    }
    if (code >= 0xd800 && code <= 0xdfff) {
      const next = i + 1 < end ? text.charCodeAt(i + 1) : 0;
      if (code <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
        code = 0x10000 + ((code - 0xd800) << 10) + (next - 0xdc00);
        i++;
      } else {
        code = 0xfffd;
      }
    }
    if (code < 0x800) {
      crc = step(crc, 0xc0 | (code >> 6));
    } else if (code < 0x10000) {
      crc = step(crc, 0xe0 | (code >> 12));
      crc = step(crc, 0x80 | ((code >> 6) & 0x3f));
    } else {
      crc = step(crc, 0xf0 | (code >> 18));
      crc = step(crc, 0x80 | ((code >> 12) & 0x3f));
      crc = step(crc, 0x80 | ((code >> 6) & 0x3f));
    }
    crc = step(crc, 0x80 | (code & 0x3f));
  }
  return crc;
}

/**
 * The hash slot of `key`. When the key has a hash tag — a `{` followed later by a `}` with at least
 * one character between — only the tag's content is hashed (the first `{` and the first `}` after
 * it count, as in Redis). Searching the JS string for the braces is the same as searching the UTF-8
 * bytes: `{` and `}` are ASCII and never occur inside a multi-byte sequence.
 */
export function hashSlot(key: string): number {
  const open = key.indexOf('{');
  if (open !== -1) {
    const close = key.indexOf('}', open + 1);
    if (close > open + 1) return crc16(key, open + 1, close) % HASH_SLOTS;
  }
  return crc16(key, 0, key.length) % HASH_SLOTS;
}
