// The log port: what the holder side of cluster mode needs of a partitioned log — batches of one
// partition's records in offset order, read committed, with the offset of the batch's last record
// (transaction markers and aborted records included, so a reader's position can move past them).
// Kafka gives it through kafkajs (membership's consumer loop, commands/feed.ts's eachBatch); the
// in-memory log (memory-log.ts) gives it without a broker, for tests and simulations of the
// applier, the feed and positions.
import type { IHeaders } from 'kafkajs';
import type { ClusterMessage } from '../types.js';

/** One fetched batch of one partition. */
export interface LogBatch {
  readonly partition: number;
  /** Read-committed data records from the fetch position on, in offset order. */
  readonly messages: readonly ClusterMessage[];
  /** Offset of the batch's last record of any kind (markers and aborted records included). */
  readonly lastOffset: string;
}

/** What a consumer says about a batch while it is delivered (kafkajs's eachBatch payload has the same). */
export interface BatchControl {
  isRunning(): boolean;
  /** A seek or a rebalance made the batch stale: deliver no more of it. */
  isStale(): boolean;
  resolveOffset(offset: string): void;
  heartbeat(): Promise<void>;
}

/** A consumer that never stops and never goes stale (the in-memory log's). */
export const STEADY: BatchControl = {
  isRunning: () => true,
  isStale: () => false,
  resolveOffset: () => undefined,
  heartbeat: async () => undefined,
};

/** A message as a producer sends it (commands/command-codec.ts commandMessages). */
export interface OutMessage {
  readonly value: Buffer | string | null;
  readonly headers?: IHeaders;
  readonly timestamp?: string;
}

/** The producer's side of a partitioned log. */
export interface LogWriter {
  /** One idempotent append of messages to one partition; answers the offset of the last. */
  append(topic: string, partition: number, messages: readonly OutMessage[]): string;
  /** A transaction: its records are seen by read-committed readers once committed, never if aborted. */
  begin(): LogTransaction;
}

export interface LogTransaction {
  send(topic: string, partition: number, messages: readonly OutMessage[]): string;
  commit(): void;
  abort(): void;
}
