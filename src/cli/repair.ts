// `bitledger repair --data-dir DIR`: LevelDB's own repair (RepairDB) on a stopped server's data
// directory, the way out that LevelDbCorruptError and WalCorruptError name. It rebuilds the
// MANIFEST and CURRENT from the table and WAL files it can read, keeping every readable record
// and dropping damaged ones (LevelDB lists what it dropped in leveldb/LOG). Afterwards a start
// checks the event log as always: a record lost inside the log is refused by sequence, and
// `bitledger truncate-log` is then the explicit choice.
import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';
import type { Logger } from 'pino';
import type { Config } from '../config/config.js';
import { LEVELDB_SUBDIR } from '../storage/data-dir.js';
import { DataDirInUseError } from '../storage/errors.js';
import { inspect, requireDataDir } from './maintenance.js';

export async function repair(cfg: Config, logger: Logger, out: (line: string) => void): Promise<void> {
  requireDataDir(cfg.dataDir);
  const location = join(cfg.dataDir, LEVELDB_SUBDIR);
  await refuseIfRunning(cfg.dataDir, location);
  await ClassicLevel.repair(location);
  out(`repaired LevelDB in ${location} (LevelDB's account of what it kept and dropped: ${join(location, 'LOG')})`);
  await inspect(cfg, logger, out);
}

/**
 * RepairDB does not take LevelDB's lock, so a running server's directory must be refused here.
 * An open without createIfMissing takes the lock before reading anything; it fails harmlessly
 * on a directory without CURRENT, and is closed at once otherwise.
 */
async function refuseIfRunning(dataDir: string, location: string): Promise<void> {
  const db = new ClassicLevel(location, { createIfMissing: false });
  try {
    await db.open();
    await db.close();
  } catch (err) {
    for (let e: unknown = err; e instanceof Error; e = e.cause) {
      if ((e as NodeJS.ErrnoException).code === 'LEVEL_LOCKED') throw new DataDirInUseError(dataDir);
    }
  }
}
