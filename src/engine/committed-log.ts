// The ports the engine hands out (ports.ts): views over its private commit queue, log store and
// retention policy that let followers read only what is durable and hold only what they need.
import type { CommitQueue } from './commit-queue.js';
import { logBatches } from './log-export.js';
import type { CommittedLog, CursorStore, LogRecord, LogStore, RetentionHandle, TimedRecord } from './ports.js';
import type { RetentionPolicy } from './retention.js';

export class EngineCommittedLog implements CommittedLog {
  constructor(
    private readonly queue: CommitQueue,
    private readonly log: LogStore,
    private readonly retention: RetentionPolicy,
  ) {}

  get durableSeq(): number {
    return this.queue.durableSeq;
  }

  get firstRetainedSeq(): number {
    return this.log.firstSeq;
  }

  onDurable(listener: (durableSeq: number) => void): () => void {
    // The queue's listener list is wrapped, not replaced: the queue stays the one place that
    // decides when a batch is durable.
    const listeners = this.queue.durableListeners;
    listeners.push(listener);
    return () => {
      const i = listeners.indexOf(listener);
      if (i >= 0) listeners.splice(i, 1);
    };
  }

  read(fromSeq: number, toSeq?: number): AsyncIterable<LogRecord> {
    // A record staged but not yet durable is never handed to a follower.
    const to = Math.min(toSeq ?? Number.MAX_SAFE_INTEGER, this.queue.durableSeq);
    return this.log.read(fromSeq, to);
  }

  async *readTimed(fromSeq: number, toSeq?: number): AsyncGenerator<TimedRecord> {
    const to = Math.min(toSeq ?? Number.MAX_SAFE_INTEGER, this.queue.durableSeq, this.log.lastSeq);
    for await (const b of logBatches(this.log, fromSeq, to)) {
      for (const r of b.records) yield { seq: r.seq, type: r.type, payload: r.payload, timeMs: b.timeMs };
    }
  }

  hold(name: string, keepFrom: () => number): RetentionHandle {
    const hold = { name, keepFrom };
    this.retention.addHold(hold);
    return { release: () => this.retention.removeHold(hold) };
  }
}

/** Reads positions; Engine.commit({ cursors }) writes them. */
export class EngineCursorStore implements CursorStore {
  constructor(private readonly log: LogStore) {}

  get(key: string): Promise<Uint8Array | undefined> {
    return this.log.getMeta(key);
  }
}
