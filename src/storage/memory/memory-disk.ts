// An in-memory disk for the event log's key-value store (kv.ts), with the faults a seed chooses:
// - a crash keeps what was synced, a prefix of the writes not yet synced (LevelDB's WAL is
//   replayed in order), and may tear the first write it loses: a range delete (LevelDB clears
//   key by key) keeps part of its deletions; a batch is atomic (its WAL record is checksummed,
//   a torn one is dropped whole), so a torn batch is lost;
// - a chosen write fails: ENOSPC before anything is written, EIO after the write reached the
//   WAL but not the disk (its outcome is unknown until a crash decides it);
// - a sync takes the virtual time the faults give (slow syncs reorder everything around it);
// - a durable record is damaged (bytes flipped) between a crash and the next open.
// A handle opened before a crash is dead: its calls and its pending writes never settle, as a
// killed process never sees its own calls return.
import type { Clock } from '../../util/clock.js';
import type { KvWriteOptions } from '../kv.js';

/** A write as the disk sees it (given to the fault plan). */
export interface WriteCall {
  /** 1, 2, …: every write call of the disk's life, crashes included. */
  readonly n: number;
  readonly kind: 'batch' | 'put' | 'del' | 'clear' | 'snapshot';
  readonly sync: boolean;
  readonly ops: number;
}

/** What a seed decides about each write. */
export interface StorageFaults {
  /** Fail this write: 'ENOSPC' before it is written, 'EIO' after it reached the WAL. */
  failure(call: WriteCall): 'ENOSPC' | 'EIO' | undefined;
  /** Virtual ms the write takes (a synced write: the fsync). */
  latency(call: WriteCall): number;
}

/** How a crash treats the writes that were not yet durable. */
export interface CrashChoice {
  /** How many of the unsynced writes survive, oldest first (clamped). */
  readonly keepUnsynced: number;
  /** The first write lost is torn (a range delete keeps this share of its deletions, 0..1). */
  readonly tear?: number;
  /**
   * --break acked-loss: the last synced write that added log records is undone as well, so a
   * crash loses an acknowledged write (the simulator must notice).
   */
  readonly loseLastSynced?: boolean;
}

export type KvOp = { readonly key: string; readonly value: Buffer | null };

interface PendingWrite {
  readonly ops: readonly KvOp[];
  readonly kind: WriteCall['kind'];
}

const NO_FAULTS: StorageFaults = { failure: () => undefined, latency: () => 0 };

/** Keys are latin1 strings: one char per byte, so string order is LevelDB's byte order. */
export const kvKey = (b: Uint8Array): string => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('latin1');
export const kvBytes = (k: string): Buffer => Buffer.from(k, 'latin1');

export const NEVER: Promise<never> = new Promise<never>(() => undefined);

export class MemoryDisk {
  /** Bumped by a crash: handles of an older generation are dead. */
  generation = 0;
  private durable = new Map<string, Buffer>();
  /** Published snapshot files by sequence: a publication is atomic (rename) and durable once done. */
  readonly snapshotFiles = new Map<number, Buffer>();
  private live = new Map<string, Buffer>();
  private pending: PendingWrite[] = [];
  private sortedCache: string[] | undefined;
  private calls = 0;
  /** The newest synced write that added log records, as the durable values it replaced. */
  private lastSyncedUndo: KvOp[] | undefined;
  readonly stats = { writes: 0, syncs: 0, failures: 0, crashes: 0, keptUnsynced: 0, lostUnsynced: 0, torn: 0 };

  constructor(
    readonly clock: Clock,
    public faults: StorageFaults = NO_FAULTS,
    /** Tells which keys hold log records (for --break acked-loss). */
    private readonly isLogKey: (key: string) => boolean = () => false,
    /** --break acked-loss: every crash also undoes the last synced append (loseLastSynced). */
    readonly breakAckedLoss = false,
  ) {}

  get(key: string): Buffer | undefined {
    return this.live.get(key);
  }

