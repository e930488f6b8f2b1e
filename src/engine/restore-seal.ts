// The last step of every restore (data directory, backup, Kafka topic): the new directory is
// replayed through the same bootstrap a server start runs (proving the copy replays), then
// snapshotted at the target so the new server starts without that replay (and at checkpoints on
// the way, inside the history window, so time-travel reads there replay little).
import type { Logger } from 'pino';
import { type ReplayCheckpoints, bootstrap } from './bootstrap.js';
import type { LogStore, SnapshotFiles } from './ports.js';
import { encodeSnapshot } from './snapshot-codec.js';

export async function sealRestore(
  log: LogStore,
  snapshots: SnapshotFiles,
  toSeq: number,
  logger: Logger,
  checkpoints?: Omit<ReplayCheckpoints, 'files'>,
): Promise<void> {
  const cp = checkpoints === undefined ? undefined : { ...checkpoints, files: snapshots };
  const { holder } = await bootstrap(log, snapshots, logger, toSeq, undefined, undefined, cp);
  if (toSeq > 0 && (await snapshots.list())[0] !== toSeq)
    await snapshots.write(toSeq, encodeSnapshot(holder).chunks, await log.commitTime(toSeq));
}
