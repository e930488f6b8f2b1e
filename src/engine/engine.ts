// The engine: decide → apply → stage → durable → answer (docs/ARCHITECTURE.md, "The write
// pipeline"). Every state change passes through commit(); reads go through read() so that no
// answer depends on a write that is not yet durable. The holder, commit queue, log store,
// snapshot files and retention policy are private: followers of the log, consumer cursors and
// snapshot control use the ports in ports.ts (committedLog, cursors, snapshots).
import { HeapTrimmer, type TrimFigures } from '../util/heap-trim.js';
import type { Logger } from 'pino';
import { DomainError } from '../domain/errors.js';
import { encodeEvent } from '../events/codec.js';
import { PreparedEvent } from '../events/prepared.js';
import type { Event, EventSink } from '../events/types.js';
import { apply } from '../events/apply.js';
import type { Holder } from '../state/holder.js';
import type { ReadonlyHolder } from '../state/readonly.js';
import { AssertionError } from '../util/assert.js';
import { type Clock, systemClock } from '../util/clock.js';
import { CommitQueue, type CommitQueueOptions, type CommitStats } from './commit-queue.js';
import { EngineCommittedLog, EngineCursorStore } from './committed-log.js';
import { FrozenFeed } from './frozen-feed.js';
import { EngineHistory } from './history-control.js';
import type {
  CommitOrigin,
  CommittedLog,
  CursorCommit,
  CursorStore,
  CursorWrite,
  DecidedCommit,
  Decider,
  HistoryControl,
  LogStore,
  PreparedCommit,
  PreparedDecider,
  SnapshotControl,
  StatePublisher,
  SnapshotFiles,
  SnapshotStats,
} from './ports.js';
import { RetentionPolicy, type HistoryWindow } from './retention.js';
import { captureSnapshot } from './snapshot-codec.js';
import { recoverFromStall } from './write-stall.js';

export interface LogFigures {
  /** Highest sequence staged (applied in memory, or a prepared group waiting to be durable). */
  assignedSeq: number;
  durableSeq: number;
  firstSeq: number;
  lastSeq: number;
  fsync: { policy: string; intervalMs?: number } | undefined;
  /** Group commits, records and bytes appended since start. */
  commits: Readonly<CommitStats>;
}

/**
 * An engine exists only once its state is loaded (bootstrap), so it starts NORMAL; the startup
 * before it is the HTTP startup handler's STARTING (http/startup-handler.ts). STALLED: writes
 * refused for lack of space, reads go on, until LevelDB reopens (write-stall.ts).
 */
export type Lifecycle = 'NORMAL' | 'STALLED' | 'STOPPING' | 'FAILED';

export interface EngineOptions {
  snapshotEveryEvents: number;
  snapshotEveryBytes: number;
  /** Replicas apply only what they consume: local writes are refused with this message. */
  readOnlyReason?: string;
  /** Refuses writes (507) while the disk is below its reserve, before anything is applied. */
  diskSpace?: { shortfall(snapshotBytes: number): string | undefined };
  /** What retention keeps for point-in-time restores and time-travel reads. */
  history?: HistoryWindow;
  /** Every time the engine, its commit queue, snapshots and trimmer read (default: the system's). */
  clock?: Clock;
  /** Batch limit and the commit queue's test hooks (src/config/test-hooks.ts). */
  commitQueue?: Partial<Omit<CommitQueueOptions, 'clock'>>;
  /** false: never return freed memory to the kernel (the simulator: a trim ends at a real time). */
  heapTrim?: boolean;
}

