// The engine's HistoryControl port (ports.ts) over its private log store and snapshot files.
import type { Logger } from 'pino';
import type { Holder } from '../state/holder.js';
import type { CommitQueue } from './commit-queue.js';
import { CommandTimeStates } from './command-time.js';
import { readHistory, resolveTarget, type History, type Target } from './history.js';
import { logBatches, type TimedBatch } from './log-export.js';
import { PastStates } from './past-states.js';
import type { HistoryControl, LogStore, SnapshotFiles } from './ports.js';
import type { Clock } from '../util/clock.js';

export class EngineHistory implements HistoryControl {
  private readonly past: PastStates;
  private readonly byTime: CommandTimeStates;

  constructor(
    private readonly queue: CommitQueue,
    private readonly log: LogStore,
    private readonly snapshotFiles: SnapshotFiles,
    logger: Logger,
    clock: Clock,
  ) {
    this.past = new PastStates(log, snapshotFiles, logger);
    this.byTime = new CommandTimeStates(log, snapshotFiles, () => queue.durableSeq, logger, clock);
  }

  window(): Promise<History> {
    return readHistory(this.log, this.snapshotFiles, this.queue.durableSeq);
  }

  async resolve(target: Target): Promise<number> {
    return resolveTarget(this.log, await this.window(), target);
  }

  stateAt(seq: number): Promise<Holder> {
    return this.past.at(seq);
  }

  commandStateAt(timeMs: number): Promise<Holder> {
    return this.byTime.at(timeMs);
  }

  batches(fromSeq: number, toSeq: number): AsyncIterable<TimedBatch> {
    return logBatches(this.log, fromSeq, Math.min(toSeq, this.queue.durableSeq));
  }

  snapshotBody(seq: number): Promise<Uint8Array> {
    return this.snapshotFiles.read(seq);
  }
}
