// Where a cluster write's time goes (GET /cluster, node.writeStages; the cluster bench prints it):
// per stage, how many writes passed it, their mean and their longest, in ms. A coordinator times
// the produce (until Kafka acknowledged) and the wait for the result after it; a holder times
// each log command's apply, and how long after its coordinator stamped it the apply began (the
// produce and the delivery to this node together: the nodes of one machine share a clock).
import { systemClock } from '../../util/clock.js';

export type WriteStage =
  /** Coordinator: the read-your-writes wait's end offset of the meta topic (as the request arrives). */
  | 'metaEnds'
  /** Coordinator: from the request's arrival until its body was read (the wait above runs meanwhile). */
  | 'bodyRead'
  /** Coordinator: how long the read-your-writes wait kept the handler back after the body was read. */
  | 'metaWait'
  /** Coordinator: from the send until Kafka acknowledged (acks=-1). */
  | 'produce'
  /** Coordinator, holding the partition: from the acknowledgment until its own apply began. */
  | 'delivery'
  /** Coordinator, holding the partition: from the acknowledgment until its own result was known. */
  | 'resultLocal'
  /** Coordinator, not holding it (or not caught up): from the acknowledgment until a holder answered. */
  | 'resultRemote'
  /** Coordinator, holding the partition: from the acknowledgment until its apply from its own bytes ended. */
  | 'ownApply'
  /** Holder: a log command's apply (decode, validate, commit, durable). */
  | 'apply'
  /** Holder: from the coordinator's stamp (before its produce) until the apply began. */
  | 'stampToApply';

interface Sum {
  count: number;
  totalMs: number;
  maxMs: number;
}

/** How many applied commands' start times are kept for their coordinator's delivery stage. */
const STARTS_KEPT = 1_000;

export class WriteStages {
  private readonly sums = new Map<WriteStage, Sum>();
  /** Monotonic time each recent log command's apply began here, by "partition/offset". */
  private readonly starts = new Map<string, number>();

  now(): number {
    return systemClock.monotonic();
  }

  add(stage: WriteStage, ms: number): void {
    let s = this.sums.get(stage);
    if (s === undefined) this.sums.set(stage, (s = { count: 0, totalMs: 0, maxMs: 0 }));
    s.count++;
    s.totalMs += ms;
    s.maxMs = Math.max(s.maxMs, ms);
  }

  /** A holder began to apply log command `offset` of `partition`, stamped `stampMs` by its coordinator. */
  applying(partition: number, offset: string, stampMs: number): number {
    const at = this.now();
    this.add('stampToApply', Math.max(0, systemClock.now() - stampMs));
    const key = `${partition}/${offset}`;
    this.starts.set(key, at);
    if (this.starts.size > STARTS_KEPT) {
      const oldest = this.starts.keys().next().value;
      if (oldest !== undefined) this.starts.delete(oldest);
    }
    return at;
  }

  /** When this node began to apply the command (undefined: not here, or long ago). */
  appliedFrom(partition: number, offset: string): number | undefined {
    return this.starts.get(`${partition}/${offset}`);
  }

  snapshot(): Record<string, { count: number; meanMs: number; maxMs: number }> {
    const out: Record<string, { count: number; meanMs: number; maxMs: number }> = {};
    for (const [stage, s] of this.sums)
      out[stage] = { count: s.count, meanMs: round(s.totalMs / s.count), maxMs: round(s.maxMs) };
    return out;
  }
}

const round = (ms: number): number => Math.round(ms * 100) / 100;