export class Engine {
  private lifecycle: Lifecycle = 'NORMAL';
  private readonly queue: CommitQueue;
  private readonly retention: RetentionPolicy;
  private eventsSinceSnapshot = 0;
  private bytesSinceSnapshot = 0;
  private snapshotting: Promise<number> | undefined;
  /**
   * Settles once a prepared group is durable and applied. Until then later commits wait: they
   * decide against the state, and the state must hold every earlier group.
   */
  private deferred: Promise<void> | undefined;
  private readonly snapshotStats: SnapshotStats = { count: 0, lastSeq: 0, lastBytes: 0, lastMs: 0, lastAt: 0 };
  /** Gives memory that bulk writes and snapshots freed back to the kernel once they go quiet. */
  private readonly trimmer: HeapTrimmer;
  /** Followers of the durable log (Kafka mirror; backup and point-in-time restore next). */
  readonly committedLog: CommittedLog;
  /** Consumer positions, written in the batch of the events they go with. */
  readonly cursors: CursorStore;
  /** Take a snapshot now, list and read the retained ones. */
  readonly snapshots: SnapshotControl;
  /** Point-in-time history: the window, past states, the log with commit times. */
  readonly history: HistoryControl;
  /** The clock of everything on the engine's path (services slice and time their work by it). */
  readonly clock: Clock;
  /** Called with the last sequence of every commit that staged records, before it waits. */
  private readonly stagedListeners: ((lastSeq: number) => void)[] = [];
  private readonly feed: FrozenFeed;
  /** The state for query worker threads (off until enabled). */
  readonly publisher: StatePublisher;

  constructor(
    private holder: Holder,
    private readonly log: LogStore,
    private readonly snapshotFiles: SnapshotFiles,
    private readonly options: EngineOptions,
    private readonly logger: Logger,
    onFatal: (err: Error) => void,
  ) {
    this.clock = options.clock ?? systemClock;
    this.retention = new RetentionPolicy(2, options.history);
    this.trimmer = new HeapTrimmer(logger, this.clock, options.heapTrim === false);
    this.queue = new CommitQueue(
      log,
      log.lastSeq,
      (err) => {
        this.lifecycle = 'FAILED';
        onFatal(err);
      },
      { ...options.commitQueue, clock: this.clock },
    );
    // A store that can reopen (LevelDB) stalls writes on a full disk instead of failing.
    if (log.reopen !== undefined) this.queue.onStall = (err) => this.stall(err);
    this.committedLog = new EngineCommittedLog(this.queue, log, this.retention);
    this.cursors = new EngineCursorStore(log);
    this.history = new EngineHistory(this.queue, log, snapshotFiles, logger, this.clock);
    this.feed = new FrozenFeed(holder);
    const feed = this.feed;
    const queue = this.queue;
    this.publisher = {
      get enabled() {
        return feed.enabled;
      },
      enable: () => feed.enable(),
      durable: () => feed.takeDurable(queue.durableSeq),
      get handedOut() {
        return feed.handedOut;
      },
    };
    const stats = this.snapshotStats;
    this.snapshots = {
      take: () => this.snapshot(),
      list: () => snapshotFiles.list(),
      read: (seq) => snapshotFiles.read(seq),
      newest: async () => snapshotFiles.newest?.(),
      stats,
    };
  }

  get state(): Lifecycle {
    return this.lifecycle;
  }

  /** Sequence of the last event applied in memory (durable or about to be). */
  get appliedSeq(): number {
    return this.holder.appliedSeq;
  }

  /** Figures for operators (status pages, metrics, the console): sequences, totals, the fsync policy. */
  logFigures(): LogFigures {
    const q = this.queue;
    return {
      assignedSeq: q.lastAssignedSeq,
      durableSeq: q.durableSeq,
      firstSeq: this.log.firstSeq,
      lastSeq: this.log.lastSeq,
      fsync: this.log.fsyncPolicy,
      commits: q.stats,
    };
  }

  /** Memory returned to the kernel after bulk writes (util/heap-trim.ts), for /metrics. */
  trimFigures(): TrimFigures {
    return this.trimmer.figures;
  }

  /** Calls `listener` after every group commit with its record count and append time (metrics). */
  onCommit(listener: (records: number, ms: number) => void): void {
    this.queue.batchListeners.push(listener);
  }

  /**
   * Calls `listener` synchronously inside every commit that staged records, with its last
   * sequence, before the commit waits for durability: the caller's async context is the
   * request's (the Kafka mirror acknowledgement waits for what a request wrote).
   */
  onStaged(listener: (lastSeq: number) => void): void {
    this.stagedListeners.push(listener);
  }

  /** Set on a replica: local writes are refused with this message. */
  get readOnlyReason(): string | undefined {
    return this.options.readOnlyReason;
  }

