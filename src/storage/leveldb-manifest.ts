// Which WAL file LevelDB's MANIFEST says holds the writes not yet in a table. LevelDB replays
// every WAL numbered from there on at open, but a missing one is not an error to it: writes
// since the last memtable flush would vanish without a word. Reading the MANIFEST (VersionEdit
// records in the log format) gives the number, and the file must exist. Missing table files
// need no check here: LevelDB refuses to open without them.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { logicalRecords } from './leveldb-wal.js';

// VersionEdit tags (LevelDB db/version_edit.cc).
const COMPARATOR = 1;
const LOG_NUMBER = 2;
const NEXT_FILE = 3;
const LAST_SEQUENCE = 4;
const COMPACT_POINTER = 5;
const DELETED_FILE = 6;
const NEW_FILE = 7;
const PREV_LOG_NUMBER = 9;

class Reader {
  pos = 0;
  constructor(private readonly buf: Buffer) {}
  get done(): boolean {
    return this.pos >= this.buf.length;
  }
  varint(): number {
    let result = 0;
    for (let scale = 1; ; scale *= 128) {
      if (this.pos >= this.buf.length) throw new Error('truncated varint');
      const b = this.buf[this.pos++];
      result += (b & 0x7f) * scale;
      if (b < 0x80) return result;
    }
  }
  slice(): void {
    const length = this.varint(); // read first: `pos += varint()` would add to the old pos
    this.pos += length;
  }
}

/** The WAL number of the newest VersionEdit that names one; undefined if none or unreadable. */
export function manifestLogNumber(manifest: Buffer): number | undefined {
  let log: number | undefined;
  try {
    for (const edit of logicalRecords(manifest)) {
      const r = new Reader(edit);
      while (!r.done) {
        const tag = r.varint();
        if (tag === LOG_NUMBER) log = r.varint();
        else if (tag === NEXT_FILE || tag === LAST_SEQUENCE || tag === PREV_LOG_NUMBER) r.varint();
        else if (tag === COMPARATOR) r.slice();
        else if (tag === COMPACT_POINTER) {
          r.varint(); // level
          r.slice(); // key
        } else if (tag === DELETED_FILE) {
          r.varint(); // level
          r.varint(); // file number
        } else if (tag === NEW_FILE) {
          r.varint(); // level
          r.varint(); // file number
          r.varint(); // file size
          r.slice(); // smallest key
          r.slice(); // largest key
        } else return undefined; // unknown: leave the judgment to LevelDB
      }
    }
  } catch {
    return undefined;
  }
  return log;
}

/** The WAL file the MANIFEST names when it is missing from `levelDbDir`, else undefined. */
export async function missingWal(levelDbDir: string, files: readonly string[]): Promise<string | undefined> {
  const current = (await readFile(join(levelDbDir, 'CURRENT'), 'utf8')).trim();
  if (!/^MANIFEST-\d+$/.test(current) || !files.includes(current)) return undefined; // LevelDB refuses that itself
  const log = manifestLogNumber(await readFile(join(levelDbDir, current)));
  // 0: a database whose first open never finished; it names no WAL yet.
  if (log === undefined || log === 0) return undefined;
  const name = `${String(log).padStart(6, '0')}.log`;
  return files.includes(name) ? undefined : name;
}
