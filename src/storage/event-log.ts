// The event log: contiguous sequences, one LevelDB batch per append, verified replay.
// Invariants: records firstSeq..lastSeq exist with no gaps; every append is one atomic batch
// (records plus the meta writes that must commit with them); appends never overlap; after a
// failed write the log refuses further appends (the outcome on disk is unknown until a restart
// recovers it).
import type { Logger } from 'pino';
import { assert, AssertionError } from '../util/assert.js';
import { type Clock, type ClockTimer, every, systemClock } from '../util/clock.js';
import { join } from 'node:path';
import { LEVELDB_SUBDIR, openLevelDb } from './data-dir.js';
import type { KvBatch, KvStore } from './kv.js';
import {
  batchAt,
  batchesFrom,
  clearTimesAfter,
  clearTimesBelow,
  encodeCommitTime,
  timeKey,
  type CommitBatch,
} from './commit-times.js';
import { encodeRecordsSliced, openEnvelope, type LogRecord, type NewRecord } from './envelope.js';
import { LogCorruptionError, LogRangeError } from './errors.js';
import {
  FLUSH_KEY,
  LOG_KEY_MAX,
  LOG_KEY_MIN,
  MAX_SEQ,
  RELEASED_THROUGH_META,
  RESERVED_META,
  decodeMetaUint,
  encodeMetaUint,
  logKey,
  logKeySeq,
  metaKey,
} from './keys.js';
import { checkFormat, formatVersion, runMigrations } from './migrations.js';
import { syncWalFiles } from './leveldb-wal-sync.js';
import { DELETE_BATCH, recoverTail } from './tail-recovery.js';

export type FsyncPolicy = 'always' | 'interval' | 'never';

export interface EventLogOptions {
  /** always: every append is fsynced before it resolves; interval: a timer fsyncs; never: the OS decides. */
  readonly fsync: FsyncPolicy;
  readonly fsyncIntervalMs?: number;
  readonly logger: Logger;
  /** Start although LevelDB's WAL lost records that were acknowledged (logged at warn). */
  readonly acceptDataLoss?: boolean;
  /**
   * Maintenance reads (inspect): the LevelDB must exist, no migration runs and a damaged tail is
   * reported, not dropped. Appends would still work: the caller opens a copy (see inspect).
   */
  readonly readOnly?: boolean;
  /** Commit times and the interval flush (default: the system's). */
  readonly clock?: Clock;
}

/** A meta write committed atomically with the records of the same append; null deletes. */
export interface MetaWrite {
  readonly key: string;
  readonly value: Uint8Array | null;
}

export interface AppendResult {
  /** With no records (meta only), firstSeq = lastSeq + 1: an empty range. */
  readonly firstSeq: number;
  readonly lastSeq: number;
  readonly bytes: number;
}

/** What an append may ask beyond its records and meta writes. */
export interface AppendOptions {
  /**
   * The batch's commit time: now when undefined; a copied batch passes its original time, or
   * null for records whose time is unknown (written before commit times existed).
   */
  readonly timeMs?: number | null;
  /**
   * false: written without an fsync of its own even under 'always', for a caller whose
   * durability lies elsewhere (a cluster command: Kafka holds it, and a restart replays what the
   * log lost from its topic). A sync follows within UNSYNCED_SYNC_MS, or sooner with the next
   * synced write, so what a power cut can take stays bounded. Default: the policy.
   */
  readonly sync?: boolean;
}

const DEFAULT_FSYNC_INTERVAL_MS = 100;
/**
 * Under 'always', how long an append written without its own sync (AppendOptions.sync) stays
 * unsynced at most: the bound on what a restart after a power cut replays from elsewhere.
 */
export const UNSYNCED_SYNC_MS = 1_000;
// Replay reads in large native batches: the per-call cost of crossing into LevelDB dominates
// for small records, and classic-level's default caps a batch at 16 KiB.
const READ_BATCH_RECORDS = 1000;
const READ_BATCH_BYTES = 4 * 1024 * 1024;
const RELEASED_THROUGH_KEY = metaKey(RELEASED_THROUGH_META);

export class EventLog {
  #first: number;
  #last: number;
  #appending = false;
  #dirty = false;
  #flushing: Promise<void> | null = null;
  #failure: unknown = undefined;
  #timer: ClockTimer | undefined;
  #intervalMs: number | undefined;
  /** 'always': the sync armed after an unsynced append (AppendOptions.sync false). */
  #unsyncedTimer: ClockTimer | undefined;
  /** Commit times never go backwards, even if the wall clock does: a time maps to one prefix. */
  #lastTimeMs = 0;