  /**
   * The one way the state changes (docs/ARCHITECTURE.md, "The write pipeline"):
   * - `decide`: runs against the current state (read-only); events it emits are applied at once
   *   (later calls of the same request see them) and staged as one group; resolves with what
   *   decide returned once they are durable;
   * - `prepared`: events built and encoded beforehand (a large import), checked against the
   *   state, staged as one group in one step and applied once durable; resolves true once
   *   applied, or false when they were stale (nothing committed: decide afresh);
   * - `cursors` alone: consumer positions in a group of their own.
   * `cursors` ride in the group of the events; `origin` says who asks (a read-only node refuses
   * 'client' commits). A DomainError (bad input, refused) means nothing was committed.
   */
  commit<T>(req: DecidedCommit<T>): Promise<T>;
  commit(req: PreparedCommit): Promise<boolean>;
  commit(req: CursorCommit): Promise<void>;
  async commit<T>(req: DecidedCommit<T> | PreparedCommit | CursorCommit): Promise<T | boolean | undefined> {
    const cursors = req.cursors ?? [];
    // Decided in the caller's turn when nothing is pending (no await before it): a commit
    // called before a read or a stop is decided before them.
    const sync = req.sync !== false;
    if ('decide' in req) {
      while (this.deferred !== undefined) await this.deferred;
      this.checkWritable(req.origin);
      return this.commitDecided(req.decide, cursors, sync, req.applied);
    }
    if ('prepared' in req) {
      while (this.deferred !== undefined) await this.deferred;
      this.checkWritable(req.origin);
      return this.commitPrepared(req.prepared, cursors, sync, req.applied);
    }
    // Positions do not decide against the state: they need not wait for a prepared group.
    this.checkWritable(req.origin);
    if (req.applied !== undefined) {
      // A command that changed nothing: its CommandApplied still goes in, with its position.
      const applied = req.applied;
      return this.commitDecided(() => undefined, cursors, sync, applied);
    }
    await this.commitCursors(cursors, sync, req.lazy === true);
    return undefined;
  }

  private async commitDecided<T>(
    decide: Decider<T>,
    cursors: readonly CursorWrite[],
    sync: boolean,
    applied?: Event,
  ): Promise<T> {
    const sink: EventSink = { emit: (e) => this.emit(e) };
    const before = this.queue.lastAssignedSeq;
    let result: T;
    try {
      result = decide(this.holder, sink);
    } catch (err) {
      await this.afterFailedDecide(before, err);
      throw err;
    }
    // Last in the group: a command refused by its decider (nothing emitted) left nothing behind.
    if (applied !== undefined) this.emit(applied);
    for (const c of cursors) this.queue.stageMeta(c.key, c.value);
    // The request's events are one group: never split across batches.
    const group = this.queue.endGroup(sync);
    this.feed.capture(this.queue.lastAssignedSeq);
    this.noteStaged(before);
    // Also when it emitted nothing: its answer may rest on state not yet durable (the group
    // then is the last one staged, and every group before it is waited for too).
    await this.queue.whenGroupDurable(group);
    this.maybeSnapshot();
    return result;
  }

  /**
   * A decider threw. What it emitted is applied, so it is committed (memory and log never
   * diverge); a DomainError after an emit is a decider that validated too late: asserted.
   */
  private async afterFailedDecide(before: number, err: unknown): Promise<void> {
    if (this.queue.lastAssignedSeq === before) return; // nothing emitted, nothing committed
    // Synced as the policy says: a broken invariant is no time to lean on another copy.
    this.queue.endGroup(true);
    this.feed.capture(this.queue.lastAssignedSeq);
    this.noteStaged(before);
    await this.queue.whenDurable(this.queue.lastAssignedSeq);
    if (err instanceof DomainError)
      throw new AssertionError(
        `a decider emitted events and then refused the request (${err.code}: ${err.message}): deciders validate before they emit`,
      );
  }

