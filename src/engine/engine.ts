// The engine: decide → apply → stage → durable → answer (docs/ARCHITECTURE.md, "The write
// pipeline"). Every state change passes through write(); reads go through read() so that no
// answer depends on a write that is not yet durable. The holder, commit queue, log store,
// snapshot files and retention policy are private: followers of the log, consumer cursors and
// snapshot control use the ports in ports.ts (committedLog, cursors, snapshots).
import { HeapTrimmer, type TrimFigures } from '../util/heap-trim.js';
import type { Logger } from 'pino';
import { DomainError } from '../domain/errors.js';
import { encodeEvent } from '../events/codec.js';
import { PreparedEvent } from '../events/prepared.js';
import type { Event, EventSink } from '../events/types.js';
import { apply } from '../state/apply.js';
import type { Holder } from '../state/holder.js';
import { CommitQueue, type CommitStats, commitQueueOptionsFromEnv } from './commit-queue.js';
import { EngineCommittedLog, EngineCursorStore } from './committed-log.js';
import { EngineHistory } from './history-control.js';
import type {
  CommittedLog,
  CursorStore,
  HistoryControl,
  LogStore,
  SnapshotControl,
  SnapshotFiles,
  SnapshotStats,
} from './ports.js';
import { RetentionPolicy, type HistoryWindow } from './retention.js';
import { captureSnapshot } from './snapshot-codec.js';
import { type ApplyScope, currentApplyScope, noteWrite } from '../util/write-scope.js';

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

export type Lifecycle = 'STARTING' | 'NORMAL' | 'STOPPING' | 'FAILED';

export interface EngineOptions {
  snapshotEveryEvents: number;
  snapshotEveryBytes: number;
  /** Replicas apply only what they consume: local writes are refused with this message. */
  readOnlyReason?: string;
  /** Refuses writes (507) while the disk is below its reserve, before anything is applied. */
  diskSpace?: { shortfall(snapshotBytes: number): string | undefined };
  /** What retention keeps for point-in-time restores and time-travel reads. */
  history?: HistoryWindow;
}

export class Engine {
  private lifecycle: Lifecycle = 'NORMAL';
  private readonly queue: CommitQueue;
  private readonly retention: RetentionPolicy;
  private eventsSinceSnapshot = 0;
  private bytesSinceSnapshot = 0;
  private snapshotting: Promise<number> | undefined;
  /**
   * Settles once the group staged by writePrepared() is durable and applied. Until then later
   * writes wait: they decide against the state, and the state must hold every earlier group.
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

  constructor(
    private readonly holder: Holder,
    private readonly log: LogStore,
    private readonly snapshotFiles: SnapshotFiles,
    private readonly options: EngineOptions,
    private readonly logger: Logger,
    onFatal: (err: Error) => void,
  ) {
    this.retention = new RetentionPolicy(2, options.history);
    this.trimmer = new HeapTrimmer(logger);
    this.queue = new CommitQueue(
      log,
      log.lastSeq,
      (err) => {
        this.lifecycle = 'FAILED';
        onFatal(err);
      },
      commitQueueOptionsFromEnv(process.env),
    );
    this.committedLog = new EngineCommittedLog(this.queue, log, this.retention);
    this.cursors = new EngineCursorStore(this.queue, log);
    this.history = new EngineHistory(this.queue, log, snapshotFiles, logger);
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

  /** Set on a replica: local writes are refused with this message. */
  get readOnlyReason(): string | undefined {
    return this.options.readOnlyReason;
  }

  /**
   * Runs `decide` against the current state. Events it emits are applied at once (later calls of
   * the same request see them) and staged as one group; the promise settles once they are
   * durable. If decide throws after emitting, what it emitted stays applied and is committed
   * (memory and log never diverge); decide validates before it emits, so bad input emits nothing.
   */
  async write<T>(decide: (holder: Holder, sink: EventSink) => T, opts: { replicated?: boolean } = {}): Promise<T> {
    while (this.deferred !== undefined) await this.deferred;
    const applying = currentApplyScope();
    this.checkWritable(opts.replicated === true || applying !== undefined);
    const sink: EventSink = { emit: (e) => this.emit(e) };
    let result: T | undefined;
    let error: unknown;
    const before = this.queue.lastAssignedSeq;
    try {
      const opening = openingOf(applying);
      if (opening !== undefined) this.emit(opening);
      result = decide(this.holder, sink);
    } catch (err) {
      error = err;
    } finally {
      // A command applied from a topic: its position rides in the same group (or, when it
      // emitted nothing, in a group of its own right here), so a replay never applies it twice.
      if (applying !== undefined) {
        for (const c of applying.cursors) this.queue.stageMeta(c.key, c.value);
        applying.staged = true;
      }
      this.queue.endGroup(); // the request's events are one group: never split across batches
    }
    // decide is synchronous: whatever was staged since `before` is this request's.
    if (this.queue.lastAssignedSeq > before) noteWrite(this.queue.lastAssignedSeq);
    await this.queue.whenDurable(this.queue.lastAssignedSeq);
    this.maybeSnapshot();
    if (error !== undefined) throw error;
    return result as T;
  }

