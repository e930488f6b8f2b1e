// The data directory: its layout, the node's identity, and the exclusive open of its LevelDB.
// LevelDB's LOCK file is the data directory's lock: whoever holds the LevelDB owns the
// directory, so snapshots and the node id are only touched after openLevelDb succeeded.
import { randomUUID } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';
import { writeAll, writeFileAtomic } from './durable-fs.js';
import { DataDirInUseError } from './errors.js';

/** Keys and values are raw bytes everywhere: no encoding layer between us and LevelDB. */
export type LevelDb = ClassicLevel<Buffer, Buffer>;

export const LEVELDB_SUBDIR = 'leveldb';
export const SNAPSHOTS_SUBDIR = 'snapshots';
const ID_FILE = '.id';
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

// LevelDB's default 4 MiB memtable would be flushed by every multi-megabyte import record;
// 32 MiB keeps bulk loads out of level-0 churn and bounds WAL replay at open to about that.
const WRITE_BUFFER_BYTES = 32 * 1024 * 1024;

export async function ensureDataDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
}

/** This node's UUID, created on first use and stable across restarts. Call after locking. */
export async function nodeId(dir: string): Promise<string> {
  const path = join(dir, ID_FILE);
  try {
    const id = (await readFile(path, 'utf8')).trim();
    // An unreadable identity is not regenerated: replicas and Kafka consumers key on it.
    if (!UUID_V4.test(id)) throw new Error(`${path} does not hold a UUIDv4 node id: ${JSON.stringify(id)}`);
    return id;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const id = randomUUID();
  await writeFileAtomic(dir, path, (fh) => writeAll(fh, Buffer.from(`${id}\n`)));
  return id;
}

/**
 * Opens the data directory's LevelDB, exclusively. LevelDB refuses a second open (from this or
 * another process) with LEVEL_LOCKED; that becomes DataDirInUseError naming the directory.
 */
export async function openLevelDb(dataDir: string): Promise<LevelDb> {
  await ensureDataDir(dataDir);
  const db: LevelDb = new ClassicLevel<Buffer, Buffer>(join(dataDir, LEVELDB_SUBDIR), {
    keyEncoding: 'buffer',
    valueEncoding: 'buffer',
    createIfMissing: true,
    errorIfExists: false,
    writeBufferSize: WRITE_BUFFER_BYTES,
  });
  try {
    await db.open();
  } catch (err) {
    if (isLockedError(err)) throw new DataDirInUseError(dataDir);
    throw err;
  }
  return db;
}

function isLockedError(err: unknown): boolean {
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    if ((e as NodeJS.ErrnoException).code === 'LEVEL_LOCKED') return true;
  }
  return false;
}
