// A read-only check of LevelDB's own write-ahead files (leveldb/NNNNNN.log), run before LevelDB
// opens them. LevelDB replays its WAL at open and silently drops a record whose checksum fails,
// together with the rest of its 32 KiB block: writes that were acknowledged (synced) vanish with
// only a line in leveldb/LOG. This reads the same format (32 KiB blocks of physical records:
// masked CRC32C u32 LE, length u16 LE, type u8, data; types FULL, FIRST, MIDDLE, LAST) and
// reports every damaged range. Damage with a valid record after it means records that followed
// were written and synced after the damaged one, so the damaged one was acknowledged too: lost
// data. Damage with nothing valid after it is the torn tail of a write that never completed
// (or, at worst, the last synced batch: a flipped byte in the very last record cannot be told
// from a torn write).
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32c } from './checksum.js';

const BLOCK = 32 * 1024;
const HEADER = 7;
const FULL = 1;
const FIRST = 2;
const MIDDLE = 3;
const LAST = 4;
const MASK_DELTA = 0xa282ead8;

export interface WalDamage {
  file: string;
  /** Byte offset of the first damaged byte. */
  offset: number;
  /**
   * Bytes LevelDB drops: it skips the rest of the block after a bad record, then any fragment
   * whose start it skipped, up to the next whole record (or the end of the file).
   */
  bytes: number;
  reason: string;
  /** Nothing valid follows: a torn write of an unacknowledged batch. */
  tail: boolean;
}

const unmask = (masked: number): number => {
  const rot = (masked - MASK_DELTA) >>> 0;
  return ((rot >>> 17) | (rot << 15)) >>> 0;
};

/** Why the physical record at `pos` is not valid, or undefined if it is. */
function badRecord(buf: Buffer, pos: number): string | undefined {
  const blockEnd = Math.min(buf.length, pos - (pos % BLOCK) + BLOCK);
  if (blockEnd - pos < HEADER) return 'truncated header';
  const length = buf.readUInt16LE(pos + 4);
  const type = buf[pos + 6];
  if (type === 0 && length === 0) return 'zeroed header';
  if (type < FULL || type > LAST) return `unknown record type ${type}`;
  if (pos + HEADER + length > blockEnd)
    return pos + HEADER + length > buf.length ? 'record cut short by the end of the file' : 'bad record length';
  const crc = crc32c(buf.subarray(pos + HEADER, pos + HEADER + length), crc32c(buf.subarray(pos + 6, pos + 7)));
  if (crc !== unmask(buf.readUInt32LE(pos))) return 'checksum mismatch';
  return undefined;
}

/** The next offset after `from` that holds a valid physical record, or -1. */
function resync(buf: Buffer, from: number): number {
  for (let q = from; q + HEADER <= buf.length; q++) {
    if (BLOCK - (q % BLOCK) < HEADER) {
      q += BLOCK - (q % BLOCK) - 1; // block trailer: no record starts here
      continue;
    }
    const type = buf[q + 6];
    if (type < FULL || type > LAST) continue; // cheap filter before the CRC
    if (badRecord(buf, q) === undefined) return q;
  }
  return -1;
}

/** Where LevelDB resumes after damage at `pos`: the first FULL or FIRST record of a later block. */
function resumeAfter(buf: Buffer, pos: number): number {
  let q = pos - (pos % BLOCK) + BLOCK;
  for (;;) {
    q = resync(buf, q);
    if (q < 0) return buf.length;
    const type = buf[q + 6];
    if (type === FULL || type === FIRST) return q;
    q += HEADER + buf.readUInt16LE(q + 4);
  }
}

/** Every damaged range of one WAL file's bytes, in file order. */
export function scanWal(file: string, buf: Buffer): WalDamage[] {
  const damage: WalDamage[] = [];
  let pos = 0;
  let fragmentStart = -1; // offset of an open FIRST..LAST sequence
  const damaged = (at: number, reason: string, resume: number): void => {
    damage.push({ file, offset: at, bytes: (resume < 0 ? buf.length : resume) - at, reason, tail: resume < 0 });
  };
  while (pos < buf.length) {
    const left = BLOCK - (pos % BLOCK);
    if (left < HEADER) {
      pos += left; // zero-filled block trailer
      continue;
    }
    if (buf.length - pos < HEADER && buf.subarray(pos).every((b) => b === 0)) break; // zero fill at the end
    const bad = badRecord(buf, pos);
    if (bad !== undefined) {
      // Any valid record after the damage was written, and synced, after it: not a torn tail.
      const tail = resync(buf, pos + 1) < 0;
      const resume = tail ? -1 : resumeAfter(buf, pos);
      damaged(fragmentStart >= 0 ? fragmentStart : pos, bad, resume);
      fragmentStart = -1;
      if (resume < 0) break;
      pos = resume;
      continue;
    }
    const type = buf[pos + 6];
    if ((type === FULL || type === FIRST) && fragmentStart >= 0) {
      damaged(fragmentStart, 'record fragments without their end', pos);
      fragmentStart = -1;
    }
    if ((type === MIDDLE || type === LAST) && fragmentStart < 0)
      damaged(pos, 'record fragment without its start', pos + HEADER + buf.readUInt16LE(pos + 4));
    else if (type === FIRST) fragmentStart = pos;
    else if (type === LAST) fragmentStart = -1;
    pos += HEADER + buf.readUInt16LE(pos + 4);
  }
  // A multi-block record still open at the end: its last fragments were never written.
  if (fragmentStart >= 0) damaged(fragmentStart, 'record cut short by the end of the file', -1);
  return damage;
}

/** The names of a LevelDB directory's WAL files (NNNNNN.log; not its text LOG), oldest first. */
export async function walFileNames(levelDbDir: string): Promise<string[]> {
  return (await readdir(levelDbDir))
    .filter((n) => /^\d+\.log$/.test(n))
    .sort((a, b) => Number.parseInt(a, 10) - Number.parseInt(b, 10));
}

/** Scans every WAL file in a LevelDB directory, oldest first. */
export async function scanWalFiles(levelDbDir: string): Promise<WalDamage[]> {
  const names = await walFileNames(levelDbDir);
  const out: WalDamage[] = [];
  for (const name of names) out.push(...scanWal(join(levelDbDir, name), await readFile(join(levelDbDir, name))));
  return out;
}

/** The whole logical records of a file in LevelDB's log format, up to the first damage. */
export function logicalRecords(buf: Buffer): Buffer[] {
  const out: Buffer[] = [];
  let parts: Buffer[] = [];
  for (let pos = 0; pos + HEADER <= buf.length; ) {
    if (BLOCK - (pos % BLOCK) < HEADER) {
      pos += BLOCK - (pos % BLOCK);
      continue;
    }
    if (badRecord(buf, pos) !== undefined) break;
    const length = buf.readUInt16LE(pos + 4);
    const type = buf[pos + 6];
    const data = buf.subarray(pos + HEADER, pos + HEADER + length);
    if (type === FULL) out.push(data);
    else if (type === FIRST) parts = [data];
    else parts.push(data);
    if (type === LAST) out.push(Buffer.concat(parts));
    pos += HEADER + length;
  }
  return out;
}
