// Opening the log finds where it really ends. LevelDB already discards torn writes of its own
// WAL, so a bad record here means damage that slipped past it; at the very end of the log that
// is the signature of a write that never completed (nothing after it was acknowledged), so it is
// dropped. Damage with a valid record after it is not a torn tail: it is left for read(), which
// refuses it, because the engine replays that range and must not skip committed events.
import type { Logger } from 'pino';
import type { KvStore } from './kv.js';
import { openEnvelope } from './envelope.js';
import { LOG_KEY_MAX, logKey, logKeySeq } from './keys.js';

const SCAN_BATCH = 64;
/** Deletes are written in synced batches of this many keys, newest first. */
export const DELETE_BATCH = 10_000;

/**
 * Returns the sequence of the last valid record above `floor` (or `floor` if none) after
 * deleting, synced, every bad record that follows it (only reporting them when `readOnly`).
 */
export async function recoverTail(db: KvStore, floor: number, logger: Logger, readOnly = false): Promise<number> {
  const bad: Buffer[] = [];
  let lastGood = floor;
  const it = db.iterator({ gt: logKey(floor), lte: LOG_KEY_MAX, reverse: true, fillCache: false });
  try {
    scan: for (;;) {
      const entries = await it.nextv(SCAN_BATCH);
      if (entries.length === 0) break;
      for (const [key, value] of entries) {
        const seq = logKeySeq(key);
        if (seq !== undefined && typeof openEnvelope(seq, value) !== 'string') {
          lastGood = seq;
          break scan;
        }
        bad.push(key);
      }
    }
  } finally {
    await it.close();
  }
  if (bad.length > 0) {
    if (!readOnly) await deleteKeys(db, bad);
    logger.warn(
      {
        firstDroppedSeq: describeKey(bad[bad.length - 1]),
        lastDroppedSeq: describeKey(bad[0]),
        dropped: bad.length,
        lastSeq: lastGood,
      },
      `event log: ${readOnly ? 'a start will drop' : 'dropped'} a torn tail of ${bad.length} record(s) after sequence ${lastGood}`,
    );
  }
  return lastGood;
}

/** Deletes `keys` (given newest first) in synced batches, so the log stays a prefix throughout. */
export async function deleteKeys(db: KvStore, keys: readonly Buffer[]): Promise<void> {
  for (let i = 0; i < keys.length; i += DELETE_BATCH) {
    const batch = db.batch();
    for (const key of keys.slice(i, i + DELETE_BATCH)) batch.del(key);
    await batch.write({ sync: true });
  }
}

function describeKey(key: Buffer): number | string {
  return logKeySeq(key) ?? `malformed key 0x${key.toString('hex')}`;
}
