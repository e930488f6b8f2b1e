// The contracts between the parts of cluster mode (docs/CLUSTER.md): the partition map that
// Kafka's group protocol hands out, the node's view of it, and what a holder's consumer hands
// to the command applier. Kept in one file so membership, the write path and the query fan-out
// can be built and tested apart.
import type { Event } from '../events/types.js';
import type { IHeaders } from 'kafkajs';
import type { ImportRequest, ImportValueRequest } from '../encoding/import-request.js';
import type { PreparedBits } from '../service/import/prepare-bits.js';

/** A node of the cluster: its id (the data directory's node id) and advertised base URL. */
export interface Member {
  readonly id: string;
  /** e.g. "http://127.0.0.1:10101" (no trailing slash). */
  readonly url: string;
}

/** The assignment of one rebalance, as every member receives it. */
/**
 * What a holder answers for a partition taken from it by a rebalance: a 503 whose JSON body has
 * `code` PARTITION_MOVED_CODE (DomainError.reason) and this text in its message. A coordinator that
 * gets it from every holder waits for the next map instead of refusing; it matches on the code
 * (the text only in an answer without a code, from a holder of an older build).
 */
export const PARTITION_MOVED = 'moved to another node of the cluster';
export const PARTITION_MOVED_CODE = 'partition_moved';

export interface PartitionMap {
  /** Kafka group generation that produced it. */
  readonly generation: number;
  readonly partitions: number;
  readonly members: readonly Member[];
  /**
   * holders[p]: ids of the members consuming log partition p. The first R are its owners; a
   * previous holder that is kept while a new owner catches up comes after them.
   */
  readonly holders: readonly (readonly string[])[];
  /**
   * restoring[p]: the owners of p that had not caught up on it when the map was made (a
   * previous holder stays in holders[p] meanwhile). Absent in maps from before it existed.
   */
  readonly restoring?: readonly (readonly string[])[];
}

/** Which topic of the cluster a message came from. */
export type ClusterTopic = 'meta' | 'log';

/** One Kafka message as the consumer delivers it, in offset order within its partition. */
export interface ClusterMessage {
  readonly offset: string;
  readonly value: Buffer | null;
  readonly headers?: IHeaders;
  /** Kafka's timestamp of the message (ms, decimal): the time of a command that carries none. */
  readonly timestamp?: string;
  /**
   * The import body of the command in this message, decoded by the node that sent it while Kafka
   * took it (only on a holder's own delivery, Feed.own): the applier takes it instead of decoding
   * the same bytes again. It rejects where the decode would: the applier then decodes, and refuses.
   */
  readonly decodedBody?: Promise<DecodedBody>;
}

/**
 * An import command's body, decoded (CommandApplier.predecode); a bits import's events built too
 * (`prepared`; undefined when it takes the one-step decide, or when building them refused it).
 * A bits body built on the prepare thread comes without its decoded `request`: the rare apply that
 * cannot commit the events (the field changed since) decodes the body again.
 */
export type DecodedBody =
  | { readonly format: 'bits'; readonly request?: ImportRequest; readonly prepared?: PreparedBits }
  | { readonly format: 'values'; readonly request: ImportValueRequest };

/**
 * The holder side of the write path. The consumer loop (membership) calls it in offset order per
 * partition; it applies the commands through engine.write and stages `position` (the offset after
 * the last message) with cursors.stage(positionKey(topic, partition), …) in the same write, so a
 * restart resumes exactly after what was applied. It resolves once that is durable.
 */
export interface CommandSink {
  deliver(topic: ClusterTopic, partition: number, messages: readonly ClusterMessage[], next: string): Promise<void>;
  /**
   * Takeover (commands/partition-snapshot.ts): installs a holder's snapshot of log partition
   * `partition` (its decoded events) when it is newer than what was applied here; answers the new
   * next offset.
   */
  install?(partition: number, events: Iterable<Event>): Promise<bigint | undefined>;
}

/** Log-meta key of the next offset to read of one partition of one topic. */
export function positionKey(topic: ClusterTopic, partition: number): string {
  return `cluster-position/${topic}/${partition}`;
}

