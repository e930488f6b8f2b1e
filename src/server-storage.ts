// Composition, step 1: the data directory. Its disk reserve is given back if the disk is short,
// and the log is opened first: its LevelDB handle is the directory's lock, taken before anything
// else writes. Closing the log is the last stop.
import { releaseReserveIfShort } from './storage/disk-space.js';
import { EventLog, SnapshotStore, ensureDataDir, nodeId } from './storage/index.js';
import type { Boot } from './stop-list.js';

export interface OpenedStorage {
  log: EventLog;
  snapshots: SnapshotStore;
  /** This node's id, kept in the data directory. */
  id: string;
}

export async function openStorage({ cfg, logger, stops }: Boot): Promise<OpenedStorage> {
  await ensureDataDir(cfg.dataDir);
  await releaseReserveIfShort(cfg.dataDir, cfg.diskReserveBytes, logger);
  const log = await EventLog.open(cfg.dataDir, {
    fsync: cfg.fsync,
    fsyncIntervalMs: cfg.fsyncIntervalMs,
    logger,
    acceptDataLoss: cfg.acceptDataLoss,
  });
  stops.add('event log', () => log.close());
  const id = await nodeId(cfg.dataDir);
  const snapshots = await SnapshotStore.open(cfg.dataDir, logger);
  return { log, snapshots, id };
}
