// Disk space, so that a full disk refuses writes instead of failing them. A write is decided,
// applied in memory, then appended: an append that fails for lack of space leaves memory ahead
// of the log, which only a restart can resolve (the fatal path). So writes are refused before
// they are decided while free space is below a reserve, which leaves room for what LevelDB and
// the engine write without a request asking: a memtable flush and compaction, and a snapshot.
// A reserve file in the data directory keeps room for a restart: LevelDB replays its WAL into a
// table at open, and a disk filled meanwhile by something else would stop it from opening; the
// start releases the file first when space is short, and recreates it once space allows.
import { statfsSync } from 'node:fs';
import { open, readdir, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { SNAPSHOTS_SUBDIR } from './data-dir.js';
import { writeAll } from './durable-fs.js';
import { systemClock } from '../util/clock.js';

const RESERVE_FILE = 'disk-reserve';
// Far from the reserve, free space is re-read once a second; close to it, before every write.
const REFRESH_MS = 1000;
const CLOSE_FACTOR = 8;
const FILL_CHUNK = 1024 * 1024;

/**
 * The least --disk-reserve-bytes a server starts with (0 turns the reserve off). LevelDB writes a
 * compaction's output before it deletes the inputs, so the reserve must hold the largest
 * compaction its 4 MiB memtable leads to: the most space compactions took and gave back while
 * 3,000 imports wrote 226 MiB of log was 22.5 MiB (FLOOR_MEASURED_MIB; bench/README.md, "disk
 * reserve floor"); the floor keeps 9 MiB beyond it for larger levels and what sampling missed. Below it, a background compaction can use the last space;
 * LevelDB then fails every later write (write-stall.ts).
 */
export const DISK_RESERVE_FLOOR = 32 * 1024 * 1024;
const FLOOR_MEASURED_MIB = 23;

/** Refuses a reserve below the floor (a ConfigError-worthy message), or undefined when it is fine. */
export function reserveBelowFloor(reserveBytes: number, floor = DISK_RESERVE_FLOOR): string | undefined {
  if (reserveBytes === 0 || reserveBytes >= floor) return undefined;
  return (
    `--disk-reserve-bytes ${reserveBytes} is below ${floor} (${mib(floor)}): LevelDB's compactions need up to about ` +
    `${FLOOR_MEASURED_MIB} MiB of free space while they run, and one that runs out stops every later write; ` +
    'give at least the floor, or 0 to turn the reserve off'
  );
}

export function freeBytes(dir: string): number {
  const s = statfsSync(dir);
  return s.bavail * s.bsize;
}

const mib = (n: number): string => `${(n / 1024 / 1024).toFixed(1)} MiB`;

export class DiskSpace {
  private free = Number.POSITIVE_INFINITY;
  private checkedAt = Number.NEGATIVE_INFINITY;

  private constructor(
    private readonly dir: string,
    readonly reserveBytes: number,
    private readonly snapshotBytesAtStart: number,
  ) {}

  /** `reserveBytes` of room, plus room for a snapshot as large as the largest one on disk. */
  static async open(dataDir: string, reserveBytes: number): Promise<DiskSpace> {
    const dir = join(dataDir, SNAPSHOTS_SUBDIR);
    let largest = 0;
    for (const name of await readdir(dir).catch(() => [] as string[])) {
      if (name.endsWith('.snap')) largest = Math.max(largest, (await stat(join(dir, name))).size);
    }
    return new DiskSpace(dataDir, reserveBytes, largest);
  }

  /**
   * Why a write must be refused now (a one-line message), or undefined if there is room.
   * `snapshotBytes`: the size of the last snapshot written since the start, if any.
   */
  shortfall(snapshotBytes = 0): string | undefined {
    if (this.reserveBytes <= 0) return undefined;
    // A snapshot that runs out of space only fails (and is retried), but meanwhile a log append
    // could fail too, which is fatal: so the next snapshot's room is kept as well.
    const needed = this.reserveBytes + Math.max(snapshotBytes, this.snapshotBytesAtStart);
    const now = systemClock.now();
    if (now - this.checkedAt >= REFRESH_MS || this.free < CLOSE_FACTOR * needed) {
      this.free = freeBytes(this.dir);
      this.checkedAt = now;
    }
    if (this.free >= needed) return undefined;
    return (
      `disk full: ${mib(this.free)} free for ${this.dir}, below the ${mib(needed)} kept for ` +
      `LevelDB compaction and a snapshot (--disk-reserve-bytes plus the snapshot size); writes resume once space is freed, reads go on`
    );
  }
}

/** Size of the reserve file for a given write reserve: room for LevelDB to open and replay. */
export const reserveFileBytes = (reserveBytes: number): number => Math.floor(reserveBytes / 2);

/** Before LevelDB opens: gives the reserve file's space back when free space is short. */
export async function releaseReserveIfShort(dataDir: string, reserveBytes: number, logger: Logger): Promise<void> {
  const path = join(dataDir, RESERVE_FILE);
  const size = await stat(path).then(
    (s) => s.size,
    () => -1,
  );
  if (size < 0 || freeBytes(dataDir) >= reserveBytes) return;
  await unlink(path);
  logger.warn(
    { file: path, bytes: size },
    `disk nearly full: released the ${mib(size)} reserve file so that LevelDB can open; writes are refused until space is freed`,
  );
}

/** After startup: (re)creates the reserve file when there is room for it beside the reserve. */
export async function keepReserve(dataDir: string, reserveBytes: number, logger: Logger): Promise<void> {
  const size = reserveFileBytes(reserveBytes);
  const path = join(dataDir, RESERVE_FILE);
  if (size <= 0) return;
  const have = await stat(path).then(
    (s) => s.size,
    () => 0,
  );
  if (have >= size) return;
  if (freeBytes(dataDir) < reserveBytes + size - have) {
    logger.warn(
      { file: path, bytes: size },
      `disk nearly full: running without the ${mib(size)} reserve file; it is recreated at a start with room for it`,
    );
    return;
  }
  const fh = await open(path, 'a');
  try {
    const zeros = Buffer.alloc(FILL_CHUNK);
    // Written, not truncated to size: a sparse file would take no space. File systems allocate
    // (or reserve, with delayed allocation) blocks at write time, so no fsync is needed.
    for (let at = have; at < size; at += FILL_CHUNK)
      await writeAll(fh, zeros.subarray(0, Math.min(FILL_CHUNK, size - at)), at);
  } catch (err) {
    await fh.close();
    await unlink(path).catch(() => undefined);
    logger.warn({ file: path, err: String(err) }, 'could not create the disk reserve file; running without it');
    return;
  }
  await fh.close();
}
