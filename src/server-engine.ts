// Composition, step 2: the engine over the opened storage — the newest snapshot and the replay
// of the log after it (bootstrap), then the disk reserve and the Engine with the write policy of
// this node's role (a replica and a cluster node refuse local writes).
import { CLUSTER_LOCAL_WRITE_REASON } from './cluster/commands/local-writes.js';
import type { CommitTestHooks } from './config/test-hooks.js';
import { type ReplayProgressListener, bootstrap } from './engine/bootstrap.js';
import { Engine } from './engine/engine.js';
import { replicaReadOnlyReason } from './kafka/index.js';
import type { ServerMetrics } from './metrics/server-metrics.js';
import type { OpenedStorage } from './server-storage.js';
import type { Boot } from './stop-list.js';
import { DiskSpace, keepReserve } from './storage/disk-space.js';
import { systemClock } from './util/clock.js';

export interface EngineOptions {
  /** Awaited after each replayed batch (tests use it to make a replay last). */
  onReplayProgress?: ReplayProgressListener;
  /** The commit queue's test hooks (src/config/test-hooks.ts). */
  commitTestHooks?: CommitTestHooks;
}

export async function openEngine(
  { cfg, logger, onFatal }: Boot,
  storage: OpenedStorage,
  metrics: ServerMetrics,
  role: { cluster: boolean },
  opts: EngineOptions,
): Promise<Engine> {
  const { log, snapshots } = storage;
  const progress: ReplayProgressListener = (done, total) => {
    Object.assign(metrics.replay, { phase: 'replay', done, total });
    return opts.onReplayProgress?.(done, total);
  };
  // A long suffix (a log built or copied without snapshots) leaves snapshots inside the history
  // window as it replays, so a first time-travel read there replays little.
  const checkpoints = {
    everyEvents: cfg.snapshotEveryEvents,
    sinceMs: systemClock.now() - cfg.historyRetention,
    files: snapshots,
  };
  const { holder } = await bootstrap(log, snapshots, logger, Infinity, progress, systemClock, checkpoints);
  metrics.replay.phase = 'done';
  // A replica (--replica-of) applies only what it consumes: local writes are refused.
  // A cluster node writes only what it applies from the cluster's topics: a route that does not
  // go through the cluster is refused instead of writing to this node alone.
  const readOnly =
    cfg.replicaOf !== ''
      ? { readOnlyReason: replicaReadOnlyReason(cfg.replicaOf) }
      : role.cluster
        ? { readOnlyReason: CLUSTER_LOCAL_WRITE_REASON }
        : {};
  await keepReserve(cfg.dataDir, cfg.diskReserveBytes, logger);
  const diskSpace = await DiskSpace.open(cfg.dataDir, cfg.diskReserveBytes);
  return new Engine(
    holder,
    log,
    snapshots,
    {
      snapshotEveryEvents: cfg.snapshotEveryEvents,
      snapshotEveryBytes: cfg.snapshotEveryBytes,
      history: { ms: cfg.historyRetention, bytes: cfg.historyRetentionBytes },
      ...readOnly,
      diskSpace,
      commitQueue: opts.commitTestHooks,
    },
    logger,
    onFatal,
  );
}
