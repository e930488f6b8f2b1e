// Exactly once from a source topic into the cluster (docs/CLUSTER.md, "Kafka-fed ingest"): each
// batch's commands (NAME.log), its offsets and counts (NAME.meta) and its source offsets
// (sendOffsets, the ingest's consumer group) are one Kafka transaction — a read-committed holder
// sees all of it or none. The producer of a source partition has a transactional id of its own
// (cluster, ingest, partition): a node that takes the partition over opens it again, which aborts
// the transaction a killed node left open and fences a node that still thinks it owns it, so a
// batch is never committed twice.
import type { Kafka, Producer } from 'kafkajs';
import { DomainError } from '../../domain/errors.js';
import type { Command, LogCommand, MetaCommand } from '../commands/command.js';
import { commandMessages } from '../commands/command-codec.js';
import { produceRounds } from '../commands/producer.js';
import type { ClusterWrites } from '../coordination/cluster-writes.js';

/** Where a batch ends in its source partition. */
export interface SourceOffset {
  group: string;
  topic: string;
  partition: number;
  /** The next offset to consume. */
  next: string;
}

export class IngestTransactions {
  private readonly producers = new Map<number, Promise<Producer>>();

  constructor(
    private readonly kafka: Kafka,
    private readonly writes: ClusterWrites,
    /** Unique per cluster and ingest: `${cluster}-ingest-${name}`. */
    private readonly idPrefix: string,
    private readonly chunkBytes?: number,
  ) {}

  /**
   * The partition's transactional producer, connected: opening it fences any other producer of
   * the partition and ends its open transaction, so call it before reading where to resume.
   */
  open(partition: number): Promise<Producer> {
    let p = this.producers.get(partition);
    if (p === undefined) {
      const producer = this.kafka.producer({
        idempotent: true,
        maxInFlightRequests: 1,
        transactionalId: `${this.idPrefix}-${partition}`,
        allowAutoTopicCreation: false,
      });
      p = producer.connect().then(() => producer);
      this.producers.set(partition, p);
      p.catch(() => this.producers.delete(partition));
    }
    return p;
  }

  /** Commits the batch: its log commands, its offsets command and the source offsets, or nothing. */
  async commit(source: SourceOffset, commands: readonly LogCommand[], offsets: MetaCommand): Promise<void> {
    const producer = await this.open(source.partition);
    const time = this.writes.stamp();
    const stamped = (command: Command): Command => ({ ...command, time });
    const items = [
      ...commands.map((c) => ({ topic: this.writes.logTopic, partition: c.partition, command: stamped(c) })),
      { topic: this.writes.metaTopic, partition: 0, command: stamped(offsets) },
    ];
    const tx = await producer.transaction();
    try {
      await produceRounds(
        tx,
        items,
        items.map((it) => commandMessages(it.command, this.chunkBytes)),
      );
      await tx.sendOffsets({
        consumerGroupId: source.group,
        topics: [{ topic: source.topic, partitions: [{ partition: source.partition, offset: source.next }] }],
      });
      await tx.commit();
    } catch (err) {
      // A fenced or failed producer is replaced: the next batch opens a new one.
      await tx.abort().catch(() => this.drop(source.partition));
      throw err instanceof DomainError ? err : new DomainError('unavailable', `ingest transaction: ${String(err)}`);
    }
  }

  /** Closes the producer of a partition this node no longer consumes. */
  async drop(partition: number): Promise<void> {
    const p = this.producers.get(partition);
    this.producers.delete(partition);
    await (await p?.catch(() => undefined))?.disconnect().catch(() => undefined);
  }

  async close(): Promise<void> {
    await Promise.all([...this.producers.keys()].map((p) => this.drop(p)));
  }
}