  private async commitPrepared(
    decide: PreparedDecider,
    cursors: readonly CursorWrite[],
    sync: boolean,
    applied?: Event,
  ): Promise<boolean> {
    const decided = decide(this.holder);
    if (decided === undefined) return false;
    const events = applied === undefined ? decided : [...decided, PreparedEvent.of(applied)];
    let last = this.queue.lastAssignedSeq;
    for (const p of events) {
      last = this.queue.stage(p.record);
      this.eventsSinceSnapshot++;
      this.bytesSinceSnapshot += p.record.payload.byteLength;
      this.trimmer.note(p.record.payload.byteLength);
    }
    for (const c of cursors) this.queue.stageMeta(c.key, c.value);
    const group = this.queue.endGroup(sync);
    if (events.length > 0) for (const l of this.stagedListeners) l(last);
    let settle = (): void => undefined;
    this.deferred = new Promise<void>((resolve) => (settle = resolve));
    try {
      await this.queue.whenGroupDurable(group);
      for (const p of events) apply(this.holder, p.event);
      this.holder.appliedSeq = last;
      this.feed.capture(last);
    } finally {
      this.deferred = undefined;
      settle();
    }
    this.maybeSnapshot();
    return true;
  }

  private async commitCursors(cursors: readonly CursorWrite[], sync: boolean, lazy: boolean): Promise<void> {
    if (cursors.length === 0) return;
    for (const c of cursors) this.queue.stageMeta(c.key, c.value);
    await this.queue.whenGroupDurable(this.queue.endGroup(sync), lazy);
  }

  private noteStaged(before: number): void {
    const last = this.queue.lastAssignedSeq;
    if (last > before) for (const l of this.stagedListeners) l(last);
  }

  /**
   * Runs a read; answers only once everything it could have seen is durable: the state applied
   * so far (a prepared group staged but not yet applied is not part of it).
   */
  async read<T>(fn: (state: ReadonlyHolder) => T): Promise<T> {
    const result = fn(this.holder);
    await this.queue.whenDurable(this.holder.appliedSeq);
    return result;
  }

  /** Async reads (large queries that yield between shards) also wait for durability. */
  readAsync<T>(fn: (state: ReadonlyHolder) => Promise<T>): Promise<T> {
    // Not an async function: a read of a durable state (most) resolves without a second await,
    // which with the async function's own promise cost about 1.3 KB of garbage a query.
    return fn(this.holder).then((result) =>
      this.queue.isDurable(this.holder.appliedSeq)
        ? result
        : this.queue.whenDurable(this.holder.appliedSeq).then(() => result),
    );
  }

  /**
   * readAsync for a read that may answer now: a value `fn` returns (not a promise) of a state
   * already durable is answered as it is, with no promise (the HTTP lean path answers a small
   * query in the request's own turn); otherwise a promise, as readAsync.
   */
  readNow<T>(fn: (state: ReadonlyHolder) => T | Promise<T>): T | Promise<T> {
    const result = fn(this.holder);
    return result instanceof Promise ? result.then((r) => this.onceSeenDurable(r)) : this.onceSeenDurable(result);
  }

  /** A read's result `r`: now when everything it could have seen is durable, else once it is. */
  private onceSeenDurable<T>(r: T): T | Promise<T> {
    const seq = this.holder.appliedSeq;
    return this.queue.isDurable(seq) ? r : this.queue.whenDurable(seq).then(() => r);
  }

  /**
   * Runs `fn` on the applied state now, without waiting for durability: it may see writes that
   * are not yet durable (and would be lost in a crash). Only for decisions that a later
   * write()/read() validates again or that answer nothing about the data (legacy call naming,
   * ingest positions, status, cache recalculation); an answer to a client goes through read().
   */
  peekApplied<T>(fn: (state: ReadonlyHolder) => T): T {
    return fn(this.holder);
  }

  private emit(e: Event): void {
    const rec = encodeEvent(e);
    apply(this.holder, e);
    this.holder.appliedSeq = this.queue.stage(rec);
    this.eventsSinceSnapshot++;
    this.bytesSinceSnapshot += rec.payload.byteLength;
    this.trimmer.note(rec.payload.byteLength);
  }

  private checkWritable(origin: CommitOrigin = 'client'): void {
    if (this.state === 'STALLED' && this.stallReason !== undefined)
      throw new DomainError('insufficient_storage', this.stallReason);
    if (this.state === 'FAILED')
      throw new DomainError('unavailable', 'server is failing after a storage error; restart it');
    if (this.state === 'STOPPING') throw new DomainError('unavailable', 'server is shutting down');
    // A replica refusing a write is the client's mistake (wrong node), not an outage: 405, not 503.
    if (this.options.readOnlyReason !== undefined && origin === 'client')
      throw new DomainError('method_not_allowed', this.options.readOnlyReason);
    const full = this.options.diskSpace?.shortfall(this.snapshotStats.lastBytes);
    if (full !== undefined) throw new DomainError('insufficient_storage', full);
  }

