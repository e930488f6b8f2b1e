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
    const dropped = await log.truncateAfter(after);
    out(`dropped ${dropped} records after sequence ${after}`);
  } finally {
    await log.close();
  }
}
