// What a stopped server's data directory holds: exact log record bytes (key + envelope + payload,
// read back from LevelDB), attributed to (index, field) by decoding each event with the server's
// own codec, and the directory's size on disk.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { decodeEvent } from '../../src/events/codec.js';
import { openRaw, rawIterateLog } from './raw-level.js';

/** Envelope: version u8 | type u8 | CRC32C u32 | payload (src/storage/envelope.ts). */
const ENVELOPE_HEADER = 6;

export interface LogRecordBytes {
  key: Buffer;
  value: Buffer;
}

export interface LogContents {
  records: number;
  bytes: number;
  /** Bytes by "index/field" ("index/" for index-level events, "/" for the rest). */
  byTarget: Map<string, number>;
  /** Records of `keepIndex`, in log order (to replay them against raw LevelDB). */
  kept: LogRecordBytes[];
}

export async function readLog(dataDir: string, keepIndex?: string): Promise<LogContents> {
  const db = await openRaw(dataDir);
  const byTarget = new Map<string, number>();
  const kept: LogRecordBytes[] = [];
  try {
    const scan = await rawIterateLog(db, (key, value) => {
      const e = decodeEvent(value[1], value.subarray(ENVELOPE_HEADER));
      const index = 'index' in e ? e.index : '';
      const target = `${index}/${'field' in e ? e.field : ''}`;
      byTarget.set(target, (byTarget.get(target) ?? 0) + key.length + value.length);
      if (keepIndex !== undefined && index === keepIndex) kept.push({ key, value });
    });
    return { records: scan.records, bytes: scan.bytes, byTarget, kept };
  } finally {
    await db.close();
  }
}

/** Sum of byTarget entries of one index. */
export function indexBytes(log: LogContents, index: string): number {
  let n = 0;
  for (const [t, b] of log.byTarget) if (t.startsWith(`${index}/`)) n += b;
  return n;
}

export function dirBytes(dir: string): number {
  let total = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    total += e.isDirectory() ? dirBytes(p) : statSync(p).size;
  }
  return total;
}
