// A KvStore (kv.ts) over a MemoryDisk: what EventLog.openOn needs, with LevelDB's semantics as
// the log relies on them (ordered keys, atomic batches, iterators that read a snapshot taken
// when they are made). Reads settle in a microtask; writes take the time the disk's faults give.
import type { KvBatch, KvCursor, KvRange, KvStore, KvWriteOptions } from '../kv.js';
import { type KvOp, type MemoryDisk, NEVER, kvBytes, kvKey } from './memory-disk.js';

export class MemoryKv implements KvStore {
  private readonly generation: number;
  private closed = false;

  constructor(
    private readonly disk: MemoryDisk,
    readonly location = 'memory',
  ) {
    this.generation = disk.generation;
  }

  private get dead(): boolean {
    return this.generation !== this.disk.generation;
  }

  async get(key: Buffer): Promise<Buffer | undefined> {
    if (this.dead) return NEVER;
    this.checkOpen();
    return this.disk.get(kvKey(key));
  }

  put(key: Buffer, value: Buffer, opts?: KvWriteOptions): Promise<void> {
    return this.write('put', [{ key: kvKey(key), value: Buffer.from(value) }], opts);
  }

  del(key: Buffer, opts?: KvWriteOptions): Promise<void> {
    return this.write('del', [{ key: kvKey(key), value: null }], opts);
  }

  batch(): KvBatch {
    const ops: KvOp[] = [];
    let done = false;
    return {
      put: (key: Buffer, value: Buffer) => ops.push({ key: kvKey(key), value: Buffer.from(value) }),
      del: (key: Buffer) => ops.push({ key: kvKey(key), value: null }),
      write: (opts?: KvWriteOptions) => {
        if (done) throw new Error('memory kv: batch written twice');
        done = true;
        return this.write('batch', ops, opts);
      },
      close: async () => {
        done = true;
      },
    };
  }

  iterator(range: KvRange = {}): KvCursor<[Buffer, Buffer]> {
    return this.cursor(range, (k) => [kvBytes(k), this.disk.get(k)!] as [Buffer, Buffer]);
  }

  keys(range: KvRange = {}): KvCursor<Buffer> {
    return this.cursor(range, kvBytes);
  }

  async clear(range: KvRange = {}): Promise<void> {
    const ops = this.inRange(range).map((key): KvOp => ({ key, value: null }));
    return this.write('clear', ops);
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  private async write(kind: 'put' | 'del' | 'batch' | 'clear', ops: KvOp[], opts?: KvWriteOptions): Promise<void> {
    if (this.dead) return NEVER;
    this.checkOpen();
    return this.disk.write(this.generation, kind, ops, opts);
  }

  private checkOpen(): void {
    if (this.closed) throw new Error('memory kv: the store is closed');
  }

  /** The keys of `range` now, in its order, at most `limit`. */
  private inRange(range: KvRange): string[] {
    const sorted = this.disk.sortedKeys();
    const lo = range.gte ?? range.gt;
    const hi = range.lte ?? range.lt;
    let from = lo === undefined ? 0 : lowerBound(sorted, kvKey(lo));
    if (range.gt !== undefined && sorted[from] === kvKey(range.gt)) from++;
    let to = hi === undefined ? sorted.length : lowerBound(sorted, kvKey(hi));
    if (range.lte !== undefined && sorted[to] === kvKey(range.lte)) to++;
    const keys = sorted.slice(from, Math.max(from, to));
    if (range.reverse === true) keys.reverse();
    return range.limit !== undefined && range.limit >= 0 ? keys.slice(0, range.limit) : keys;
  }

  /** A cursor over the entries of `range` as they are now (LevelDB iterators read a snapshot). */
  private cursor<T>(range: KvRange, entry: (key: string) => T): KvCursor<T> {
    const items = this.dead ? [] : this.inRange(range).map(entry);
    let at = 0;
    const gen = this.generation;
    const disk = this.disk;
    return {
      async nextv(size: number): Promise<T[]> {
        if (gen !== disk.generation) return NEVER;
        const out = items.slice(at, at + size);
        at += out.length;
        return out;
      },
      async all(): Promise<T[]> {
        if (gen !== disk.generation) return NEVER;
        const out = items.slice(at);
        at = items.length;
        return out;
      },
      async close(): Promise<void> {},
    };
  }
}

/** The first index whose key is >= `key`. */
function lowerBound(sorted: readonly string[], key: string): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid] < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
