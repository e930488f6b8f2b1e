// What the engine needs from storage, as interfaces: the engine is tested against the real
// LevelDB-backed implementations, but does not depend on their construction.
import type { CommitBatch } from '../storage/commit-times.js';
import type { SnapshotInfo } from '../storage/snapshot-store.js';
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
  /** Commit time (ms) of record `seq`; undefined when unknown. */
  commitTime(seq: number): Promise<number | undefined>;
  /** The last retained sequence committed at or before `timeMs` (firstSeq - 1 if none). */
  seqAtTime(timeMs: number): Promise<number>;
  /** Group commits covering fromSeq..toSeq, ascending. */
  commitBatches(fromSeq: number, toSeq?: number): AsyncIterable<CommitBatch>;
}

export interface SnapshotFiles {
  write(seq: number, chunks: Iterable<Uint8Array>, timeMs?: number): Promise<{ bytes: number }>;
  list(): Promise<number[]>;
  /** Newest first, with commit times and file sizes. */
  infos(): Promise<SnapshotInfo[]>;
  read(seq: number): Promise<Uint8Array>;
  prune(keep: number[]): Promise<unknown>;
}
