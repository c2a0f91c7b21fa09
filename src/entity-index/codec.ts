import { compressFrameSync, decompressFrameSync } from 'lz4-napi';

/** How index values are written. Reads accept both, whatever the setting. */
export type IndexCodec = 'json' | 'lz4';

/** Whether a stored value is an LZ4 frame: its magic number 0x184D2204, little-endian. */
function isLz4Frame(value: Buffer): boolean {
  return (
    value.length >= 4 && value[0] === 0x04 && value[1] === 0x22 && value[2] === 0x4d && value[3] === 0x18
  );
}

/** Encodes an entity's JSON text for storage: as is, or in an LZ4 frame as the predecessor wrote it. */
export function encodeEntity(json: string, codec: IndexCodec): string | Buffer {
  return codec === 'lz4' ? compressFrameSync(Buffer.from(json)) : json;
}

/** {@link encodeEntity} for JSON already held as UTF-8 bytes (the upload fast path): stored as they are, or in an LZ4 frame. */
export function encodeEntityBytes(json: Buffer, codec: IndexCodec): Buffer {
  return codec === 'lz4' ? compressFrameSync(json) : json;
}

/**
 * Decodes a stored value to its JSON as UTF-8 bytes. An LZ4 frame is recognised by its magic
 * bytes (JSON text cannot start with byte 0x04), so a Redis filled by the predecessor reads
 * without any setting. Throws if a frame is damaged.
 */
export function decodeEntityBytes(value: Buffer): Buffer {
  return isLz4Frame(value) ? decompressFrameSync(value) : value;
}
