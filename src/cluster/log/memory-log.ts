// An in-memory partitioned log behind the log port (log-port.ts), with Kafka's semantics where
// the holder side depends on them: offsets per partition, transactions whose commit or abort
// writes a marker record in every partition they touched (a marker takes an offset), a
// read-committed reader that stops at the first offset of a transaction still open (the last
// stable offset) and never sees aborted records, and batches that end at their last record of
// any kind. MemoryConsumer feeds a Feed from it with what a broker's consumer does to a holder:
// assignments that change (rebalances), seeks back (redelivery), pauses.
import type { Feed } from '../commands/feed.js';
import type { ClusterMessage } from '../types.js';
import type { LogBatch, LogTransaction, LogWriter, OutMessage } from './log-port.js';

interface Stored extends ClusterMessage {
  /** The transaction it belongs to (undefined: an idempotent append). */
  readonly txn?: number;
  /** A transaction marker (commit or abort): an offset, no data. */
  readonly marker?: boolean;
}

interface Partition {
  readonly records: Stored[];
  /** Open transactions: their first offset in this partition. */
  readonly open: Map<number, number>;
}

export class MemoryLog implements LogWriter {
  private readonly topics = new Map<string, Partition[]>();
  private readonly aborted = new Set<number>();
  private nextTxn = 1;

  constructor(topics: Record<string, number>) {
    for (const [name, n] of Object.entries(topics))
      this.topics.set(
        name,
        Array.from({ length: n }, () => ({ records: [], open: new Map() })),
      );
  }

  append(topic: string, partition: number, messages: readonly OutMessage[]): string {
    return this.push(this.partition(topic, partition), messages, undefined);
  }

  begin(): LogTransaction {
    const txn = this.nextTxn++;
    const touched = new Set<Partition>();
    let done = false;
    const end = (abort: boolean): void => {
      if (done) throw new Error(`transaction ${txn} already ended`);
      done = true;
      if (abort) this.aborted.add(txn);
      for (const part of touched) {
        part.records.push({ offset: String(part.records.length), value: null, txn, marker: true });
        part.open.delete(txn);
      }
    };
    return {
      send: (topic, partition, messages) => {
        if (done) throw new Error(`transaction ${txn} already ended`);
        const part = this.partition(topic, partition);
        if (!part.open.has(txn)) part.open.set(txn, part.records.length);
        touched.add(part);
        return this.push(part, messages, txn);
      },
      commit: () => end(false),
      abort: () => end(true),
    };
  }

  /** The last stable offset: a read-committed reader's end. */
  endOffset(topic: string, partition: number): bigint {
    const part = this.partition(topic, partition);
    let end = part.records.length;
    for (const first of part.open.values()) end = Math.min(end, first);
    return BigInt(end);
  }

  /** At most `max` records from `from`, read committed; undefined when there is nothing to read. */
  read(topic: string, partition: number, from: bigint, max: number): LogBatch | undefined {
    const part = this.partition(topic, partition);
    const end = Math.min(Number(this.endOffset(topic, partition)), Number(from) + max);
    if (Number(from) >= end) return undefined;
    const slice = part.records.slice(Number(from), end);
    const messages = slice.filter((r) => r.marker !== true && (r.txn === undefined || !this.aborted.has(r.txn)));
    return { partition, messages: messages.map(publicMessage), lastOffset: String(end - 1) };
  }

  private push(part: Partition, messages: readonly OutMessage[], txn: number | undefined): string {
    for (const m of messages)
      part.records.push({
        offset: String(part.records.length),
        value: typeof m.value === 'string' ? Buffer.from(m.value, 'utf8') : m.value,
        ...(m.headers === undefined ? {} : { headers: m.headers }),
        ...(m.timestamp === undefined ? {} : { timestamp: m.timestamp }),
        ...(txn === undefined ? {} : { txn }),
      });
    return String(part.records.length - 1);
  }

  private partition(topic: string, partition: number): Partition {
    const part = this.topics.get(topic)?.[partition];
    if (part === undefined) throw new Error(`no partition ${topic}/${partition} in the memory log`);
    return part;
  }
}

function publicMessage(r: Stored): ClusterMessage {
  return {
    offset: r.offset,
    value: r.value,
    ...(r.headers === undefined ? {} : { headers: r.headers }),
    ...(r.timestamp === undefined ? {} : { timestamp: r.timestamp }),
  };
}

/** One node's consumer of one topic of a MemoryLog, stepped by its caller. */
export class MemoryConsumer {
  private readonly fetchAt = new Map<number, bigint>();
  private readonly paused = new Set<number>();

  constructor(
    private readonly log: MemoryLog,
    private readonly topic: string,
    private readonly feed: Feed,
    /** Records per batch at most (small batches cut commands' chunk runs across batches). */
    private readonly maxBatch = 4,
  ) {}

  /** A rebalance: the partitions now assigned, each fetched from `from(p)` (the node's own position). */
  assign(partitions: readonly number[], from: (p: number) => bigint): void {
    for (const p of [...this.fetchAt.keys()]) if (!partitions.includes(p)) this.fetchAt.delete(p);
    for (const p of partitions) this.fetchAt.set(p, from(p));
  }

  assigned(): number[] {
    return [...this.fetchAt.keys()].sort((a, b) => a - b);
  }

  /** The next fetch of `p` starts at `offset` (a seek back makes the broker deliver again). */
  seek(p: number, offset: bigint): void {
    if (this.fetchAt.has(p)) this.fetchAt.set(p, offset);
  }

  pause(p: number): void {
    this.paused.add(p);
  }

  resume(p: number): void {
    this.paused.delete(p);
  }

  /** One fetch round: a batch of every assigned, unpaused partition; false when none had one. */
  async poll(): Promise<boolean> {
    let any = false;
    for (const [p, at] of [...this.fetchAt]) {
      if (this.paused.has(p)) continue;
      const batch = this.log.read(this.topic, p, at, this.maxBatch);
      if (batch === undefined) continue;
      any = true;
      this.fetchAt.set(p, BigInt(batch.lastOffset) + 1n);
      await this.feed.deliverBatch(batch);
    }
    return any;
  }
}
