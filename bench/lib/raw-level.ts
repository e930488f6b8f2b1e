// The raw substrate: classic-level used directly, with the same key shape ('L' + u64 BE sequence),
// the same options as our log (32 MiB write buffer) and the same chained-batch API. Our figures
// are divided by these, measured in the same run on the same disk.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';
import { closedLoop, type LoadResult } from './load.js';
import { now } from './stats.js';

export type RawDb = ClassicLevel<Buffer, Buffer>;

const LOG_PREFIX = 0x4c;
export const LOG_KEY_MIN = Buffer.from([LOG_PREFIX, 0, 0, 0, 0, 0, 0, 0, 0]);
export const LOG_KEY_MAX = Buffer.from([LOG_PREFIX, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);

export async function openRaw(dir: string, sub = 'leveldb'): Promise<RawDb> {
  const db = new ClassicLevel<Buffer, Buffer>(join(dir, sub), {
    keyEncoding: 'buffer',
    valueEncoding: 'buffer',
    createIfMissing: true,
    writeBufferSize: 32 * 1024 * 1024,
  });
  await db.open();
  return db;
}

export function rawKey(seq: number): Buffer {
  const k = Buffer.allocUnsafe(9);
  k[0] = LOG_PREFIX;
  k.writeUInt32BE(Math.floor(seq / 2 ** 32), 1);
  k.writeUInt32BE(seq >>> 0, 5);
  return k;
}

/**
 * `clients` concurrent writers, each writing synced batches of `recordsPerBatch` records of
 * `valueBytes` each (LevelDB groups concurrent writers itself, as our commit queue does).
 */
export async function rawSyncedWrites(
  db: RawDb,
  clients: number,
  durationMs: number,
  recordsPerBatch: number,
  valueBytes: number,
): Promise<LoadResult> {
  const value = randomBytes(valueBytes);
  let seq = 0;
  return closedLoop(clients, durationMs, async () => {
    const b = db.batch();
    for (let r = 0; r < recordsPerBatch; r++) b.put(rawKey(++seq), value);
    await b.write({ sync: true });
  });
}

/** Writes the given batches one after another, each synced; resolves with the wall ms. */
export async function rawWriteBatches(db: RawDb, batches: { key: Buffer; value: Buffer }[][]): Promise<number> {
  const start = now();
  for (const recs of batches) {
    const b = db.batch();
    for (const r of recs) b.put(r.key, r.value);
    await b.write({ sync: true });
  }
  return now() - start;
}

export interface LogScan {
  records: number;
  bytes: number;
  ms: number;
}

/** Iterates every log key in large native batches (as a tuned replay would); counts key+value bytes. */
export async function rawIterateLog(db: RawDb, onRecord?: (key: Buffer, value: Buffer) => void): Promise<LogScan> {
  const start = now();
  const it = db.iterator({ gte: LOG_KEY_MIN, lte: LOG_KEY_MAX, highWaterMarkBytes: 4 * 1024 * 1024, fillCache: false });
  let records = 0;
  let bytes = 0;
  try {
    for (;;) {
      const entries = await it.nextv(1000);
      if (entries.length === 0) break;
      for (const [k, v] of entries) {
        records++;
        bytes += k.length + v.length;
        onRecord?.(k, v);
      }
    }
  } finally {
    await it.close();
  }
  return { records, bytes, ms: now() - start };
}
