// The data directory: its layout, the node's identity, and the exclusive open of its LevelDB.
// LevelDB's LOCK file is the data directory's lock: whoever holds the LevelDB owns the
// directory, so snapshots and the node id are only touched after openLevelDb succeeded.
import { randomUUID } from 'node:crypto';
import { mkdir, readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';
import type { Logger } from 'pino';
import { writeAll, writeFileAtomic } from './durable-fs.js';
import { DataDirInUseError, DiskFullError, LevelDbCorruptError, WalCorruptError } from './errors.js';
import { missingWal } from './leveldb-manifest.js';
import { scanWalFiles } from './leveldb-wal.js';

/** Keys and values are raw bytes everywhere: no encoding layer between us and LevelDB. */
export type LevelDb = ClassicLevel<Buffer, Buffer>;

export const LEVELDB_SUBDIR = 'leveldb';
export const SNAPSHOTS_SUBDIR = 'snapshots';
const ID_FILE = '.id';
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

// LevelDB's default 4 MiB memtable. It is resident memory holding bytes that are already in the
// log and in the bitmaps: 32 MiB cost up to 0.5 B/bit at 64M bits (resident after import 2.92
// B/bit with it, 2.77 without, bench/scale.ts), while bulk-import speed did not move beyond noise
// (19.6M vs 18.2M bits/s there, bench/import.ts, measured before and after).
const WRITE_BUFFER_BYTES = 4 * 1024 * 1024;

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

export interface OpenLevelDbOptions {
  /** Told about torn WAL tails (dropped at open) and about damage accepted by acceptDataLoss. */
  logger?: Logger;
  /** Open even though LevelDB's WAL has damage followed by valid records (operator's choice). */
  acceptDataLoss?: boolean;
  /** Refuse rather than create a LevelDB where there is none (maintenance commands). */
  mustExist?: boolean;
}

// Files that only an opened LevelDB writes: their presence means the database existed.
const LEVELDB_DATA_FILE = /^(\d+\.(log|ldb|sst)|MANIFEST-\d+)$/;

/**
 * Opens the data directory's LevelDB, exclusively. LevelDB refuses a second open (from this or
 * another process) with LEVEL_LOCKED; that becomes DataDirInUseError naming the directory.
 * A database is created only where none ever existed: a LevelDB that lost CURRENT would
 * otherwise be replaced by an empty one, which deletes the old table files. Before LevelDB
 * replays its WAL, the WAL is checked (leveldb-wal.ts) so that replay cannot drop acknowledged
 * writes silently. Any failure to open is one line naming the cause and the repair command.
 */
export async function openLevelDb(dataDir: string, opts: OpenLevelDbOptions = {}): Promise<LevelDb> {
  const exists = await preflightLevelDb(dataDir, opts);
  if (!exists) await ensureDataDir(dataDir);
  const db: LevelDb = new ClassicLevel<Buffer, Buffer>(join(dataDir, LEVELDB_SUBDIR), {
    keyEncoding: 'buffer',
    valueEncoding: 'buffer',
    createIfMissing: !exists,
    errorIfExists: false,
    writeBufferSize: WRITE_BUFFER_BYTES,
  });
  try {
    await db.open();
  } catch (err) {
    if (isLockedError(err)) throw new DataDirInUseError(dataDir);
    const cause = rootCause(err);
    // Not damage: LevelDB needs room to replay its WAL into a table at open.
    if (/No space left|ENOSPC/i.test(cause)) throw new DiskFullError(dataDir, cause);
    throw new LevelDbCorruptError(dataDir, cause);
  }
  return db;
}

/**
 * The checks made before LevelDB touches anything, reading only: whether a database exists,
 * whether it has CURRENT, and whether its WAL lost acknowledged records. Returns whether a
 * database exists (false: a brand-new directory, which may be created).
 */
export async function preflightLevelDb(dataDir: string, opts: OpenLevelDbOptions = {}): Promise<boolean> {
  const location = join(dataDir, LEVELDB_SUBDIR);
  const files = await readdir(location).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  });
  const exists = files !== undefined && files.some((f) => LEVELDB_DATA_FILE.test(f));
  if (!exists && opts.mustExist === true)
    throw new LevelDbCorruptError(dataDir, `${location} holds no LevelDB database`);
  if (exists) await checkBeforeOpen(dataDir, files, opts);
  return exists;
}

async function checkBeforeOpen(dataDir: string, files: string[], opts: OpenLevelDbOptions): Promise<void> {
  if (!files.includes('CURRENT'))
    throw new LevelDbCorruptError(dataDir, `${join(dataDir, LEVELDB_SUBDIR, 'CURRENT')} is missing`);
  const lostWal = await missingWal(join(dataDir, LEVELDB_SUBDIR), files);
  if (lostWal !== undefined && opts.acceptDataLoss !== true) {
    throw new LevelDbCorruptError(
      dataDir,
      `the write-ahead file ${join(dataDir, LEVELDB_SUBDIR, lostWal)} named by the MANIFEST is missing, with every write since the last table flush`,
    );
  }
  if (lostWal !== undefined)
    opts.logger?.warn(
      { file: lostWal },
      `LevelDB WAL ${lostWal} is missing: accepting the loss of the writes it held, as --accept-data-loss asks`,
    );
  for (const d of await scanWalFiles(join(dataDir, LEVELDB_SUBDIR))) {
    const where = { file: d.file, offset: d.offset, bytes: d.bytes, reason: d.reason };
    if (d.tail) {
      opts.logger?.warn(
        where,
        `LevelDB WAL ${d.file}: dropping a torn tail of ${d.bytes} bytes at offset ${d.offset} (${d.reason}): a write that never completed`,
      );
    } else if (opts.acceptDataLoss === true) {
      opts.logger?.warn(
        where,
        `LevelDB WAL ${d.file}: accepting the loss of ${d.bytes} bytes at offset ${d.offset} (${d.reason}), as --accept-data-loss asks`,
      );
    } else {
      throw new WalCorruptError(dataDir, d);
    }
  }
}

/** The innermost message of a LevelDB error chain (e.g. "Corruption: …"), on one line. */
function rootCause(err: unknown): string {
  let e: unknown = err;
  while (e instanceof Error && e.cause instanceof Error) e = e.cause;
  return String(e instanceof Error ? e.message : e).replace(/\s+/g, ' ');
}

function isLockedError(err: unknown): boolean {
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    if ((e as NodeJS.ErrnoException).code === 'LEVEL_LOCKED') return true;
  }
  return false;
}
