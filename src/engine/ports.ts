// What the engine needs from storage, as interfaces: the engine is tested against the real
// LevelDB-backed implementations, but does not depend on their construction.
import type { LogAppender } from './commit-queue.js';

export interface LogRecord {
  seq: number;
  type: number;
  payload: Uint8Array;
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
}

export interface SnapshotFiles {
  write(seq: number, chunks: Iterable<Uint8Array>): Promise<{ bytes: number }>;
  list(): Promise<number[]>;
  read(seq: number): Promise<Uint8Array>;
  prune(keep: number[]): Promise<unknown>;
  /** Optional: the newest published snapshot (shown to operators). */
  newest?(): Promise<{ seq: number; bytes: number; at: Date } | undefined>;
}
