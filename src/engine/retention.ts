// Which log records may be released. A policy, not a hard-coded step: the default keeps the log
// since the previous snapshot (so an unreadable newest snapshot falls back to the previous one
// plus a longer replay); holds (Kafka mirror not yet acknowledged, point-in-time restore window)
// can only keep more.

export interface RetentionHold {
  name: string;
  /** Records with seq >= this value must be kept. */
  keepFrom(): number;
}

export class RetentionPolicy {
  private readonly holds: RetentionHold[] = [];

  constructor(readonly snapshotsToKeep = 2) {}

  addHold(hold: RetentionHold): void {
    this.holds.push(hold);
  }

  removeHold(hold: RetentionHold): void {
    const i = this.holds.indexOf(hold);
    if (i >= 0) this.holds.splice(i, 1);
  }

  /** Snapshots to keep, given all snapshot seqs newest first. */
  keptSnapshots(seqs: number[]): number[] {
    return seqs.slice(0, this.snapshotsToKeep);
  }

  /** Highest seq that may be released (0 = nothing). */
  releasableUpTo(snapshotSeqsNewestFirst: number[]): number {
    const kept = this.keptSnapshots(snapshotSeqsNewestFirst);
    if (kept.length < this.snapshotsToKeep) return 0;
    let upTo = kept[kept.length - 1];
    for (const h of this.holds) upTo = Math.min(upTo, h.keepFrom() - 1);
    return Math.max(0, upTo);
  }
}
