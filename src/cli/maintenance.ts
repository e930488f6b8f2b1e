// Offline maintenance commands on a stopped server's data directory.
import type { Logger } from 'pino';
import { EventLog, SnapshotStore } from '../storage/index.js';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, type Config } from '../config/config.js';
import { LEVELDB_SUBDIR } from '../storage/data-dir.js';

/** Maintenance never creates a data directory: a wrong path is an error, not an empty store. */
function requireDataDir(dir: string): void {
  if (!existsSync(join(dir, LEVELDB_SUBDIR))) throw new ConfigError(`no bitledger data directory at ${dir}`);
}

/** `bitledger inspect`: what the data directory holds. */
export async function inspect(cfg: Config, logger: Logger, out: (line: string) => void): Promise<void> {
  requireDataDir(cfg.dataDir);
  const log = await EventLog.open(cfg.dataDir, { fsync: 'always', logger });
  try {
    const snaps = await (await SnapshotStore.open(cfg.dataDir, logger)).list();
    out(`data dir:  ${cfg.dataDir}`);
    out(`log:       sequences ${log.firstSeq}..${log.lastSeq} (${Math.max(0, log.lastSeq - log.firstSeq + 1)} records retained)`);
    out(`snapshots: ${snaps.length === 0 ? 'none' : snaps.join(', ')}`);
  } finally {
    await log.close();
  }
}

/**
 * `bitledger truncate-log --after N`: the explicit repair that a LogCorruptionError names. Drops
 * records after N for good; only for when losing them is acceptable.
 */
export async function truncateLog(cfg: Config, after: number, logger: Logger, out: (line: string) => void): Promise<void> {
  requireDataDir(cfg.dataDir);
  const log = await EventLog.open(cfg.dataDir, { fsync: 'always', logger });
  try {
    // Below the newest snapshot the directory would refuse to start; below the retained log there is nothing to cut to.
    const [newest] = await (await SnapshotStore.open(cfg.dataDir, logger)).list();
    if (after < log.firstSeq - 1) {
      throw new ConfigError(
        `truncate-log: sequence ${after} is below the retained log (it holds ${log.firstSeq}..${log.lastSeq}); ` +
          `to go back that far, restore from a backup that holds it: bitledger restore --from BACKUP --data-dir NEW --to-seq ${after}`,
      );
    }
    if (newest !== undefined && after < newest) {
      throw new ConfigError(
        `truncate-log: sequence ${after} is below the newest snapshot (${newest}), so the directory could not start afterwards; ` +
          `to return to sequence ${after}, restore it into a new directory: bitledger restore --from ${cfg.dataDir} --data-dir NEW --to-seq ${after}`,
      );
    }
    const dropped = await log.truncateAfter(after);
    out(`dropped ${dropped} records after sequence ${after}`);
  } finally {
    await log.close();
  }
}
