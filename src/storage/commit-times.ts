// Commit times of log batches. One key per group commit, written in the same LevelDB batch as
// its records: 'T' firstSeq(8) → time ms u64 BE | batch bytes u32 BE. A record's commit time is
// that of the batch starting at the greatest T key at or below its sequence; records older than
// the first T key (logs written before format 3) have no known time and are restorable by
// sequence only. One small extra put per batch keeps Set() and import paths as they were.
import type { KvStore } from './kv.js';
import { LOG_KEY_BYTES, seqHi, seqLo } from './keys.js';

export const TIME_PREFIX = 0x54; // 'T'
const VALUE_BYTES = 12;
const TWO_32 = 0x1_0000_0000;
const SCAN_BATCH = 4096;

/** A group commit: records firstSeq.. (up to the next batch's firstSeq - 1) committed at timeMs. */
export interface CommitBatch {
  readonly firstSeq: number;
  readonly timeMs: number;
  readonly bytes: number;
}

export function timeKey(seq: number): Buffer {
  const key = Buffer.allocUnsafe(LOG_KEY_BYTES);
  key[0] = TIME_PREFIX;
  key.writeUInt32BE(seqHi(seq), 1);
  key.writeUInt32BE(seqLo(seq), 5);
  return key;
}

export const TIME_KEY_MIN = timeKey(0);
export const TIME_KEY_MAX = Buffer.from([TIME_PREFIX, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);

export function encodeCommitTime(timeMs: number, bytes: number): Buffer {
  const v = Buffer.allocUnsafe(VALUE_BYTES);
  v.writeUInt32BE(Math.floor(timeMs / TWO_32), 0);
  v.writeUInt32BE(timeMs >>> 0, 4);
  v.writeUInt32BE(Math.min(bytes, 0xffffffff), 8);
  return v;
}

function decode(key: Buffer, value: Buffer): CommitBatch | undefined {
  if (key.length !== LOG_KEY_BYTES || key[0] !== TIME_PREFIX || value.length !== VALUE_BYTES) return undefined;
  return {
    firstSeq: key.readUInt32BE(1) * TWO_32 + key.readUInt32BE(5),
    timeMs: value.readUInt32BE(0) * TWO_32 + value.readUInt32BE(4),
    bytes: value.readUInt32BE(8),
  };
}

/** The batch holding `seq` (the greatest T key ≤ seq), or undefined when its time is unknown. */
export async function batchAt(db: KvStore, seq: number): Promise<CommitBatch | undefined> {
  const [entry] = await db.iterator({ gte: TIME_KEY_MIN, lte: timeKey(seq), reverse: true, limit: 1 }).all();
  return entry === undefined ? undefined : decode(entry[0], entry[1]);
}

/** Batches covering fromSeq..toSeq, ascending: the one holding fromSeq (if known) first. */
export async function* batchesFrom(
  db: KvStore,
  fromSeq: number,
  toSeq: number,
): AsyncGenerator<CommitBatch, void, undefined> {
  const first = await batchAt(db, fromSeq);
  const it = db.iterator({ gte: timeKey(first?.firstSeq ?? fromSeq), lte: timeKey(toSeq), fillCache: false });
  try {
    for (;;) {
      const entries = await it.nextv(SCAN_BATCH);
      if (entries.length === 0) return;
      for (const [k, v] of entries) {
        const b = decode(k, v);
        if (b !== undefined) yield b;
      }
    }
  } finally {
    await it.close();
  }
}

/** Deletes T keys of batches that start after `seq` (a truncated or torn tail). */
export async function clearTimesAfter(db: KvStore, seq: number): Promise<void> {
  await db.clear({ gt: timeKey(seq), lte: TIME_KEY_MAX });
}

/** Deletes T keys no retained record needs: those below the batch holding `firstRetained`. */
export async function clearTimesBelow(db: KvStore, firstRetained: number): Promise<void> {
  const holder = await batchAt(db, firstRetained);
  if (holder !== undefined) await db.clear({ gte: TIME_KEY_MIN, lt: timeKey(holder.firstSeq) });
}
