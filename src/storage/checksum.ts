// CRC32C (Castagnoli) for record envelopes and snapshot bodies. A native call costs about as
// much as hashing ~60 bytes in JS, and most log records are a few dozen bytes, so short inputs
// are hashed here with a table and long ones go to @node-rs/crc32. Both produce the standard
// CRC32C, and both chain: crc32c(b, crc32c(a)) === crc32c(a ‖ b).
import { crc32c as nativeCrc32c } from '@node-rs/crc32';

const POLY = 0x82f63b78; // reflected Castagnoli polynomial
const NATIVE_MIN_BYTES = 64;

const TABLE = new Int32Array(256);
for (let i = 0; i < 256; i++) {
  let c = i;
  for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ POLY : c >>> 1;
  TABLE[i] = c;
}

/** Continue `crc` (a finished CRC32C, 0 to start) over `buf`. */
export function crc32c(buf: Uint8Array, crc = 0): number {
  if (buf.length >= NATIVE_MIN_BYTES) return nativeCrc32c(buf, crc);
  let c = ~crc;
  for (let i = 0; i < buf.length; i++) c = TABLE[(c ^ buf[i]) & 0xff] ^ (c >>> 8);
  return ~c >>> 0;
}

/**
 * CRC32C of (seq as u64 big-endian ‖ type ‖ payload) without building that buffer: the
 * sequence is inside the checksum so a record moved to another key is detected.
 */
export function recordCrc(seqHi: number, seqLo: number, type: number, payload: Uint8Array): number {
  let c = ~0;
  c = TABLE[(c ^ (seqHi >>> 24)) & 0xff] ^ (c >>> 8);
  c = TABLE[(c ^ (seqHi >>> 16)) & 0xff] ^ (c >>> 8);
  c = TABLE[(c ^ (seqHi >>> 8)) & 0xff] ^ (c >>> 8);
  c = TABLE[(c ^ seqHi) & 0xff] ^ (c >>> 8);
  c = TABLE[(c ^ (seqLo >>> 24)) & 0xff] ^ (c >>> 8);
  c = TABLE[(c ^ (seqLo >>> 16)) & 0xff] ^ (c >>> 8);
  c = TABLE[(c ^ (seqLo >>> 8)) & 0xff] ^ (c >>> 8);
  c = TABLE[(c ^ seqLo) & 0xff] ^ (c >>> 8);
  c = TABLE[(c ^ type) & 0xff] ^ (c >>> 8);
  return crc32c(payload, ~c >>> 0);
}
