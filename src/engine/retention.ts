// Which snapshots and log records are kept. A policy, not a hard-coded step: the default keeps
// the log since the previous snapshot (so an unreadable newest snapshot falls back to the
// previous one plus a longer replay); the history window (--history-retention, and optionally
// --history-retention-bytes) keeps whatever a restore to any point inside it needs; holds (Kafka
// mirror not yet acknowledged, a running backup) can only keep more: the longest need wins.

export interface RetentionHold {
  name: string;
  /** Records with seq >= this value must be kept. */
  keepFrom(): number;
}

export interface SnapshotTime {
  readonly seq: number;
  /** ms; undefined (unknown) counts as older than any window. */
  readonly timeMs: number | undefined;
}

export interface HistoryWindow {
  /** Points committed within this many ms of now stay restorable; 0 keeps no history. */
  readonly ms: number;
  /** When > 0, the window shrinks (by whole snapshots) until the retained log is at most this. */
  readonly bytes: number;
}

/** Log bytes of the records after `seq`; only asked when a byte cap is set. */
export type LogBytesAfter = (seq: number) => Promise<number>;

export interface RetentionPlan {
  keptSnapshots: number[];
  /** Highest seq that may be released (0 = nothing). */
  releasableUpTo: number;
}

export class RetentionPolicy {
  private readonly holds: RetentionHold[] = [];

  constructor(
    readonly snapshotsToKeep = 2,
    public window: HistoryWindow = { ms: 0, bytes: 0 },
  ) {}

  addHold(hold: RetentionHold): void {
    this.holds.push(hold);
  }

  removeHold(hold: RetentionHold): void {
    const i = this.holds.indexOf(hold);
    if (i >= 0) this.holds.splice(i, 1);
  }

  /** The lowest sequence any hold needs (Infinity without holds). */
  heldFrom(): number {
    let from = Infinity;
    for (const h of this.holds) from = Math.min(from, h.keepFrom());
    return from;
  }

  /**
   * Given every snapshot newest first: the snapshots to keep and how far the log may go. The
   * base of the window is the newest snapshot older than its start; it and everything newer are
   * kept, with the log after it, so every point inside the window can be rebuilt.
   */
  async plan(snapshots: readonly SnapshotTime[], nowMs: number, logBytesAfter: LogBytesAfter): Promise<RetentionPlan> {
    const n = Math.min(this.snapshotsToKeep, snapshots.length);
    const cutoff = nowMs - this.window.ms;
    let base = snapshots.findIndex((s, i) => i >= n - 1 && (this.window.ms === 0 || (s.timeMs ?? -Infinity) < cutoff));
    // No snapshot is old enough: the window reaches before all of them, keep all and the log.
    if (base < 0) return { keptSnapshots: snapshots.map((s) => s.seq), releasableUpTo: 0 };
    if (this.window.bytes > 0) {
      while (base > n - 1 && (await logBytesAfter(snapshots[base].seq)) > this.window.bytes) base--;
    }
    const kept = snapshots.slice(0, base + 1).map((s) => s.seq);
    if (snapshots.length < this.snapshotsToKeep) return { keptSnapshots: kept, releasableUpTo: 0 };
    const upTo = Math.min(snapshots[base].seq, this.heldFrom() - 1);
    return { keptSnapshots: kept, releasableUpTo: Math.max(0, upTo) };
  }
}
