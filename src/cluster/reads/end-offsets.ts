// Read-committed end offsets of the cluster's topics. kafkajs's admin sends ListOffsets without
// an isolation level of its own, and its request builder defaults to READ_COMMITTED (protocol
// v2+), so the broker answers the last stable offset: the end of what a read-committed
// consumer can reach. A write acknowledged (its transaction committed) before the call is below
// it; records of a transaction still open are not, so a wait for this offset never waits on them.
import type { Admin, Kafka } from 'kafkajs';

//
// Concurrent readers share fetches: a caller needs ends read after it asked (a write
// acknowledged before its query started must be below them), so it joins the next fetch to
// start, never one already under way. Under load one ListOffsets cycle serves every query that
// arrived while the previous one ran.
/** What of kafkajs's internal Cluster one ListOffsets round for several topics needs. */
interface OffsetsCluster {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  addMultipleTargetTopics(topics: string[]): Promise<void>;
  refreshMetadataIfNecessary(): Promise<void>;
  findTopicPartitionMetadata(topic: string): { partitionId: number }[];
  fetchTopicsOffset(
    topics: { topic: string; fromBeginning: boolean; partitions: { partition: number }[] }[],
  ): Promise<{ topic: string; partitions: { partition: number; offset: string }[] }[]>;
}

/** The description of the Kafka client's own-property Symbol that makes its Cluster objects. */
const CREATE_CLUSTER = 'private:Kafka:createCluster';

export class EndOffsets {
  private admin: Promise<Admin> | undefined;
  private cluster: Promise<OffsetsCluster> | undefined;
  private closed = false;
  private readonly running = new Map<string, Promise<Map<number, string>>>();
  private readonly queued = new Map<string, Promise<Map<number, string>>>();

  constructor(
    private readonly kafka: Kafka,
    /** The topics ofAll() is asked for (their metadata is kept). */
    private readonly topics: readonly string[] = [],
  ) {}

  /** partition → end offset of `topic`, read after this call. */
  of(topic: string): Promise<Map<number, string>> {
    const running = this.running.get(topic);
    if (running === undefined) {
      const fetch = this.fetch(topic).finally(() => this.running.delete(topic));
      this.running.set(topic, fetch);
      return fetch;
    }
    let next = this.queued.get(topic);
    if (next === undefined) {
      next = running
        .catch(() => undefined)
        .then(() => {
          this.queued.delete(topic);
          return this.of(topic);
        });
      this.queued.set(topic, next);
    }
    return next;
  }

  private async fetch(topic: string): Promise<Map<number, string>> {
    if (this.closed) throw new Error('end offsets: closed');
    const admin = await this.connect();
    try {
      const offsets = await admin.fetchTopicOffsets(topic);
      return new Map(offsets.map((o) => [o.partition, o.offset]));
    } catch (err) {
      // A broken connection is rebuilt on the next call.
      this.admin = undefined;
      await admin.disconnect().catch(() => undefined);
      throw err;
    }
  }

  /**
   * The ends of several topics in one ListOffsets round (per broker), read after this call, not
   * shared with other callers (reads/cluster-ends.ts shares them). kafkajs's admin asks one topic
   * at a time and two rounds for each (the low offsets too, which reads never need), so this
   * goes through the Cluster object the client makes for its admin; without it (another kafkajs),
   * through the admin, one topic at a time.
   */
  async ofAll(topics: readonly string[]): Promise<Map<string, Map<number, string>>> {
    // After close() (the node stopping), a late background refresh must not connect again.
    if (this.closed) throw new Error('end offsets: closed');
    const cluster = this.offsetsCluster();
    if (cluster === undefined) {
      const all = await Promise.all(topics.map(async (t) => [t, await this.fetch(t)] as const));
      return new Map(all);
    }
    const c = await cluster;
    try {
      await c.refreshMetadataIfNecessary();
      const asked = topics.map((topic) => ({
        topic,
        fromBeginning: false,
        partitions: c.findTopicPartitionMetadata(topic).map((p) => ({ partition: p.partitionId })),
      }));
      const answered = await c.fetchTopicsOffset(asked);
      const out = new Map<string, Map<number, string>>(topics.map((t) => [t, new Map()]));
      for (const t of answered) for (const p of t.partitions) out.get(t.topic)?.set(p.partition, p.offset);
      return out;
    } catch (err) {
      // A broken connection is rebuilt on the next call.
      this.cluster = undefined;
      await c.disconnect().catch(() => undefined);
      throw err;
    }
  }

  private offsetsCluster(): Promise<OffsetsCluster> | undefined {
    if (this.cluster !== undefined) return this.cluster;
    const own = this.kafka as unknown as Record<symbol, unknown>;
    const make = Object.getOwnPropertySymbols(own).find((s) => s.description === CREATE_CLUSTER);
    const create = make === undefined ? undefined : own[make];
    if (typeof create !== 'function') return undefined;
    const c = (create as (o: object) => OffsetsCluster)({ allowAutoTopicCreation: false });
    const topics = this.topics;
    this.cluster = c
      .connect()
      .then(() => c.addMultipleTargetTopics([...topics]))
      .then(
        () => c,
        (err: unknown) => {
          this.cluster = undefined;
          throw err;
        },
      );
    return this.cluster;
  }

  async close(): Promise<void> {
    this.closed = true;
    const a = this.admin;
    this.admin = undefined;
    if (a !== undefined) await (await a.catch(() => undefined))?.disconnect().catch(() => undefined);
    const c = this.cluster;
    this.cluster = undefined;
    if (c !== undefined) await (await c.catch(() => undefined))?.disconnect().catch(() => undefined);
  }

  private connect(): Promise<Admin> {
    if (this.admin === undefined) {
      const admin = this.kafka.admin();
      this.admin = admin.connect().then(
        () => admin,
        (err: unknown) => {
          this.admin = undefined;
          throw err;
        },
      );
    }
    return this.admin;
  }
}
