// Offline maintenance commands on a stopped server's data directory.
import type { Logger } from 'pino';
import { EventLog, SnapshotStore } from '../storage/index.js';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, type Config } from '../config/config.js';
import { LEVELDB_SUBDIR, preflightLevelDb } from '../storage/data-dir.js';
import { LevelDbCorruptError } from '../storage/errors.js';
import { scanWalFiles } from '../storage/leveldb-wal.js';
import { withLevelDbCopy } from './read-only-copy.js';

/** Maintenance never creates a data directory: a wrong path is an error, not an empty store. */
export function requireDataDir(dir: string): void {
  if (!existsSync(join(dir, LEVELDB_SUBDIR))) throw new ConfigError(`no bitledger data directory at ${dir}`);
}

/**
 * `bitledger inspect`: what the data directory holds. Read-only: it opens a private copy of the
 * LevelDB (read-only-copy.ts), runs no migration and drops nothing; what a server start would
 * drop or refuse is reported instead.
 */
export async function inspect(cfg: Config, logger: Logger, out: (line: string) => void): Promise<void> {
  requireDataDir(cfg.dataDir);
  await preflightLevelDb(cfg.dataDir, { mustExist: true, acceptDataLoss: true, logger });
  const damage = await scanWalFiles(join(cfg.dataDir, LEVELDB_SUBDIR));
  await withLevelDbCopy(cfg.dataDir, async (copy) => {
    const log = await EventLog.open(copy, { fsync: 'never', logger, readOnly: true, acceptDataLoss: true }).catch(
      (err: unknown) => {
        // Errors name the data directory, not the private copy.
        throw err instanceof LevelDbCorruptError
          ? new LevelDbCorruptError(cfg.dataDir, err.reason.replaceAll(copy, cfg.dataDir))
          : err;
      },
    );
    try {
      out(`data dir:  ${cfg.dataDir}`);
      out(`format:    version ${await log.formatVersion()}`);
      out(
        `log:       sequences ${log.firstSeq}..${log.lastSeq} (${Math.max(0, log.lastSeq - log.firstSeq + 1)} records retained)`,
      );
      out(`snapshots: ${describeSnapshots(await SnapshotStore.listIn(cfg.dataDir))}`);
      for (const d of damage)
        out(
          `damage:    ${d.file} at offset ${d.offset}, ${d.bytes} bytes (${d.reason}; ${d.tail ? 'torn tail, dropped at start' : 'valid records follow: a start refuses'})`,
        );
    } finally {
      await log.close();
    }
  });
}

const describeSnapshots = (seqs: number[]): string => (seqs.length === 0 ? 'none' : seqs.join(', '));

/**
 * `bitledger truncate-log --after N`: the explicit repair that a LogCorruptionError names. Drops
 * records after N for good; only for when losing them is acceptable.
 */
export async function truncateLog(
  cfg: Config,
  after: number,
  logger: Logger,
  out: (line: string) => void,
): Promise<void> {
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
