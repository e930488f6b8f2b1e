// The single serial writer. Requests stage encoded records synchronously (in the order their
// events were applied) as one group per request; one append is in flight at a time, and every
// group closed while it runs goes into the next batch together (group commit). A batch is cut
// only between groups, so a crash between two batches never leaves part of a request durable: a
// group larger than the batch limit is written as one LevelDB batch of its own. A waiter is
// released only once the batch holding its last record is durable per the fsync policy. A group
// may be written without its own sync (Group.sync false: a cluster command, whose durability is
// Kafka's); a batch is synced when any of its groups asks for it.
import type { EncodedEvent } from '../events/codec.js';
import { LIMITS } from '../config/limits.js';
import { DomainError } from '../domain/errors.js';
import { assert } from '../util/assert.js';
import { type Clock, systemClock } from '../util/clock.js';

export interface LogAppender {
  /** `opts.sync` false: no fsync of this batch's own under --fsync always (storage/event-log.ts). */
  append(
    records: EncodedEvent[],
    meta?: { key: string; value: Uint8Array | null }[],
    opts?: { sync: boolean },
  ): Promise<{ firstSeq: number; lastSeq: number; bytes: number }>;
}

type MetaWrite = { key: string; value: Uint8Array | null };

/** One request's records and the metadata that must commit with them. */
export interface Group {
  records: EncodedEvent[];
  meta: MetaWrite[];
  closed: boolean;
  /**
   * Synced as the fsync policy says (true), or written without a sync of its own (false): set
   * when the group closes (endGroup).
   */
  sync: boolean;
  /** 1, 2, …: groups are written in this order. */
  ordinal: number;
}

/**
 * How the queue cuts and paces batches. The pauses are test hooks, passed as options (the server
 * command takes them from BITLEDGER_TEST_* variables, src/config/test-hooks.ts): a crash test
 * lowers the batch limit and pauses after every durable batch to kill between batches; a test
 * holds appends back to act while a write is staged but not yet durable.
 */
export interface CommitQueueOptions {
  /** Batches hold whole groups up to this many records; one larger group is a batch alone. */
  maxBatchRecords: number;
  /** Test hook: wait this long after each durable batch (a crash test kills in the gap). */
  pauseAfterBatchMs: number;
  /** Test hook: wait this long before each append (a test looks at a staged, not yet durable write). */
  pauseBeforeBatchMs: number;
  /** Times appends (metrics) and the pauses. */
  clock: Clock;
}

const DEFAULT_OPTIONS: CommitQueueOptions = {
  maxBatchRecords: LIMITS.maxBatchRecords,
  pauseAfterBatchMs: 0,
  pauseBeforeBatchMs: 0,
  clock: systemClock,
};

/**
 * Takes the batch to write next from the front of `groups`: whole closed groups while they fit
 * in `max` records, and always at least the first closed group however large it is.
 */
export function takeBatch(groups: Group[], max: number): Group[] {
  let n = 0;
  let records = 0;
  while (n < groups.length && groups[n].closed) {
    const size = groups[n].records.length;
    if (n > 0 && records + size > max) break;
    records += size;
    n++;
  }
  return groups.splice(0, n);
}

interface Waiter {
  seq: number;
  /** …and every group up to this ordinal written (a group may hold positions and no records). */
  group: number;
  resolve: () => void;
  reject: (err: Error) => void;
}

export interface CommitStats {
  batches: number;
  records: number;
  bytes: number;
}

