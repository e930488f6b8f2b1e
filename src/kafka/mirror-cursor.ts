// The mirror's durable position: the highest log sequence Kafka acknowledged, kept in log meta
// (LevelDB, same data directory as the log) so a restart resumes there and skips nothing.
//
// It rides on the commit queue's next batch instead of forcing a write of its own: the stored
// value may lag what Kafka acknowledged (a restart then re-sends a few records, which replicas
// drop by sequence), but it never runs ahead of it. The retention hold uses only values known
// to be on disk: a meta write staged before record R is in R's batch or an earlier one, so it is
// durable once R is.
import type { CommittedLog, CursorStore } from '../engine/ports.js';

const META_KEY = 'kafka-mirror';

interface Stored {
  topic: string;
  seq: number;
}

export class MirrorCursor {
  /** Highest acknowledged sequence known to be stored durably. */
  private durable: number;
  private pending: { seq: number; mark: number }[] = [];

  private constructor(
    private readonly cursors: CursorStore,
    private readonly topic: string,
    stored: number,
  ) {
    this.durable = stored;
  }

  /** Loads the stored position for `topic` (0 when none, or when it belonged to another topic). */
  static async load(log: CommittedLog, cursors: CursorStore, topic: string): Promise<MirrorCursor> {
    const raw = await cursors.get(META_KEY);
    let seq = 0;
    if (raw !== undefined) {
      const stored = JSON.parse(Buffer.from(raw).toString('utf8')) as Stored;
      if (stored.topic === topic && Number.isSafeInteger(stored.seq)) seq = stored.seq;
    }
    const cursor = new MirrorCursor(cursors, topic, seq);
    log.onDurable((durableSeq) => cursor.onDurable(durableSeq));
    return cursor;
  }

  get stored(): number {
    return this.durable;
  }

  /** Records that Kafka acknowledged everything up to `seq`. */
  advance(seq: number): void {
    const value: Stored = { topic: this.topic, seq };
    let mark: number;
    try {
      mark = this.cursors.stage(META_KEY, Buffer.from(JSON.stringify(value)));
    } catch {
      // The commit queue failed (the process is stopping): the stored value simply stays older.
      return;
    }
    const last = this.pending[this.pending.length - 1];
    if (last !== undefined && last.mark === mark) last.seq = seq;
    else this.pending.push({ seq, mark });
  }

  private onDurable(durableSeq: number): void {
    while (this.pending.length > 0 && this.pending[0].mark <= durableSeq) {
      this.durable = Math.max(this.durable, this.pending.shift()!.seq);
    }
  }
}
