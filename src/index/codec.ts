import { compressFrameSync, decompressFrameSync } from 'lz4-napi';
import type { StoredValue } from '../redis/connection.js';

/** How index values are written. Reads accept both, whatever the setting. */
export type IndexCodec = 'json' | 'lz4';

/** The magic number that opens every LZ4 frame (little-endian 0x184D2204). */
const LZ4_MAGIC = Buffer.from([0x04, 0x22, 0x4d, 0x18]);

/** Encodes an entity's JSON text for storage: as is, or in an LZ4 frame as the predecessor wrote it. */
export function encodeEntity(json: string, codec: IndexCodec): string | Buffer {
  return codec === 'lz4' ? compressFrameSync(Buffer.from(json)) : json;
}

/**
 * Decodes a stored value to its JSON text. An LZ4 frame is recognised by its magic bytes (JSON text
 * cannot start with byte 0x04), so a Redis filled by the predecessor reads without any setting.
 * Throws if a frame is damaged.
 */
export function decodeEntity(value: Buffer): string {
  if (value.length >= 4 && value.subarray(0, 4).equals(LZ4_MAGIC))
    return decompressFrameSync(value).toString('utf8');
  return value.toString('utf8');
}

/** Whether a stored value is present. */
export function isPresent(value: StoredValue): value is Buffer {
  return value !== null;
}