  /**
   * Closes LevelDB and opens it again (set by open(): the data directory's LevelDB only). After a
   * background error (a compaction that ran out of space) LevelDB refuses every write until it is
   * reopened, however much space returns. Rejects when it cannot open (the write-ahead file
   * becomes a table at open, which needs space): the caller tries again.
   */
  reopen?: () => Promise<void>;

  /**
   * fsyncs every LevelDB WAL file by path (set by open(): only the data directory's LevelDB has
   * files; the simulator's in-memory store keeps its writes in order across a sync). LevelDB
   * closes the WAL of a full memtable unsynced, so a synced write alone does not make every
   * earlier write durable (leveldb-wal-sync.ts).
   */
  #syncWal: (() => Promise<void>) | undefined;

  private constructor(
    private db: KvStore,
    private readonly policy: FsyncPolicy,
    private readonly logger: Logger,
    private readonly clock: Clock,
    first: number,
    last: number,
  ) {
    this.#first = first;
    this.#last = last;
  }

  /** Opens (creating if needed) the log in `dataDir`, migrates its format and recovers its tail. */
  static async open(dataDir: string, opts: EventLogOptions): Promise<EventLog> {
    checkInterval(opts);
    const db = await openLevelDb(dataDir, {
      logger: opts.logger,
      acceptDataLoss: opts.acceptDataLoss,
      mustExist: opts.readOnly === true,
    });
    const log = await EventLog.openOn(db, opts);
    log.reopen = () =>
      log.#reopenWith(() => openLevelDb(dataDir, { logger: opts.logger, acceptDataLoss: opts.acceptDataLoss }));
    const levelDbDir = join(dataDir, LEVELDB_SUBDIR);
    log.#syncWal = () => syncWalFiles(levelDbDir);
    return log;
  }

  /**
   * The log over an opened store (the data directory's LevelDB, or the simulator's in-memory
   * store): migrates its format and recovers its tail; closes `db` when that fails.
   */
  static async openOn(db: KvStore, opts: EventLogOptions): Promise<EventLog> {
    const interval = checkInterval(opts);
    const readOnly = opts.readOnly === true;
    try {
      if (readOnly) await checkFormat(db);
      else await runMigrations(db, opts.logger);
      const raw = await db.get(RELEASED_THROUGH_KEY);
      const floor = raw === undefined ? 0 : decodeMetaUint(raw, RELEASED_THROUGH_META);
      const last = await recoverTail(db, floor, opts.logger, readOnly);
      const [firstKey] = await db.keys({ gt: logKey(floor), lte: LOG_KEY_MAX, limit: 1 }).all();
      const first = firstKey === undefined ? last + 1 : (logKeySeq(firstKey) ?? floor + 1);
      // A batch time above the last record belongs to a dropped tail; a later batch would inherit it.
      await clearTimesAfter(db, last);
      const log = new EventLog(db, opts.fsync, opts.logger, opts.clock ?? systemClock, first, last);
      log.#lastTimeMs = (await batchAt(db, last))?.timeMs ?? 0;
      if (opts.fsync === 'interval') {
        log.#intervalMs = interval;
        // The timer must not keep a finished process alive.
        log.#timer = every(log.clock, interval, () => void log.#flushIfDirty(), { unref: true });
      }
      return log;
    } catch (err) {
      await db.close();
      throw err;
    }
  }

  /** Sequence of the newest record; 0 for a log that never had one. */
  get lastSeq(): number {
    return this.#last;
  }