  private maybeSnapshot(): void {
    if (this.snapshotting !== undefined) return;
    if (
      this.eventsSinceSnapshot < this.options.snapshotEveryEvents &&
      this.bytesSinceSnapshot < this.options.snapshotEveryBytes
    )
      return;
    void this.snapshot().catch((err: unknown) =>
      this.logger.error({ err: String(err) }, 'snapshot failed; will retry after more writes'),
    );
  }

  /** Writes a snapshot of the current state; resolves with its sequence. */
  snapshot(): Promise<number> {
    if (this.snapshotting) return this.snapshotting;
    this.snapshotting = this.doSnapshot().finally(() => {
      this.snapshotting = undefined;
    });
    return this.snapshotting;
  }

  private async doSnapshot(): Promise<number> {
    const started = this.clock.monotonic();
    const seq = this.holder.appliedSeq;
    // Captured synchronously: the body is the state at exactly `seq` (encoded as it is written).
    const body = captureSnapshot(this.holder);
    this.eventsSinceSnapshot = 0;
    this.bytesSinceSnapshot = 0;
    // Never publish a snapshot that is ahead of the durable log: written, and synced too when
    // commits went in unsynced (CommitContext.sync).
    await this.queue.whenDurable(seq);
    await this.log.sync?.();
    const { bytes } = await this.snapshotFiles.write(seq, body.chunks, await this.log.commitTime(seq));
    const plan = await this.retention.plan(await this.snapshotFiles.infos(), this.clock.now(), (after) =>
      this.logBytesAfter(after),
    );
    await this.snapshotFiles.prune(plan.keptSnapshots);
    const releasable = plan.releasableUpTo;
    if (releasable > 0) await this.log.releaseUpTo(releasable);
    const ms = Math.round(this.clock.monotonic() - started);
    Object.assign(this.snapshotStats, {
      count: this.snapshotStats.count + 1,
      lastSeq: seq,
      lastBytes: bytes,
      lastMs: ms,
      lastAt: this.clock.now(),
    });
    this.logger.info({ seq, bytes, events: body.events, ms, released: releasable }, 'snapshot written');
    this.trimmer.note(bytes);
    return seq;
  }

  private async logBytesAfter(seq: number): Promise<number> {
    let bytes = 0;
    for await (const b of this.log.commitBatches(seq + 1)) if (b.firstSeq > seq) bytes += b.bytes;
    return bytes;
  }

  private stallReason: string | undefined;

  /** A disk-full append: writes stop with its reason until recoverFromStall resumes them. */
  private stall(err: Error): void {
    this.lifecycle = 'STALLED';
    this.stallReason = `${err.message}; writes stay refused until free space is back above the reserve (probed every second), reads go on`;
    void recoverFromStall(
      {
        log: this.log,
        snapshots: this.snapshotFiles,
        logger: this.logger,
        clock: this.clock,
        shortfall: () => this.options.diskSpace?.shortfall(this.snapshotStats.lastBytes),
        install: (holder) => {
          this.holder = holder;
          // The query workers' feed follows: it watched the old holder's changes.
          this.feed.replace(holder);
        },
        resume: (lastSeq) => {
          this.queue.resume(lastSeq);
          this.lifecycle = 'NORMAL';
          this.stallReason = undefined;
        },
        stalled: () => this.lifecycle === 'STALLED',
      },
      err,
    ).catch((e: unknown) => {
      this.logger.error({ err: String(e) }, 'writes stay stopped: the state could not be rebuilt; restart the server');
    });
  }

  /** Graceful stop: refuse new writes, let staged ones become durable, finish a running snapshot. */
  async stop(): Promise<void> {
    if (this.lifecycle === 'FAILED') return;
    const stalled = this.lifecycle === 'STALLED';
    this.lifecycle = 'STOPPING';
    this.trimmer.stop();
    if (!stalled) await this.queue.drain();
    if (this.snapshotting) await this.snapshotting.catch(() => undefined);
  }
}
