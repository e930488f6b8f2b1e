// The single serial writer. Requests stage encoded records synchronously (in the order their
// events were applied); one append is in flight at a time, and every record staged while it runs
// goes into the next batch together (group commit). A waiter is released only once the batch
// holding its last record is durable per the fsync policy.
import type { EncodedEvent } from '../events/codec.js';
import { assert } from '../util/assert.js';

export interface LogAppender {
  append(records: EncodedEvent[], meta?: { key: string; value: Uint8Array | null }[]): Promise<{ firstSeq: number; lastSeq: number; bytes: number }>;
}

interface Waiter {
  seq: number;
  resolve: () => void;
  reject: (err: Error) => void;
}

export interface CommitStats {
  batches: number;
  records: number;
  bytes: number;
}

export class CommitQueue {
  private staged: EncodedEvent[] = [];
  private stagedMeta: { key: string; value: Uint8Array | null }[] = [];
  private waiters: Waiter[] = [];
  private inFlight = false;
  private failed: Error | undefined;
  /** Highest sequence handed out (applied in memory). */
  private assignedSeq: number;
  /** Highest sequence known durable. */
  durableSeq: number;
  readonly stats: CommitStats = { batches: 0, records: 0, bytes: 0 };
  /** Called after each durable batch with the new durable sequence (mirror, replication). */
  readonly durableListeners: ((seq: number) => void)[] = [];
  /** Called after each append with its record count and duration (metrics: group size, fsync). */
  readonly batchListeners: ((records: number, ms: number) => void)[] = [];

  constructor(
    private readonly log: LogAppender,
    lastSeq: number,
    private readonly onFatal: (err: Error) => void,
    private readonly maxBatchRecords = 50_000,
  ) {
    this.assignedSeq = lastSeq;
    this.durableSeq = lastSeq;
  }

  /** Stages one record; returns the sequence it will have in the log. */
  stage(record: EncodedEvent): number {
    this.checkHealthy();
    this.staged.push(record);
    return ++this.assignedSeq;
  }

  /** Stages a metadata write that lands in the same batch as the records staged with it. */
  stageMeta(key: string, value: Uint8Array | null): void {
    this.checkHealthy();
    this.stagedMeta.push({ key, value });
  }

  get lastAssignedSeq(): number {
    return this.assignedSeq;
  }

  /** Resolves once every record up to `seq` is durable. */
  whenDurable(seq: number): Promise<void> {
    if (this.failed) return Promise.reject(this.failed);
    if (seq <= this.durableSeq) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.waiters.push({ seq, resolve, reject });
      this.kick();
    });
  }

  /** Resolves when nothing is staged or in flight (used by shutdown and snapshots). */
  async drain(): Promise<void> {
    await this.whenDurable(this.assignedSeq);
  }

  private checkHealthy(): void {
    if (this.failed) throw this.failed;
  }

  private kick(): void {
    if (this.inFlight || (this.staged.length === 0 && this.stagedMeta.length === 0)) return;
    this.inFlight = true;
    void this.flushLoop();
  }

  private async flushLoop(): Promise<void> {
    try {
      while (this.staged.length > 0 || this.stagedMeta.length > 0) {
        // Take a batch; bounded so one giant backlog does not become one giant LevelDB write.
        const batch = this.staged.length <= this.maxBatchRecords ? this.staged : this.staged.slice(0, this.maxBatchRecords);
        this.staged = batch === this.staged ? [] : this.staged.slice(this.maxBatchRecords);
        const meta = this.stagedMeta;
        this.stagedMeta = [];
        const started = performance.now();
        const res = await this.log.append(batch, meta.length > 0 ? meta : undefined);
        for (const l of this.batchListeners) l(batch.length, performance.now() - started);
        this.stats.batches++;
        this.stats.records += batch.length;
        this.stats.bytes += res.bytes;
        if (batch.length > 0) {
          // The log numbers records itself; it must agree with the sequences handed out here.
          assert(res.firstSeq === this.durableSeq + 1 && res.lastSeq === this.durableSeq + batch.length, `log sequence mismatch: got ${res.firstSeq}..${res.lastSeq}, expected from ${this.durableSeq + 1}`);
          this.durableSeq = res.lastSeq;
        }
        for (const l of this.durableListeners) l(this.durableSeq);
        this.release();
      }
    } catch (err) {
      // A failed or unknown-outcome append leaves memory ahead of the log: nothing may be
      // acknowledged any more, and only a restart (replay) gives a trustworthy state again.
      const e = err instanceof Error ? err : new Error(String(err));
      this.failed = e;
      for (const w of this.waiters) w.reject(e);
      this.waiters = [];
      this.onFatal(e);
    } finally {
      this.inFlight = false;
    }
  }

  private release(): void {
    if (this.waiters.length === 0) return;
    const still: Waiter[] = [];
    for (const w of this.waiters) {
      if (w.seq <= this.durableSeq) w.resolve();
      else still.push(w);
    }
    this.waiters = still;
  }
}
