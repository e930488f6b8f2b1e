// The log as group commits with their commit times, and the segment encoding backups store and
// GET /internal/backup/log streams: per record seq u64 BE | commit time ms i64 BE (-1: unknown) |
// type u8 | length u32 BE | payload.
import type { CommitBatch } from '../storage/commit-times.js';
import type { LogRecord, LogStore, TimedBatch } from './ports.js';

export type { TimedBatch } from './ports.js';

export const SEGMENT_RECORD_HEAD = 21;
const RECORD_HEAD = SEGMENT_RECORD_HEAD;
const TWO_32 = 0x1_0000_0000;

/** Copy in pieces of at most this many records, so memory stays bounded for any batch size. */
const MAX_PIECE = 10_000;

/** Cuts a record stream into group commits, given the ascending commit batches covering it. */
export async function* timedBatches(
  records: AsyncIterable<LogRecord[]>,
  bounds: readonly CommitBatch[],
): AsyncGenerator<TimedBatch> {
  let next = 0;
  let time: number | null = null;
  let piece: LogRecord[] = [];
  let pieceTime: number | null = null;
  for await (const recs of records) {
    for (const r of recs) {
      let boundary = false;
      while (next < bounds.length && bounds[next].firstSeq <= r.seq) {
        time = bounds[next++].timeMs;
        boundary = true;
      }
      if ((boundary || piece.length >= MAX_PIECE) && piece.length > 0) {
        yield { timeMs: pieceTime, records: piece };
        piece = [];
      }
      if (piece.length === 0) pieceTime = time;
      piece.push(r);
    }
  }
  if (piece.length > 0) yield { timeMs: pieceTime, records: piece };
}
/** One group commit in segment encoding. */
export function encodeSegmentBatch(records: readonly LogRecord[], timeMs: number | null): Buffer {
  let total = 0;
  for (const r of records) total += RECORD_HEAD + r.payload.length;
  const buf = Buffer.allocUnsafe(total);
  let off = 0;
  for (const r of records) {
    // Two u32 halves each: no BigInt per record on the streaming path. -1 (unknown) is all ones.
    buf.writeUInt32BE(Math.floor(r.seq / TWO_32), off);
    buf.writeUInt32BE(r.seq >>> 0, off + 4);
    buf.writeUInt32BE(timeMs === null ? 0xffffffff : Math.floor(timeMs / TWO_32), off + 8);
    buf.writeUInt32BE(timeMs === null ? 0xffffffff : timeMs >>> 0, off + 12);
    buf[off + 16] = r.type;
    buf.writeUInt32BE(r.payload.length, off + 17);
    buf.set(r.payload, off + RECORD_HEAD);
    off += RECORD_HEAD + r.payload.length;
  }
  return buf;
}

/** The retained log fromSeq..toSeq as group commits with their times. */
export async function* logBatches(
  log: Pick<LogStore, 'commitBatches' | 'readBatches'>,
  fromSeq: number,
  toSeq: number,
): AsyncGenerator<TimedBatch> {
  const bounds: CommitBatch[] = [];
  for await (const b of log.commitBatches(fromSeq, toSeq)) bounds.push(b);
  yield* timedBatches(log.readBatches(fromSeq, toSeq), bounds);
}
