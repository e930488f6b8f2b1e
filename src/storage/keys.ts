// LevelDB key layout. One byte of prefix separates the key spaces; log keys carry the sequence
// as u64 big-endian so LevelDB's bytewise order is sequence order and a range is a seq range.
//   'L' seq(8)   log record
//   'M' name     metadata (format version, Kafka offsets, retention floor)
//   'S'          never stored: the target of the tiny synced delete that flushes LevelDB's WAL
export const LOG_PREFIX = 0x4c; // 'L'
export const META_PREFIX = 0x4d; // 'M'
export const LOG_KEY_BYTES = 9;
export const FLUSH_KEY = Buffer.from('S');

const TWO_32 = 0x1_0000_0000;

/** Highest sequence the key format and JS numbers can both carry. */
export const MAX_SEQ = Number.MAX_SAFE_INTEGER;

export const seqHi = (seq: number): number => Math.floor(seq / TWO_32);
export const seqLo = (seq: number): number => seq >>> 0;

export function writeLogKey(buf: Buffer, offset: number, seq: number): void {
  buf[offset] = LOG_PREFIX;
  buf.writeUInt32BE(seqHi(seq), offset + 1);
  buf.writeUInt32BE(seqLo(seq), offset + 5);
}

export function logKey(seq: number): Buffer {
  const key = Buffer.allocUnsafe(LOG_KEY_BYTES);
  writeLogKey(key, 0, seq);
  return key;
}

/** The sequence in a log key, or undefined if the key is not a well-formed log key. */
export function logKeySeq(key: Uint8Array): number | undefined {
  if (key.length !== LOG_KEY_BYTES || key[0] !== LOG_PREFIX) return undefined;
  const hi = ((key[1] << 24) | (key[2] << 16) | (key[3] << 8) | key[4]) >>> 0;
  const lo = ((key[5] << 24) | (key[6] << 16) | (key[7] << 8) | key[8]) >>> 0;
  const seq = hi * TWO_32 + lo;
  return seq <= MAX_SEQ ? seq : undefined;
}

/** Bounds that cover every log key, whatever its sequence. */
export const LOG_KEY_MIN = logKey(0);
export const LOG_KEY_MAX = Buffer.from([LOG_PREFIX, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);

export function metaKey(name: string): Buffer {
  const key = Buffer.allocUnsafe(1 + Buffer.byteLength(name));
  key[0] = META_PREFIX;
  key.write(name, 1);
  return key;
}

/** Meta names the storage layer owns; append() callers may not write them. */
export const FORMAT_VERSION_META = 'format-version';
export const RELEASED_THROUGH_META = 'log-released-through';
export const RESERVED_META: ReadonlySet<string> = new Set([FORMAT_VERSION_META, RELEASED_THROUGH_META]);

/** Small unsigned integers in meta values: u64 big-endian, same as in keys. */
export function encodeMetaUint(n: number): Buffer {
  const buf = Buffer.allocUnsafe(8);
  buf.writeUInt32BE(seqHi(n), 0);
  buf.writeUInt32BE(seqLo(n), 4);
  return buf;
}

export function decodeMetaUint(buf: Uint8Array, what: string): number {
  if (buf.length !== 8) throw new Error(`meta ${what}: expected 8 bytes, found ${buf.length}`);
  const view = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
  return view.readUInt32BE(0) * TWO_32 + view.readUInt32BE(4);
}
