// The mirror's durable position: the highest log sequence Kafka acknowledged, kept in log meta
// (LevelDB, same data directory as the log) so a restart resumes there and skips nothing.
//
// It rides on the commit queue's next batch instead of forcing a write of its own (a lazy
// cursor commit): the stored value may lag what Kafka acknowledged (a restart then re-sends a
// few records, which replicas drop by sequence), but it never runs ahead of it. The retention
// hold uses only values known to be on disk: a commit's promise resolves once the batch that
// carried it is durable.
import type { CursorStore, CursorWrite } from '../engine/ports.js';
import { decodeConsumerPosition, encodeConsumerPosition } from '../storage/index.js';

/** Commits positions with the next batch (Engine.commit with `lazy`), resolving once durable. */
export type RideCursors = (cursors: readonly CursorWrite[]) => Promise<void>;

const META_KEY = 'kafka-mirror';

export class MirrorCursor {
  /** Highest acknowledged sequence known to be stored durably. */
  private durable: number;

  private constructor(
    private readonly ride: RideCursors,
    private readonly topic: string,
    stored: number,
  ) {
    this.durable = stored;
  }

  /** Loads the stored position for `topic` (0 when none, or when it belonged to another topic). */
  static async load(cursors: CursorStore, ride: RideCursors, topic: string): Promise<MirrorCursor> {
    const raw = await cursors.get(META_KEY);
    let seq = 0;
    if (raw !== undefined) {
      const stored = decodeConsumerPosition(META_KEY, 'mirror', raw);
      if (stored.topic === topic) seq = stored.seq;
    }
    return new MirrorCursor(ride, topic, seq);
  }

  get stored(): number {
    return this.durable;
  }

  /** Records that Kafka acknowledged everything up to `seq`. */
  advance(seq: number): void {
    const value = encodeConsumerPosition({ kind: 'mirror', topic: this.topic, seq });
    this.ride([{ key: META_KEY, value }]).then(
      () => {
        this.durable = Math.max(this.durable, seq);
      },
      // The engine failed or is stopping: the stored value simply stays older.
      () => undefined,
    );
  }
}