  /**
   * Commits events built and encoded beforehand (PreparedEvent.of: a large import does that off
   * to the side, yielding). `decide` checks them against the current state — throwing as a
   * decider does — and returns them, or undefined when the state changed under them in a way
   * they cannot follow (the caller then decides afresh with write(); resolves false).
   *
   * They are staged as one group in one short step and applied, by apply() in their order, only
   * once durable: until then reads answer from the state before them without waiting for them
   * (a read never sees an import before it is durable), and later writes wait, since they must
   * decide against a state that holds every earlier group. Resolves once applied.
   */
  async writePrepared(decide: (holder: Holder) => readonly PreparedEvent[] | undefined): Promise<boolean> {
    while (this.deferred !== undefined) await this.deferred;
    const applying = currentApplyScope();
    this.checkWritable(applying !== undefined);
    const decided = decide(this.holder);
    if (decided === undefined) return false;
    if (decided.length === 0) return true;
    const opening = openingOf(applying);
    const events = opening === undefined ? decided : [PreparedEvent.of(opening), ...decided];
    let last = 0;
    for (const p of events) {
      last = this.queue.stage(p.record);
      this.eventsSinceSnapshot++;
      this.bytesSinceSnapshot += p.record.payload.byteLength;
      this.trimmer.note(p.record.payload.byteLength);
    }
    // A command applied from a cluster topic: its position rides in this group (see write()).
    if (applying !== undefined) {
      for (const c of applying.cursors) this.queue.stageMeta(c.key, c.value);
      applying.staged = true;
    }
    this.queue.endGroup();
    noteWrite(last);
    let settle = (): void => undefined;
    this.deferred = new Promise<void>((resolve) => (settle = resolve));
    try {
      await this.queue.whenDurable(last);
      for (const p of events) apply(this.holder, p.event);
      this.holder.appliedSeq = last;
    } finally {
      this.deferred = undefined;
      settle();
    }
    this.maybeSnapshot();
    return true;
  }

  /**
   * Runs a read; answers only once everything it could have seen is durable: the state applied
   * so far (a prepared group staged but not yet applied is not part of it).
   */
  async read<T>(fn: (holder: Holder) => T): Promise<T> {
    const result = fn(this.holder);
    await this.queue.whenDurable(this.holder.appliedSeq);
    return result;
  }

  /** Async reads (large queries that yield between shards) also wait for durability. */
  async readAsync<T>(fn: (holder: Holder) => Promise<T>): Promise<T> {
    const result = await fn(this.holder);
    await this.queue.whenDurable(this.holder.appliedSeq);
    return result;
  }

  /**
   * Runs `fn` on the applied state now, without waiting for durability: it may see writes that
   * are not yet durable (and would be lost in a crash). Only for decisions that a later
   * write()/read() validates again or that answer nothing about the data (legacy call naming,
   * ingest positions, status, cache recalculation); an answer to a client goes through read().
   */
  peekApplied<T>(fn: (holder: Holder) => T): T {
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

  private checkWritable(replicated: boolean): void {
    if (this.state === 'FAILED')
      throw new DomainError('unavailable', 'server is failing after a storage error; restart it');
    if (this.state === 'STOPPING') throw new DomainError('unavailable', 'server is shutting down');
    // A replica refusing a write is the client's mistake (wrong node), not an outage: 405, not 503.
    if (this.options.readOnlyReason !== undefined && !replicated)
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
    const started = performance.now();
    const seq = this.holder.appliedSeq;
    // Captured synchronously: the body is the state at exactly `seq` (encoded as it is written).
    const body = captureSnapshot(this.holder);
    this.eventsSinceSnapshot = 0;
    this.bytesSinceSnapshot = 0;
    // Never publish a snapshot that is ahead of the durable log.
    await this.queue.whenDurable(seq);
    const { bytes } = await this.snapshotFiles.write(seq, body.chunks, await this.log.commitTime(seq));
    const plan = await this.retention.plan(await this.snapshotFiles.infos(), Date.now(), (after) =>
      this.logBytesAfter(after),
    );
    await this.snapshotFiles.prune(plan.keptSnapshots);
    const releasable = plan.releasableUpTo;
    if (releasable > 0) await this.log.releaseUpTo(releasable);
    const ms = Math.round(performance.now() - started);
    Object.assign(this.snapshotStats, {
      count: this.snapshotStats.count + 1,
      lastSeq: seq,
      lastBytes: bytes,
      lastMs: ms,
      lastAt: Date.now(),
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

  /** Graceful stop: refuse new writes, let staged ones become durable, finish a running snapshot. */
  async stop(): Promise<void> {
    if (this.lifecycle === 'FAILED') return;
    this.lifecycle = 'STOPPING';
    this.trimmer.stop();
    await this.queue.drain();
    if (this.snapshotting) await this.snapshotting.catch(() => undefined);
  }
}

/** The event that opens every group of a command applied from a cluster topic (its CommandApplied). */
function openingOf(scope: ApplyScope | undefined): Event | undefined {
  const e = scope?.opening;
  if (e === undefined) return undefined;
  if (typeof e !== 'object' || e === null || (e as { type?: unknown }).type !== 'CommandApplied')
    throw new Error('apply scope: the opening event must be a CommandApplied');
  return e as Event;
}
