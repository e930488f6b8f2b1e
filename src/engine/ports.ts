// What the engine needs from storage, as interfaces: the engine is tested against the real
// LevelDB-backed implementations, but does not depend on their construction.
import type { Publication } from '../state/published.js';
import type { CommitBatch } from '../storage/commit-times.js';
import type { SnapshotInfo } from '../storage/snapshot-store.js';
import type { PreparedEvent } from '../events/prepared.js';
import type { Event, EventSink } from '../events/types.js';
import type { ReadonlyHolder } from '../state/readonly.js';
import type { LogAppender } from './commit-queue.js';

export interface LogRecord {
  seq: number;
  type: number;
  payload: Uint8Array;
}

export interface TimedRecord extends LogRecord {
  /** Commit time in ms of the record's group commit; null when unknown (written before format 3). */
  timeMs: number | null;
}

export interface LogStore extends LogAppender {
  readonly lastSeq: number;
  readonly firstSeq: number;
  read(fromSeq: number, toSeq?: number): AsyncIterable<LogRecord>;
  readBatches(fromSeq: number, toSeq?: number): AsyncIterable<LogRecord[]>;
  releaseUpTo(seq: number): Promise<void>;
  getMeta(key: string): Promise<Uint8Array | undefined>;
  /** Optional: how appends are flushed (shown to operators). */
  readonly fsyncPolicy?: { policy: string; intervalMs?: number };
  /** Commit time (ms) of record `seq`; undefined when unknown. */
  commitTime(seq: number): Promise<number | undefined>;
  /** The last retained sequence committed at or before `timeMs` (firstSeq - 1 if none). */
  seqAtTime(timeMs: number): Promise<number>;
  /** Group commits covering fromSeq..toSeq, ascending. */
  commitBatches(fromSeq: number, toSeq?: number): AsyncIterable<CommitBatch>;
  /** Optional: closes and opens the store again (writes after a background error). */
  reopen?(): Promise<void>;
  /** Optional: makes every append so far durable (appends written unsynced: CommitContext.sync). */
  sync?(): Promise<void>;
}

export interface SnapshotFiles {
  write(seq: number, chunks: Iterable<Uint8Array>, timeMs?: number): Promise<{ bytes: number }>;
  list(): Promise<number[]>;
  /** Newest first, with commit times and file sizes. */
  infos(): Promise<SnapshotInfo[]>;
  read(seq: number): Promise<Uint8Array>;
  prune(keep: number[]): Promise<unknown>;
  /** Optional: the newest published snapshot (shown to operators). */
  newest?(): Promise<{ seq: number; bytes: number; at: Date } | undefined>;
}

// ---- The commit entry (Engine.commit): the one way anything changes the state.

/**
 * Who a commit is for. A node whose local writes are refused (a replica, a cluster member)
 * refuses 'client' commits only: 'replica' and 'cluster' apply what a topic carries, 'server'
 * is the server's own bookkeeping (the Kafka mirror's position).
 */
export type CommitOrigin = 'client' | 'replica' | 'cluster' | 'server';

/** A consumer position written in the log's metadata, in the batch of the commit's events. */
export interface CursorWrite {
  readonly key: string;
  /** null deletes. */
  readonly value: Uint8Array | null;
}

/**
 * Looks at the state (read-only) and emits events into the sink. It validates before it emits:
 * a DomainError thrown after an emit is a broken invariant (Engine.commit asserts it), since the
 * events already emitted are applied and committed.
 */
export type Decider<T> = (state: ReadonlyHolder, sink: EventSink) => T;

/**
 * Checks events built beforehand (PreparedEvent) against the state and returns them, or
 * undefined when the state changed under them in a way they cannot follow (nothing is
 * committed; the caller decides afresh).
 */
export type PreparedDecider = (state: ReadonlyHolder) => readonly PreparedEvent[] | undefined;

/**
 * What a commit carries besides its events: positions and who asks. A use case that a consumer
 * runs (the cluster applier runs schema changes and imports) takes one and passes it on.
 */
export interface CommitContext {
  /** Written in the same batch as the events, or in a group of their own when there are none. */
  readonly cursors?: readonly CursorWrite[];
  /** Default 'client'. */
  readonly origin?: CommitOrigin;
  /**
   * Cluster mode: the CommandApplied of the command this commit applies (events/types.ts). It is
   * staged after the commit's events, in their group (alone when there are none), so the log
   * says which command every record came from (engine/command-time.ts).
   */
  readonly applied?: Extract<Event, { type: 'CommandApplied' }>;
  /**
   * Whether the commit's batch is synced as the node's --fsync policy says (default true). false
   * only for a commit that can be rebuilt from elsewhere after a crash: a cluster command, which
   * Kafka holds durably before anyone waits for its apply; the log is synced within a second
   * after it, or sooner by any synced commit (storage/event-log.ts, AppendOptions.sync).
   */
  readonly sync?: boolean;
}
type CommitCommon = CommitContext;

/** Events decided now, applied at once, answered once durable. */
export interface DecidedCommit<T> extends CommitCommon {
  readonly decide: Decider<T>;
}

/** Events prepared beforehand, staged in one step, applied once durable. */
export interface PreparedCommit extends CommitCommon {
  readonly prepared: PreparedDecider;
}