  /** The flush policy, for operators (GET /internal/state); intervalMs only for 'interval'. */
  get fsyncPolicy(): { policy: FsyncPolicy; intervalMs?: number } {
    return this.#intervalMs === undefined
      ? { policy: this.policy }
      : { policy: this.policy, intervalMs: this.#intervalMs };
  }

  /** Lowest retained sequence; lastSeq + 1 when no record is retained. */
  get firstSeq(): number {
    return this.#first;
  }

  /** The on-disk format version (maintenance reports it; a start migrates it). */
  async formatVersion(): Promise<number> {
    return formatVersion(this.db);
  }

  async getMeta(key: string): Promise<Uint8Array | undefined> {
    return this.db.get(metaKey(key));
  }

  /**
   * Appends records as lastSeq+1… together with `meta` and the batch's commit time, in one
   * batch. Callers serialize. `opts`: the commit time and whether to sync (AppendOptions).
   */
  async append(
    records: readonly NewRecord[],
    meta: readonly MetaWrite[] = [],
    opts: AppendOptions = {},
  ): Promise<AppendResult> {
    const { timeMs } = opts;
    const sync = this.policy === 'always' && opts.sync !== false;
    this.#assertWritable();
    assert(!this.#appending, 'EventLog.append overlapped another append: the commit queue must serialize them');
    assert(records.length > 0 || meta.length > 0, 'EventLog.append called with nothing to write');
    assert(this.#last + records.length <= MAX_SEQ, 'event log sequence space exhausted');
    this.#appending = true;
    try {
      if (sync) await this.#beforeSyncedWrite();
      const firstSeq = this.#last + 1;
      const batch = this.db.batch();
      let bytes: number;
      try {
        bytes = await encodeRecordsSliced(records, firstSeq, (key, value) => batch.put(key, value));
        for (const m of meta) bytes += addMeta(batch, m);
        if (records.length > 0 && timeMs !== null) {
          this.#lastTimeMs = Math.max(this.#lastTimeMs, timeMs ?? this.clock.now());
          batch.put(timeKey(firstSeq), encodeCommitTime(this.#lastTimeMs, bytes));
        }
      } catch (err) {
        await batch.close();
        throw err;
      }
      try {
        await batch.write({ sync });
      } catch (err) {
        this.#failure = err;
        throw err;
      }
      this.#last += records.length;
      this.#wrote(sync);
      return { firstSeq, lastSeq: this.#last, bytes };
    } finally {
      this.#appending = false;
    }
  }

  /** Commit time (ms) of record `seq`; undefined when unknown (written before format 3). */
  async commitTime(seq: number): Promise<number | undefined> {
    return (await batchAt(this.db, seq))?.timeMs;
  }

  /** The group commits covering fromSeq..toSeq, ascending, with their times. */
  commitBatches(fromSeq: number, toSeq: number = this.#last): AsyncGenerator<CommitBatch, void, undefined> {
    return batchesFrom(this.db, fromSeq, toSeq);
  }

  /**
   * The last retained sequence committed at or before `timeMs` (times never decrease along the
   * log). firstSeq - 1 (outside the log) when the first timed batch is already later, or when
   * no retained record has a known time.
   */
  async seqAtTime(timeMs: number): Promise<number> {
    // Times never decrease along the log, so a binary search over sequences takes ~log2(n)
    // LevelDB seeks (a scan of every batch would grow with the history).
    let lo = this.#first;
    let hi = this.#last;
    let found = this.#first - 1;
    let foundTime: number | undefined;
    while (lo <= hi) {
      const mid = lo + Math.floor((hi - lo) / 2);
      const t = (await batchAt(this.db, mid))?.timeMs;
      if (t === undefined || t <= timeMs) {
        found = mid;
        foundTime = t;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    // Only records of unknown time before it: the point cannot be placed, so it is outside.
    return foundTime === undefined ? this.#first - 1 : found;
  }

  /**
   * Records fromSeq..toSeq (default: lastSeq when called), verifying each envelope, CRC and the
   * absence of gaps; throws LogCorruptionError at the first damaged or missing record.
   */
  async *read(fromSeq: number, toSeq?: number): AsyncGenerator<LogRecord, void, undefined> {
    for await (const batch of this.readBatches(fromSeq, toSeq)) yield* batch;
  }

  /**
   * The same records as read(), a LevelDB batch at a time: replay loops over each batch
   * synchronously instead of paying an async-generator step per record.
   */
  async *readBatches(fromSeq: number, toSeq?: number): AsyncGenerator<LogRecord[], void, undefined> {
    assert(Number.isSafeInteger(fromSeq) && fromSeq >= 1, `read: bad fromSeq ${fromSeq}`);
    assert(toSeq === undefined || Number.isSafeInteger(toSeq), `read: bad toSeq ${toSeq}`);
    const end = Math.min(toSeq ?? this.#last, this.#last);
    if (fromSeq > end) return;
    if (fromSeq < this.#first) throw new LogRangeError(fromSeq, this.#first);
    const it = this.db.iterator({
      gte: logKey(fromSeq),
      lte: logKey(end),
      highWaterMarkBytes: READ_BATCH_BYTES,
      fillCache: false, // a replay streams through once; keep the block cache for live reads
    });
    let expected = fromSeq;
    // The next batch is requested before the current one is handed out, so LevelDB reads it on
    // the thread pool while the caller decodes and applies this one.
    let pending: Promise<[Buffer, Buffer][]> | undefined = it.nextv(READ_BATCH_RECORDS);
    try {
      for (;;) {
        const entries: [Buffer, Buffer][] = await pending;
        pending = undefined;
        if (entries.length === 0) break;
        pending = it.nextv(READ_BATCH_RECORDS);
        const batch: LogRecord[] = new Array<LogRecord>(entries.length);
        let failure: Error | undefined;
        let good = 0;
        for (; good < entries.length; good++) {
          const [key, value] = entries[good];
          const seq = logKeySeq(key);
          if (seq !== expected) {
            failure = misplaced(expected, key, seq);
            break;
          }
          const record = openEnvelope(seq, value);
          if (typeof record === 'string') {
            failure = new LogCorruptionError(seq, record);
            break;
          }
          batch[good] = record;
          expected++;
        }
        // The good records before a bad one are still handed out, then the error.
        if (good > 0) yield good === entries.length ? batch : batch.slice(0, good);
        if (failure) throw failure;
      }
    } finally {
      // A prefetch still in flight must settle before the iterator closes.
      if (pending !== undefined) await pending.catch(() => undefined);
      await it.close();
    }
    if (expected <= end) throw new LogCorruptionError(expected, `records ${expected}..${end} are missing`);
  }

  /**
   * Deletes records ≤ seq. `seq` may exceed lastSeq: a restore that installs a snapshot at S
   * into a fresh directory releases through S, and the log then continues at S+1.
   */
  async releaseUpTo(seq: number): Promise<void> {
    this.#assertWritable();
    assert(Number.isSafeInteger(seq) && seq >= 0, `releaseUpTo: bad seq ${seq}`);
    assert(seq <= this.#last || !this.#appending, 'releaseUpTo past lastSeq while an append is in flight');
    if (seq < this.#first) return;
    await this.#beforeSyncedWrite();
    // The floor is written first and synced: if the range delete below is lost or cut short by
    // a crash, the leftovers sit under the floor, are ignored at open and cleared next time.
    await this.db.put(RELEASED_THROUGH_KEY, encodeMetaUint(seq), { sync: true });
    this.#first = seq + 1;
    this.#last = Math.max(this.#last, seq);
    // classic-level's clear() has no sync option (it always writes unsynced): that is fine
    // here, the synced floor above is the part that must survive.
    await this.db.clear({ gte: LOG_KEY_MIN, lte: logKey(seq) });
    await clearTimesBelow(this.db, seq + 1);
  }

  /**
   * Deletes records > seq, newest first in synced batches so the log is a contiguous prefix at
   * every step. The operator's way past a LogCorruptionError when losing the suffix is accepted.
   */
  async truncateAfter(seq: number): Promise<number> {
    this.#assertWritable();
    assert(!this.#appending, 'truncateAfter while an append is in flight');
    assert(Number.isSafeInteger(seq) && seq >= this.#first - 1, `truncateAfter: ${seq} is below the retained log`);
    await this.#beforeSyncedWrite();
    const it = this.db.keys({ gt: logKey(seq), lte: LOG_KEY_MAX, reverse: true, fillCache: false });
    let dropped = 0;
    try {
      for (;;) {
        const keys = await it.nextv(DELETE_BATCH);
        if (keys.length === 0) break;
        const batch = this.db.batch();
        for (const key of keys) batch.del(key);
        await batch.write({ sync: true });
        dropped += keys.length;
      }
    } finally {
      await it.close();
    }
    this.#last = Math.min(this.#last, seq);
    this.#first = Math.min(this.#first, this.#last + 1);
    await clearTimesAfter(this.db, this.#last);
    if (dropped > 0) {
      this.logger.warn({ afterSeq: seq, dropped }, `event log: truncated ${dropped} record(s) after sequence ${seq}`);
    }
    return dropped;
  }

  /**
   * The records LevelDB holds after reopen() are those of the last good append (a refused batch
   * never reached its write-ahead file; a torn one is dropped as at a start).
   */
  async #reopenWith(open: () => Promise<KvStore>): Promise<void> {
    assert(this.#flushing === null, 'reopen: a flush runs');
    await this.db.close().catch(() => undefined);
    const db = await open();
    const raw = await db.get(RELEASED_THROUGH_KEY);
    const floor = raw === undefined ? 0 : decodeMetaUint(raw, RELEASED_THROUGH_META);
    this.#last = await recoverTail(db, floor, this.logger, false);
    await clearTimesAfter(db, this.#last);
    this.db = db;
    this.#failure = undefined;
    this.#dirty = false;
  }

  async close(): Promise<void> {
    this.#timer?.cancel();
    this.#timer = undefined;
    this.#unsyncedTimer?.cancel();
    this.#unsyncedTimer = undefined;
    if (this.#flushing !== null) await this.#flushing;
    // 'interval' promised durability within an interval, and 'always' within UNSYNCED_SYNC_MS for
    // an unsynced append; a clean shutdown must keep it.
    if (this.policy !== 'never' && this.#failure === undefined) await this.#flushIfDirty();
    await this.db.close();
  }

  #assertWritable(): void {
    if (this.#failure !== undefined) {
      throw new AssertionError(
        `event log is unusable after a failed write (${String(this.#failure)}); restart to recover from disk`,
      );
    }
  }

  /**
   * Before a synced write, which makes every earlier unsynced write durable: a flush under way
   * finishes first (its WAL fsyncs may not have run yet); then, if unsynced writes happened since
   * the last sync, every WAL file is fsynced (#syncWal), the old WAL of a memtable switch
   * included. After synced writes only there is nothing to do: plain 'always' pays nothing.
   * A failed fsync leaves the log unusable, as a failed write does (what is on disk is unknown).
   */
  async #beforeSyncedWrite(): Promise<void> {
    if (this.#flushing !== null) await this.#flushing;
    this.#assertWritable();
    if (!this.#dirty || this.#syncWal === undefined) return;
    try {
      await this.#syncWal();
    } catch (err) {
      this.#failure ??= err;
      throw err;
    }
  }

  /**
   * After an append: under 'always' a synced one made every earlier one durable too (LevelDB
   * fsyncs its WAL, #beforeSyncedWrite the older ones); an unsynced one arms a sync within
   * UNSYNCED_SYNC_MS. Under 'interval' the timer syncs; under 'never' the OS decides.
   */
  #wrote(synced: boolean): void {
    if (this.policy !== 'always') {
      this.#dirty = true;
      return;
    }
    if (synced) {
      // A flush under way started before this write: it cannot have made it dirty again.
      this.#dirty = false;
      return;
    }
    this.#dirty = true;
    if (this.#unsyncedTimer !== undefined) return;
    // The timer must not keep a finished process alive.
    this.#unsyncedTimer = this.clock.setTimeout(
      () => {
        this.#unsyncedTimer = undefined;
        void this.sync();
      },
      UNSYNCED_SYNC_MS,
      { unref: true },
    );
  }

  /**
   * Makes every append so far durable (a synced write when one was not): a snapshot of the state
   * is published only over a log that is durable up to it.
   */
  async sync(): Promise<void> {
    if (this.#flushing !== null) await this.#flushing;
    await this.#flushIfDirty();
  }

  /**
   * Every WAL file fsynced (#beforeSyncedWrite), then a tiny synced write: every earlier unsynced
   * append is durable.
   */
  async #flushIfDirty(): Promise<void> {
    if (!this.#dirty || this.#flushing !== null) return;
    this.#dirty = false;
    const syncWal = this.#syncWal;
    this.#flushing = (syncWal === undefined ? Promise.resolve() : syncWal())
      .then(() => this.db.del(FLUSH_KEY, { sync: true }))
      .catch((err: unknown) => {
        this.#failure ??= err;
        this.logger.error({ err }, 'event log: periodic fsync failed; further appends are refused');
      })
      .finally(() => {
        this.#flushing = null;
      });
    await this.#flushing;
  }
}

function checkInterval(opts: EventLogOptions): number {
  const interval = opts.fsyncIntervalMs ?? DEFAULT_FSYNC_INTERVAL_MS;
  assert(Number.isFinite(interval) && interval > 0, `fsyncIntervalMs must be > 0, got ${interval}`);
  return interval;
}

function addMeta(batch: KvBatch, m: MetaWrite): number {
  assert(!RESERVED_META.has(m.key), `meta key ${m.key} is reserved for the storage layer`);
  const key = metaKey(m.key);
  if (m.value === null) {
    batch.del(key);
    return key.length;
  }
  batch.put(key, Buffer.from(m.value.buffer, m.value.byteOffset, m.value.byteLength));
  return key.length + m.value.length;
}

function misplaced(expected: number, key: Buffer, seq: number | undefined): LogCorruptionError {
  if (seq === undefined) return new LogCorruptionError(expected, `malformed log key 0x${key.toString('hex')}`);
  return new LogCorruptionError(expected, `record ${expected} is missing (the next record is ${seq})`);
}
