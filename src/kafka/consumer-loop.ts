// A kafkajs consumer that keeps running: connects (retrying with backoff while the broker is
// away), and is rebuilt when kafkajs gives up after a crash. Positions are never taken from
// Kafka's committed group offsets: nothing is committed to Kafka, and on every group join the
// owner seeks each assigned partition to the position it keeps in its own durable state.
import type { Consumer, EachBatchPayload, GroupDescription, Kafka, PartitionAssigner } from 'kafkajs';
import type { Logger } from 'pino';
import { Sleeper, backoffMs, errorText } from './client.js';

export interface ConsumerLoopOptions {
  kafka: Kafka;
  groupId: string;
  topic: string;
  logger: Logger;
  /** Called on every group join with the partitions assigned to this member. */
  onAssigned(partitions: number[], seek: (partition: number, offset: string) => void): void;
  eachBatch(payload: EachBatchPayload): Promise<void>;
  onError(message: string): void;
  partitionsConsumedConcurrently?: number;
  /** A custom assignor (cluster mode); kafkajs's round robin otherwise. */
  partitionAssigners?: PartitionAssigner[];
  /** Called on every group join with this member's Kafka id (before onAssigned). */
  onJoined?(memberId: string): void;
  /**
   * Called when this member learns that the group rebalances, and when its consumer crashed (it
   * will join again): until the next join it may not be the member it was.
   */
  onRebalancing?(): void;
  /** Called after every heartbeat the group coordinator accepted. */
  onHeartbeat?(): void;
  /**
   * A fetched batch whose records were all filtered out (transaction markers, aborted records):
   * kafkajs calls no eachBatch for it, but a position must still move past it.
   */
  onFilteredBatch?(partition: number, lastOffset: string): void;
  /**
   * How long the broker holds a fetch that finds nothing new (default 100 ms). A record that
   * arrives meanwhile answers it at once, so this is not a delay for new records; but an idle
   * consumer sends 1000/maxWaitMs fetches a second, and a pause, resume or seek, and the group's
   * heartbeats, wait for the fetch in flight to come back.
   */
  maxWaitMs?: number;
}

// The broker's minimum session timeout by default: a member that died (SIGKILL) stops holding
// its partitions after this long, which bounds how long a restarted server waits to rejoin.
export const SESSION_TIMEOUT_MS = 6_000;

export class ConsumerLoop {
  private consumer: Consumer | undefined;
  private stopped = false;
  private opening: Promise<void> | undefined;
  private readonly sleeper = new Sleeper();

  constructor(private readonly opts: ConsumerLoopOptions) {}

  /** Starts in the background; failures to connect are retried until stop(). */
  start(): void {
    this.opening ??= this.openUntilStopped();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.sleeper.interrupt();
    await this.opening;
    await this.close();
  }

  /** The group as the coordinator describes it now (members with metadata and assignments). */
  async describeGroup(): Promise<GroupDescription | undefined> {
    return this.consumer?.describeGroup();
  }

  /** Stops fetching a partition (until resume); a no-op while no consumer runs. */
  pause(partition: number): void {
    this.consumer?.pause([{ topic: this.opts.topic, partitions: [partition] }]);
  }

  resume(partition: number): void {
    this.consumer?.resume([{ topic: this.opts.topic, partitions: [partition] }]);
  }

  /** The next fetch of a partition starts at `offset`. */
  seek(partition: number, offset: string): void {
    this.consumer?.seek({ topic: this.opts.topic, partition, offset });
  }

  private async openUntilStopped(): Promise<void> {
    for (let attempt = 0; !this.stopped; attempt++) {
      try {
        await this.open();
        return;
      } catch (err) {
        await this.close();
        if (this.stopped) return;
        this.opts.onError(errorText(err));
        this.opts.logger.warn({ err: errorText(err) }, 'kafka consumer: cannot start; retrying');
        await this.sleeper.sleep(backoffMs(attempt));
      }
    }
  }

  private async open(): Promise<void> {
    const { kafka, groupId, topic } = this.opts;
    const c = kafka.consumer({
      groupId,
      sessionTimeout: SESSION_TIMEOUT_MS,
      heartbeatInterval: 1_000,
      rebalanceTimeout: 30_000,
      maxBytesPerPartition: 8 * 1024 * 1024,
      maxBytes: 32 * 1024 * 1024,
      maxWaitTimeInMs: this.opts.maxWaitMs ?? 100,
      allowAutoTopicCreation: true,
      ...(this.opts.partitionAssigners !== undefined ? { partitionAssigners: this.opts.partitionAssigners } : {}),
      retry: { retries: 8, initialRetryTime: 200, maxRetryTime: 5_000 },
    });
    this.consumer = c;
    c.on(c.events.GROUP_JOIN, (e) => {
      this.opts.onJoined?.(e.payload.memberId);
      const partitions = e.payload.memberAssignment[topic] ?? [];
      this.opts.onAssigned(partitions, (partition, offset) => c.seek({ topic, partition, offset }));
    });
    const onFiltered = this.opts.onFilteredBatch;
    if (onFiltered !== undefined) {
      c.on(c.events.END_BATCH_PROCESS, (e) => {
        if (e.payload.batchSize === 0 && e.payload.topic === topic)
          onFiltered(e.payload.partition, e.payload.lastOffset);
      });
    }
    const onRebalancing = this.opts.onRebalancing;
    if (onRebalancing !== undefined) c.on(c.events.REBALANCING, () => onRebalancing());
    const onHeartbeat = this.opts.onHeartbeat;
    if (onHeartbeat !== undefined) c.on(c.events.HEARTBEAT, () => onHeartbeat());
    c.on(c.events.CRASH, (e) => {
      this.opts.onRebalancing?.();
      this.opts.onError(errorText(e.payload.error));
      // kafkajs restarts by itself after retriable errors; otherwise we rebuild the consumer.
      if (!e.payload.restart && !this.stopped && this.consumer === c) {
        this.opts.logger.warn({ err: errorText(e.payload.error) }, 'kafka consumer crashed; rebuilding it');
        this.opening = this.close().then(() => this.openUntilStopped());
      }
    });
    await c.connect();
    await c.subscribe({ topics: [topic], fromBeginning: true });
    await c.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: this.opts.partitionsConsumedConcurrently ?? 1,
      eachBatch: (p) => this.opts.eachBatch(p),
    });
  }

  private async close(): Promise<void> {
    const c = this.consumer;
    this.consumer = undefined;
    if (c !== undefined) await c.disconnect().catch(() => undefined);
  }
}