/** Positions alone (a command that changed nothing still moves its consumer on). */
export interface CursorCommit extends CommitCommon {
  readonly cursors: readonly CursorWrite[];
  /**
   * Ride in the next batch instead of writing one now (the mirror's position may lag): resolves
   * once a later batch made it durable.
   */
  readonly lazy?: boolean;
}

// ---- What the engine offers to the rest of the server (ports out). Everything outside engine/
// that follows the log, keeps a consumer position or controls snapshots goes through these; the
// holder, the commit queue, the log store and the retention policy stay private to the engine.

/** A named retention hold: the log keeps records from `keepFrom()` on until it is released. */
export interface RetentionHandle {
  /** Drops the hold; records it kept may go at the next snapshot. */
  release(): void;
}

/**
 * The committed log as its followers see it (Kafka mirror and replica; backup, point-in-time
 * restore and the cluster next): durable records in sequence order, a signal when more become
 * durable, ranged reads, and retention holds so that a lagging follower misses nothing.
 */
export interface CommittedLog {
  /** Highest sequence durable per the fsync policy: followers never read beyond it. */
  readonly durableSeq: number;
  /** Lowest sequence still retained (records below it were released after a snapshot). */
  readonly firstRetainedSeq: number;
  /** Calls `listener` after every durable batch with the new durable sequence; returns an unsubscribe. */
  onDurable(listener: (durableSeq: number) => void): () => void;
  /** Durable records fromSeq..toSeq (inclusive, clamped to durableSeq), in order. */
  read(fromSeq: number, toSeq?: number): AsyncIterable<LogRecord>;
  /** The same records with their commit times (null: unknown), for followers that carry them on. */
  readTimed(fromSeq: number, toSeq?: number): AsyncIterable<TimedRecord>;
  /** Keeps records with seq >= keepFrom() (asked at each release) until the handle is released. */
  hold(name: string, keepFrom: () => number): RetentionHandle;
}

/**
 * Consumer positions (Kafka mirror and replica cursors, cluster partitions) kept in the log's
 * metadata, never in a file of their own. They are written by Engine.commit({ cursors }), in
 * the LevelDB batch of the events they go with, so a position and the records it covers become
 * durable together.
 */
export interface CursorStore {
  /** The durable value of `key` (undefined when never written). */
  get(key: string): Promise<Uint8Array | undefined>;
}

export interface SnapshotStats {
  count: number;
  lastSeq: number;
  lastBytes: number;
  lastMs: number;
  /** Wall-clock ms when the last snapshot was written (0: none since start). */
  lastAt: number;
}

/** Snapshot control: take one now, list and read the retained ones. */
export interface SnapshotControl {
  /** Writes a snapshot of the current state; resolves with its sequence. */
  take(): Promise<number>;
  /** Retained snapshot sequences, newest first. */
  list(): Promise<number[]>;
  /** The encoded body of the snapshot at `seq`. */
  read(seq: number): Promise<Uint8Array>;
  /** The newest retained snapshot's sequence, size and write time (undefined when none). */
  newest(): Promise<{ seq: number; bytes: number; at: Date } | undefined>;
  readonly stats: Readonly<SnapshotStats>;
}

/**
 * Point-in-time history (restore, backup, time-travel reads): the restorable window, targets
 * resolved against it, past states materialized beside the live one, and the durable log as
 * group commits with their commit times.
 */
export interface HistoryControl {
  /** Oldest and newest restorable point, and the retained snapshots (newest first). */
  window(): Promise<History>;
  /** The sequence `target` names; throws HistoryRangeError (naming the window) when outside it. */
  resolve(target: Target): Promise<number>;
  /** A separate holder with the state as of `seq`, from a small LRU; the live state is never touched. */
  stateAt(seq: number): Promise<ReadonlyHolder>;
  /**
   * Cluster mode: a separate holder with every cluster partition this node applied as of its last
   * command stamped at or before `timeMs` (engine/command-time.ts); HistoryRangeError when this
   * node keeps no state from which that can be rebuilt.
   */
  commandStateAt(timeMs: number): Promise<ReadonlyHolder>;
  /** Durable records fromSeq..toSeq as group commits with their times. */
  batches(fromSeq: number, toSeq: number): AsyncIterable<TimedBatch>;
  /** The encoded body of the retained snapshot at `seq`. */
  snapshotBody(seq: number): Promise<Uint8Array>;
}

export interface HistoryPoint {
  readonly seq: number;
  /** ms; undefined when unknown (seq 0, or records from before commit times were stored). */
  readonly timeMs: number | undefined;
}

export interface History {
  readonly oldest: HistoryPoint;
  readonly newest: HistoryPoint;
  /** Newest first. */
  readonly snapshots: readonly SnapshotInfo[];
}

export type Target = { readonly seq: number } | { readonly timeMs: number };

/** Records committed together; timeMs null: written before commit times existed. */
export interface TimedBatch {
  readonly timeMs: number | null;
  readonly records: LogRecord[];
}

/**
 * The state for query worker threads (engine/frozen-feed.ts): `enable()` turns publication on
 * and answers the whole state (call it while the applied state is durable: at startup);
 * `durable()` answers the publications of every write group durable since the last call, in
 * order. A worker that has applied them all holds exactly the durable state.
 */
export interface StatePublisher {
  readonly enabled: boolean;
  enable(): Publication;
  durable(): Publication[];
  /** Every applied change was handed out by durable(): its readers hold the applied state. */
  readonly handedOut: boolean;
}
