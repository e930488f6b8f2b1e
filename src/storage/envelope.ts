// Record envelope: the value stored under a log key.
//   version u8 (1) | type u8 | CRC32C u32 LE over (seq u64 BE ‖ type ‖ payload) | payload
// The payload is opaque here: storage moves bytes and never reads events.
import { assert } from '../util/assert.js';
import { recordCrc } from './checksum.js';
import { LOG_KEY_BYTES, seqHi, seqLo, writeLogKey } from './keys.js';

export const ENVELOPE_VERSION = 1;
export const ENVELOPE_HEADER_BYTES = 6;

export interface LogRecord {
  readonly seq: number;
  /** Event type tag, u8; its meaning belongs to src/events. */
  readonly type: number;
  readonly payload: Uint8Array;
}

export interface NewRecord {
  readonly type: number;
  readonly payload: Uint8Array;
}

/**
 * Encodes records firstSeq, firstSeq+1, … and hands each key/value to `put`. All keys and
 * values are views into one allocation, so a group commit of thousands of small records costs
 * one allocation and one copy of each payload (LevelDB copies again into its write batch,
 * which we cannot avoid). Returns the bytes handed over.
 */
export function encodeRecords(
  records: readonly NewRecord[],
  firstSeq: number,
  put: (key: Buffer, value: Buffer) => void,
): number {
  let total = 0;
  for (const r of records) {
    assert(Number.isInteger(r.type) && r.type >= 0 && r.type <= 0xff, `record type ${r.type} is not a u8`);
    total += LOG_KEY_BYTES + ENVELOPE_HEADER_BYTES + r.payload.length;
  }
  // allocUnsafeSlow: not from the shared pool, so a small batch does not pin a pool slab
  // inside LevelDB-bound buffers, and nothing is zeroed that we overwrite anyway.
  const arena = Buffer.allocUnsafeSlow(total);
  let off = 0;
  let seq = firstSeq;
  for (const r of records) {
    writeLogKey(arena, off, seq);
    const key = arena.subarray(off, off + LOG_KEY_BYTES);
    off += LOG_KEY_BYTES;
    const valueStart = off;
    arena[off] = ENVELOPE_VERSION;
    arena[off + 1] = r.type;
    arena.writeUInt32LE(recordCrc(seqHi(seq), seqLo(seq), r.type, r.payload), off + 2);
    arena.set(r.payload, off + ENVELOPE_HEADER_BYTES);
    off += ENVELOPE_HEADER_BYTES + r.payload.length;
    put(key, arena.subarray(valueStart, off));
    seq++;
  }
  return total;
}

/** Payload bytes encoded between two returns to the event loop: a few ms with LevelDB's copy. */
const SLICE_BYTES = 4 << 20;

/**
 * encodeRecords in slices of about SLICE_BYTES of payload, returning to the event loop between
 * them: the batch of a large import (tens of MB, copied into the arena and again into LevelDB's
 * write batch) would otherwise hold every other request for 100 ms or more. A batch under
 * SLICE_BYTES is one slice, encoded at once as before.
 */
export async function encodeRecordsSliced(
  records: readonly NewRecord[],
  firstSeq: number,
  put: (key: Buffer, value: Buffer) => void,
): Promise<number> {
  let bytes = 0;
  for (let from = 0; from < records.length; ) {
    let to = from;
    for (let size = 0; to < records.length && size < SLICE_BYTES; to++) size += records[to].payload.length;
    const slice = from === 0 && to === records.length ? records : records.slice(from, to);
    bytes += encodeRecords(slice, firstSeq + from, put);
    from = to;
    if (from < records.length) await new Promise<void>((resolve) => setImmediate(resolve));
  }
  return bytes;
}

/**
 * The record stored at `seq`, or a description of what is wrong with its envelope. Checking the
 * CRC against the expected sequence also proves the value belongs under this key.
 */
export function openEnvelope(seq: number, value: Buffer): LogRecord | string {
  if (value.length < ENVELOPE_HEADER_BYTES) return `envelope truncated to ${value.length} bytes`;
  if (value[0] !== ENVELOPE_VERSION) return `unknown envelope version ${value[0]}`;
  const type = value[1];
  const stored = (value[2] | (value[3] << 8) | (value[4] << 16) | (value[5] << 24)) >>> 0;
  const payload = value.subarray(ENVELOPE_HEADER_BYTES);
  if (recordCrc(seqHi(seq), seqLo(seq), type, payload) !== stored) return 'CRC32C mismatch';
  return { seq, type, payload };
}
