// Where a restore reads from: a data directory that is not in use (its LevelDB log and snapshot
// files) or a backup directory (src/cli/backup-format.ts). Both answer the same questions:
// what history they hold, a snapshot's body, and the log as group commits with their times.
import type { Logger } from 'pino';
import { DEFAULTS } from '../config/config.js';
import { readHistory, type History } from '../engine/history.js';
import type { LogStore } from '../engine/ports.js';
import { EventLog, SnapshotStore } from '../storage/index.js';
import { logBatches, type TimedBatch } from '../engine/log-export.js';

export type { TimedBatch } from '../engine/log-export.js';

/**
 * Snapshots the seal leaves inside a default history window (a server started on the directory
 * keeps what its own --history-retention holds): time-travel reads there replay little.
 */
export function restoreCheckpoints(): { everyEvents: number; sinceMs: number } {
  return { everyEvents: DEFAULTS.snapshotEveryEvents, sinceMs: Date.now() - DEFAULTS.historyRetention };
}

export interface RestoreSource {
  readonly describe: string;
  readonly history: History;
  /** For resolveTarget: the log's first sequence, commit time and time→sequence lookup. */
  readonly log: Pick<LogStore, 'firstSeq' | 'commitTime' | 'seqAtTime'>;
  readSnapshot(seq: number): Promise<{ body: Uint8Array; timeMs: number | undefined }>;
  batches(fromSeq: number, toSeq: number): AsyncIterable<TimedBatch>;
  close(): Promise<void>;
}

export async function openDataDirSource(dir: string, logger: Logger): Promise<RestoreSource> {
  const log = await EventLog.open(dir, { fsync: 'always', logger });
  try {
    const snapshots = await SnapshotStore.open(dir, logger);
    const history = await readHistory(log, snapshots, log.lastSeq);
    return {
      describe: `data directory ${dir}`,
      history,
      log,
      readSnapshot: (seq) => snapshots.readFile(seq),
      batches: (fromSeq, toSeq) => logBatches(log, fromSeq, toSeq),
      close: () => log.close(),
    };
  } catch (err) {
    await log.close();
    throw err;
  }
}