/** What the rest of the node asks of membership: the map, positions, end offsets, waits. */
export interface ClusterView {
  readonly name: string;
  readonly self: Member;
  readonly partitions: number;
  readonly replicas: number;
  /** The fixed shard → partition function (partition.ts). */
  partitionOf(index: string, shard: number): number;
  /** The current map; undefined until the first assignment arrives. */
  map(): PartitionMap | undefined;
  /**
   * Members that can answer for log partition p now (caught up to within a rebalance), this
   * node first when it is one of them, then the owners, then handoff holders.
   */
  holders(p: number): Member[];
  /** Next offset this node will read of a partition (its applied position). */
  position(topic: ClusterTopic, partition: number): bigint;
  /**
   * A log command this node just produced (one message, acknowledged at message.offset): applied
   * here from those bytes, through the consumer's own feed and applier, when this node holds the
   * partition caught up and has applied everything before the offset. False (or absent): the
   * consumer delivers it as any other.
   */
  applyOwn?(partition: number, message: ClusterMessage): Promise<boolean>;
  /**
   * This node is about to send a command to the partition that it will apply itself (applyOwn):
   * its consumer holds a fetched batch of the partition back until the answer is called (once
   * the own apply was tried, or the send failed), a bounded while (Feed.sending).
   */
  ownSending?(partition: number): () => void;
  /** Read-committed end offsets (last stable offsets) of the given log partitions. */
  logEndOffsets(partitions: readonly number[]): Promise<Map<number, string>>;
  /** Read-committed end offset of the meta topic's only partition. */
  metaEndOffset(): Promise<string>;
  /**
   * Ends of NAME.meta and NAME.log that hold every write acknowledged anywhere before `arrived`
   * (systemClock.monotonic() when the read arrived), from a shared refresh (reads/cluster-ends.ts).
   */
  endsForRead(arrived: number): Promise<{ meta: string; log: ReadonlyMap<number, string> }>;
  /**
   * The end of NAME.meta that holds every schema and key change acknowledged anywhere before
   * `arrived` (a write's wait for meta): a read's refresh young enough, else one of the meta topic
   * alone, which keeps no refreshes young in the background (ClusterEnds.forMeta).
   */
  metaEndForWrite(arrived: number): Promise<string>;
  /**
   * Resolves once this node has applied the partition up to `next` (position ≥ next); rejects
   * with a DomainError('unavailable') when the node does not hold it or `signal` aborts.
   */
  waitApplied(topic: ClusterTopic, partition: number, next: string, signal?: AbortSignal): Promise<void>;
  /** An HTTP request to another member (with the members' token when --auth-token-file is set). */
  memberFetch(url: string, init?: RequestInit): Promise<Response>;
  /**
   * A JSON POST to a member over a kept-alive connection (the read fan-out's calls), with the
   * members' token; a connection failure counts against the member as memberFetch's do.
   */
  memberPost(url: string, body: string, signal?: AbortSignal): Promise<{ status: number; text: string }>;
  /**
   * memberPost resolving at the answer's head, its body read by the caller as it arrives (a
   * member's binary partials of a big answer). Absent (a test double): reads use memberPost.
   */
  memberPostStream?(
    url: string,
    body: string,
    signal?: AbortSignal,
  ): Promise<{ status: number; contentType: string; body: AsyncIterable<Uint8Array> }>;
  /** Whether a member answers now (its probes and calls, membership/health.ts); this node always does. */
  isLive(id: string): boolean;
}

/** Kafka's reachability as requests see it (membership/broker-watch.ts). */
export interface KafkaGate {
  /** ms since the epoch when the broker became unreachable; undefined while it answers. */
  downSince(): number | undefined;
  /**
   * Runs a step that needs Kafka: refused (503) at once while the broker is unreachable, answered
   * 503 the moment it becomes so, and a failure that is not a DomainError becomes one sentence
   * instead of the client library's text: `failed` when given (what the step's caller can say, such
   * as "acknowledged but not applied yet"), else the watch's own.
   */
  through<T>(step: () => Promise<T>, failed?: string): Promise<T>;
  /** As through(), leaving the step's own failures as they are (a step that is more than Kafka calls). */
  untilDown<T>(step: () => Promise<T>, failed?: string): Promise<T>;
}
