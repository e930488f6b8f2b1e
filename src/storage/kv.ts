// The ordered key-value store under the event log: the subset of LevelDB (classic-level) that the
// log, its commit times, tail recovery and the format migrations use. The server passes the
// LevelDB of its data directory (openLevelDb); the simulator (sim/) passes an in-memory store
// that loses or tears unsynced writes at a crash and fails chosen calls (storage/memory/), so
// the real EventLog runs over storage whose faults a seed decides.
// What the log relies on: a batch is applied atomically; a write with `sync: true` is durable
// once it resolves, and so is every write before it (LevelDB syncs its WAL in order; across a
// memtable switch only once the event log has fsynced the older WAL files: leveldb-wal-sync.ts).

export interface KvRange {
  readonly gt?: Buffer;
  readonly gte?: Buffer;
  readonly lt?: Buffer;
  readonly lte?: Buffer;
  readonly reverse?: boolean;
  readonly limit?: number;
  /** LevelDB tuning (ignored by the in-memory store). */
  readonly fillCache?: boolean;
  readonly highWaterMarkBytes?: number;
}

export interface KvWriteOptions {
  readonly sync?: boolean;
}

export interface KvCursor<T> {
  nextv(size: number): Promise<T[]>;
  all(): Promise<T[]>;
  close(): Promise<void>;
}

export interface KvBatch {
  put(key: Buffer, value: Buffer): unknown;
  del(key: Buffer): unknown;
  write(opts?: KvWriteOptions): Promise<void>;
  close(): Promise<void>;
}

export interface KvStore {
  /** Where it lives (named in errors). */
  readonly location: string;
  get(key: Buffer): Promise<Buffer | undefined>;
  put(key: Buffer, value: Buffer, opts?: KvWriteOptions): Promise<void>;
  del(key: Buffer, opts?: KvWriteOptions): Promise<void>;
  batch(): KvBatch;
  iterator(range?: KvRange): KvCursor<[Buffer, Buffer]>;
  keys(range?: KvRange): KvCursor<Buffer>;
  /** Deletes the range (unsynced in LevelDB). */
  clear(range?: KvRange): Promise<void>;
  close(): Promise<void>;
}