  /** Keys in order (cached until a key is added or removed). */
  sortedKeys(): string[] {
    this.sortedCache ??= [...this.live.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    return this.sortedCache;
  }

  /**
   * One write: reaches the WAL (visible, not yet durable) at once; a synced one becomes durable,
   * with every write before it, after its latency. Resolves never when the disk crashed meanwhile.
   */
  async write(generation: number, kind: WriteCall['kind'], ops: readonly KvOp[], opts?: KvWriteOptions): Promise<void> {
    if (generation !== this.generation) return NEVER;
    const sync = opts?.sync === true;
    const call: WriteCall = { n: ++this.calls, kind, sync, ops: ops.length };
    const failure = this.faults.failure(call);
    if (failure === 'ENOSPC') {
      this.stats.failures++;
      throw ioError('ENOSPC', 'no space left on device', kind);
    }
    this.stats.writes++;
    const entry: PendingWrite = { ops, kind };
    this.pending.push(entry);
    for (const op of ops) this.setLive(op);
    const ms = this.faults.latency(call);
    if (ms > 0) await this.clock.sleep(ms);
    if (generation !== this.generation) return NEVER;
    if (failure === 'EIO') {
      this.stats.failures++;
      throw ioError('EIO', 'i/o error', kind);
    }
    if (sync) this.syncThrough(entry);
  }

  private setLive(op: KvOp): void {
    const had = this.live.has(op.key);
    if (op.value === null) this.live.delete(op.key);
    else this.live.set(op.key, op.value);
    if (had !== (op.value !== null)) this.sortedCache = undefined;
  }

  /** The WAL is synced through `entry`: it and every write before it are durable. */
  private syncThrough(entry: PendingWrite): void {
    const at = this.pending.indexOf(entry);
    if (at < 0) return; // an earlier sync covered it
    this.stats.syncs++;
    for (const w of this.pending.splice(0, at + 1)) {
      const undo: KvOp[] = [];
      let logRecords = false;
      for (const op of w.ops) {
        undo.push({ key: op.key, value: this.durable.get(op.key) ?? null });
        if (op.value !== null && this.isLogKey(op.key)) logRecords = true;
        if (op.value === null) this.durable.delete(op.key);
        else this.durable.set(op.key, op.value);
      }
      if (logRecords) this.lastSyncedUndo = undo.reverse();
    }
  }

  /** A snapshot file written in full, published after its latency (absent if a crash comes first). */
  async publish(generation: number, seq: number, file: Buffer): Promise<void> {
    if (generation !== this.generation) return NEVER;
    const call: WriteCall = { n: ++this.calls, kind: 'snapshot', sync: true, ops: 1 };
    const failure = this.faults.failure(call);
    const ms = this.faults.latency(call);
    if (ms > 0) await this.clock.sleep(ms);
    if (generation !== this.generation) return NEVER;
    if (failure !== undefined) {
      this.stats.failures++;
      throw ioError(failure, failure === 'EIO' ? 'i/o error' : 'no space left on device', 'snapshot');
    }
    this.snapshotFiles.set(seq, file);
  }

  /** Durable keys and values (checks read the disk as a restart would). */
  durableEntries(): ReadonlyMap<string, Buffer> {
    return this.durable;
  }

  /** How many writes reached the WAL but are not yet durable. */
  get unsynced(): number {
    return this.pending.length;
  }

  /** A crash: what survives is decided now; every handle open so far is dead. */
  crash(choice: CrashChoice): void {
    this.generation++;
    this.stats.crashes++;
    const keep = Math.max(0, Math.min(choice.keepUnsynced, this.pending.length));
    const apply = (op: KvOp): void => {
      if (op.value === null) this.durable.delete(op.key);
      else this.durable.set(op.key, op.value);
    };
    for (const w of this.pending.slice(0, keep)) for (const op of w.ops) apply(op);
    const torn = this.pending[keep];
    if (torn !== undefined && choice.tear !== undefined) {
      this.stats.torn++;
      // Only a range delete is applied in part; a torn batch is dropped whole, as LevelDB does.
      if (torn.kind === 'clear')
        for (const op of torn.ops.slice(0, Math.floor(torn.ops.length * choice.tear))) apply(op);
    }
    this.stats.keptUnsynced += keep;
    this.stats.lostUnsynced += this.pending.length - keep;
    if (choice.loseLastSynced === true && this.lastSyncedUndo !== undefined)
      for (const op of this.lastSyncedUndo) apply(op);
    this.lastSyncedUndo = undefined;
    this.pending = [];
    this.live = new Map(this.durable);
    this.sortedCache = undefined;
  }

  /**
   * Flips a byte of a durable value chosen by `pick` among the keys `which` accepts (media
   * damage); returns the key and an undo (the simulator repairs what the server refused).
   */
  damage(which: (key: string) => boolean, pick: (n: number) => number): { key: string; undo(): void } | undefined {
    const keys = [...this.durable.keys()].filter(which).sort();
    if (keys.length === 0) return undefined;
    const key = keys[pick(keys.length)];
    const before = this.durable.get(key)!;
    const after = Buffer.from(before);
    after[pick(after.length)] ^= 0x5a;
    this.durable.set(key, after);
    this.live.set(key, after);
    return {
      key,
      undo: () => {
        if (this.durable.get(key) !== after) return;
        this.durable.set(key, before);
        this.live.set(key, before);
      },
    };
  }
}

function ioError(code: string, text: string, kind: string): NodeJS.ErrnoException {
  const err: NodeJS.ErrnoException = new Error(`${code}: ${text}, ${kind} (memory disk)`);
  err.code = code;
  return err;
}
