// The engine: decide → apply → stage → durable → answer. Every state change passes through
// write(); reads go through read() so that no answer depends on a write that is not yet durable.
import type { Logger } from 'pino';
import { DomainError } from '../domain/errors.js';
import { encodeEvent } from '../events/codec.js';
import type { Event, EventSink } from '../events/types.js';
import { apply } from '../state/apply.js';
import type { Holder } from '../state/holder.js';
import { CommitQueue } from './commit-queue.js';
import type { LogStore, SnapshotFiles } from './ports.js';
import { RetentionPolicy } from './retention.js';
import { encodeSnapshot } from './snapshot-codec.js';
import { noteWrite } from '../util/write-scope.js';

export type Lifecycle = 'STARTING' | 'NORMAL' | 'STOPPING' | 'FAILED';

export interface EngineOptions {
  snapshotEveryEvents: number;
  snapshotEveryBytes: number;
  /** Replicas apply only what they consume: local writes are refused with this message. */
  readOnlyReason?: string;
}

export class Engine {
  state: Lifecycle = 'NORMAL';
  readonly queue: CommitQueue;
  readonly retention = new RetentionPolicy();
  private eventsSinceSnapshot = 0;
  private bytesSinceSnapshot = 0;
  private snapshotting: Promise<number> | undefined;
  readonly snapshotStats = { count: 0, lastSeq: 0, lastBytes: 0, lastMs: 0 };

  constructor(
    readonly holder: Holder,
    readonly log: LogStore,
    readonly snapshots: SnapshotFiles,
    readonly options: EngineOptions,
    private readonly logger: Logger,
    onFatal: (err: Error) => void,
  ) {
    this.queue = new CommitQueue(log, log.lastSeq, (err) => {
      this.state = 'FAILED';
      onFatal(err);
    });
  }

  /**
   * Runs `decide` against the current state. Events it emits are applied at once (later calls of
   * the same request see them) and staged as one group; the promise settles once they are
   * durable. If decide throws after emitting, what it emitted stays applied and is committed
   * (memory and log never diverge); decide validates before it emits, so bad input emits nothing.
   */
  async write<T>(decide: (holder: Holder, sink: EventSink) => T, opts: { replicated?: boolean } = {}): Promise<T> {
    this.checkWritable(opts.replicated === true);
    const sink: EventSink = { emit: (e) => this.emit(e) };
    let result: T | undefined;
    let error: unknown;
    const before = this.queue.lastAssignedSeq;
    try {
      result = decide(this.holder, sink);
    } catch (err) {
      error = err;
    }
    // decide is synchronous: whatever was staged since `before` is this request's.
    if (this.queue.lastAssignedSeq > before) noteWrite(this.queue.lastAssignedSeq);
    await this.queue.whenDurable(this.queue.lastAssignedSeq);
    this.maybeSnapshot();
    if (error !== undefined) throw error;
    return result as T;
  }

  /** Stages metadata (e.g. Kafka offsets) in the batch of the events emitted with it. */
  emitMeta(key: string, value: Uint8Array | null): void {
    this.queue.stageMeta(key, value);
  }

  /** Runs a read; answers only once everything it could have seen is durable. */
  async read<T>(fn: (holder: Holder) => T): Promise<T> {
    const result = fn(this.holder);
    await this.queue.whenDurable(this.queue.lastAssignedSeq);
    return result;
  }

  /** Async reads (large queries that yield between shards) also wait for durability. */
  async readAsync<T>(fn: (holder: Holder) => Promise<T>): Promise<T> {
    const result = await fn(this.holder);
    await this.queue.whenDurable(this.queue.lastAssignedSeq);
    return result;
  }

  private emit(e: Event): void {
    const rec = encodeEvent(e);
    apply(this.holder, e);
    this.holder.appliedSeq = this.queue.stage(rec);
    this.eventsSinceSnapshot++;
    this.bytesSinceSnapshot += rec.payload.byteLength;
  }

  private checkWritable(replicated: boolean): void {
    if (this.state === 'FAILED') throw new DomainError('unavailable', 'server is failing after a storage error; restart it');
    if (this.state === 'STOPPING') throw new DomainError('unavailable', 'server is shutting down');
    // A replica refusing a write is the client's mistake (wrong node), not an outage: 405, not 503.
    if (this.options.readOnlyReason !== undefined && !replicated) throw new DomainError('method_not_allowed', this.options.readOnlyReason);
  }

  private maybeSnapshot(): void {
    if (this.snapshotting !== undefined) return;
    if (this.eventsSinceSnapshot < this.options.snapshotEveryEvents && this.bytesSinceSnapshot < this.options.snapshotEveryBytes) return;
    void this.snapshot().catch((err: unknown) => this.logger.error({ err: String(err) }, 'snapshot failed; will retry after more writes'));
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
    // Encoded synchronously: the body is the state at exactly `seq`.
    const body = encodeSnapshot(this.holder);
    this.eventsSinceSnapshot = 0;
    this.bytesSinceSnapshot = 0;
    // Never publish a snapshot that is ahead of the durable log.
    await this.queue.whenDurable(seq);
    const { bytes } = await this.snapshots.write(seq, body.chunks);
    const all = await this.snapshots.list();
    await this.snapshots.prune(this.retention.keptSnapshots(all));
    const releasable = this.retention.releasableUpTo(all);
    if (releasable > 0) await this.log.releaseUpTo(releasable);
    const ms = Math.round(performance.now() - started);
    Object.assign(this.snapshotStats, { count: this.snapshotStats.count + 1, lastSeq: seq, lastBytes: bytes, lastMs: ms });
    this.logger.info({ seq, bytes, events: body.events, ms, released: releasable }, 'snapshot written');
    return seq;
  }

  /** Graceful stop: refuse new writes, let staged ones become durable, finish a running snapshot. */
  async stop(): Promise<void> {
    if (this.state === 'FAILED') return;
    this.state = 'STOPPING';
    await this.queue.drain();
    if (this.snapshotting) await this.snapshotting.catch(() => undefined);
  }
}