export class CommitQueue {
  /** Staged groups, oldest first; only the last may still be open. */
  private groups: Group[] = [];
  private readonly options: CommitQueueOptions;
  private waiters: Waiter[] = [];
  /** Waiters that ride along: they never make the queue write (a lagging consumer position). */
  private riders: Waiter[] = [];
  private inFlight = false;
  /** Ordinal of the last group opened, and of the last group written. */
  private lastGroup = 0;
  private writtenGroup = 0;
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
    options: Partial<CommitQueueOptions> = {},
  ) {
    this.options = { ...DEFAULT_OPTIONS, ...options };
    assert(this.options.maxBatchRecords > 0, `maxBatchRecords must be > 0, got ${this.options.maxBatchRecords}`);
    this.assignedSeq = lastSeq;
    this.durableSeq = lastSeq;
  }

  /** Stages one record in the open group (opening one); returns the sequence it will have. */
  stage(record: EncodedEvent): number {
    this.checkHealthy();
    this.openGroup().records.push(record);
    return ++this.assignedSeq;
  }

  /**
   * Stages a metadata write in the open group (opening one: positions with no records are a
   * group of their own, written in order with the groups around it).
   */
  stageMeta(key: string, value: Uint8Array | null): void {
    this.checkHealthy();
    this.openGroup().meta.push({ key, value });
  }

  /**
   * Ends the open group (one request's events): batches may be cut after it, never inside.
   * `sync`: whether its batch must be synced per the policy (false: a commit whose durability is
   * elsewhere). Returns its ordinal (with nothing open, the last group's: its being written
   * implies all before it are).
   */
  endGroup(sync: boolean): number {
    const last = this.groups[this.groups.length - 1];
    if (last === undefined || last.closed) return this.lastGroup;
    last.closed = true;
    last.sync = sync;
    if (this.waiters.length > 0) this.kick();
    return last.ordinal;
  }

  private openGroup(): Group {
    const last = this.groups[this.groups.length - 1];
    if (last !== undefined && !last.closed) return last;
    const g: Group = { records: [], meta: [], closed: false, sync: true, ordinal: ++this.lastGroup };
    this.groups.push(g);
    return g;
  }

  get lastAssignedSeq(): number {
    return this.assignedSeq;
  }

  /** Resolves once every record up to `seq` is durable. */
  whenDurable(seq: number): Promise<void> {
    return this.wait(seq, 0, true);
  }

  /** Whether whenDurable(seq) would resolve at once (durable stays durable). */
  isDurable(seq: number): boolean {
    return seq <= this.durableSeq;
  }

  /**
   * Resolves once the group `ordinal` (endGroup's) and every one before it is written. `ride`:
   * wait for whatever writes it next instead of writing now.
   */
  whenGroupDurable(ordinal: number, ride = false): Promise<void> {
    return this.wait(0, ordinal, !ride);
  }

  private wait(seq: number, group: number, eager: boolean): Promise<void> {
    // Durable stays durable: reads of a state rebuilt from the log go on while writes stall.
    if (seq <= this.durableSeq && group <= this.writtenGroup) return Promise.resolve();
    if (this.failed) return Promise.reject(this.failed);
    return new Promise((resolve, reject) => {
      (eager ? this.waiters : this.riders).push({ seq, group, resolve, reject });
      if (eager) this.kick();
    });
  }

  /** Resolves when nothing is staged or in flight (used by shutdown and snapshots). */
  async drain(): Promise<void> {
    // Positions staged in a group of their own are written too.
    await this.whenGroupDurable(this.lastGroup);
    await this.flushing;
  }

  /**
   * Set by the engine: a disk-full append stalls the queue (its waiters get the 507) instead of
   * ending the process; the engine rebuilds its state from the log and calls resume().
   */
  onStall: ((err: Error) => void) | undefined;

  /** After a stall: the log holds records up to `lastSeq`, and staging starts again from there. */
  resume(lastSeq: number): void {
    assert(this.failed !== undefined && !this.inFlight, 'resume: the queue is not stalled');
    this.groups = [];
    this.assignedSeq = lastSeq;
    this.durableSeq = lastSeq;
    this.writtenGroup = this.lastGroup;
    this.failed = undefined;
  }

  private checkHealthy(): void {
    if (this.failed) throw this.failed;
  }

  private hasClosedGroup(): boolean {
    return this.groups.length > 0 && this.groups[0].closed;
  }

  /** The running flush loop (it never rejects: a failure marks the queue failed). */
  private flushing: Promise<void> | undefined;

  private kick(): void {
    if (this.inFlight || !this.hasClosedGroup()) return;
    this.inFlight = true;
    this.flushing = this.flushLoop();
  }

  private async flushLoop(): Promise<void> {
    try {
      while (this.hasClosedGroup()) {
        const clock = this.options.clock;
        if (this.options.pauseBeforeBatchMs > 0) await clock.sleep(this.options.pauseBeforeBatchMs);
        // Bounded so one giant backlog does not become one giant LevelDB write, but cut only
        // between groups: a request is durable as a whole or not at all.
        const groups = takeBatch(this.groups, this.options.maxBatchRecords);
        const batch = groups.length === 1 ? groups[0].records : groups.flatMap((g) => g.records);
        const meta = groups.flatMap((g) => g.meta);
        const lastGroup = groups[groups.length - 1].ordinal;
        // One LevelDB batch: its sync covers every group in it, and all writes before it.
        const sync = groups.some((g) => g.sync);
        const started = clock.monotonic();
        const res = await this.log.append(batch, meta.length > 0 ? meta : undefined, { sync });
        for (const l of this.batchListeners) l(batch.length, clock.monotonic() - started);
        this.stats.batches++;
        this.stats.records += batch.length;
        this.stats.bytes += res.bytes;
        if (batch.length > 0) {
          // The log numbers records itself; it must agree with the sequences handed out here.
          assert(
            res.firstSeq === this.durableSeq + 1 && res.lastSeq === this.durableSeq + batch.length,
            `log sequence mismatch: got ${res.firstSeq}..${res.lastSeq}, expected from ${this.durableSeq + 1}`,
          );
          this.durableSeq = res.lastSeq;
        }
        this.writtenGroup = lastGroup;
        for (const l of this.durableListeners) l(this.durableSeq);
        this.release();
        if (this.options.pauseAfterBatchMs > 0) await clock.sleep(this.options.pauseAfterBatchMs);
      }
    } catch (err) {
      // A failed or unknown-outcome append leaves memory ahead of the log: nothing may be
      // acknowledged any more, and only a restart (replay) gives a trustworthy state again.
      const full = diskFull(err);
      const stall = full !== undefined && this.onStall !== undefined;
      const e = stall
        ? new DomainError('insufficient_storage', `${full.message}`)
        : (full ?? (err instanceof Error ? err : new Error(String(err))));
      this.failed = e;
      for (const w of [...this.waiters, ...this.riders]) w.reject(e);
      this.waiters = [];
      this.riders = [];
      if (stall) this.onStall?.(e);
      else this.onFatal(e);
    } finally {
      this.inFlight = false;
    }
  }

  private release(): void {
    this.waiters = this.releaseFrom(this.waiters);
    this.riders = this.releaseFrom(this.riders);
  }

  /** Resolves the waiters that are satisfied; returns the others. */
  private releaseFrom(waiters: Waiter[]): Waiter[] {
    if (waiters.length === 0) return waiters;
    const still: Waiter[] = [];
    for (const w of waiters) {
      if (w.seq <= this.durableSeq && w.group <= this.writtenGroup) w.resolve();
      else still.push(w);
    }
    return still;
  }
}

/** An append that failed for lack of space, said plainly (the reserve check should prevent it). */
function diskFull(err: unknown): Error | undefined {
  const text = String(
    err instanceof Error && err.cause instanceof Error ? `${err.message}: ${err.cause.message}` : err,
  );
  if (!/ENOSPC|No space left/i.test(text)) return undefined;
  return new Error(
    `disk full: a log append failed (${text.replace(/\s+/g, ' ')}); nothing in it was acknowledged. Free space, then restart: replay restores every acknowledged write`,
  );
}
