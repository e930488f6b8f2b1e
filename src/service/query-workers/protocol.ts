// Messages between the request thread (pool.ts) and a query worker (worker.ts). Both ends are
// this build: the shapes are checked by the compiler, not on receipt. Queries travel as parsed
// PQL (structured clone keeps Maps and bigints) and are compiled again by the worker against
// its state, so plans never cross threads.
import type { ErrorCode } from '../../domain/errors.js';
import type { CallPartial, CallPrep } from '../../executor/partial.js';
import type { QueryOptions } from '../../executor/result.js';
import type { Call } from '../../pql/ast.js';
import type { Publication } from '../../state/published.js';
import type { ClaimSlot } from './here-share.js';
import type { ThreadMarks } from './timeline.js';

/** One phase of one query over some shards (with `claims`, those of its shards it claims). */
export interface Job {
  id: number;
  index: string;
  calls: Call[];
  opts: QueryOptions;
  shards: readonly number[];
  phase: 'prep' | 'partial';
  /** Phase one merged over all shards (phase 'partial' of a query that has one). */
  preps?: CallPrep[];
  /** The request's now (ms since epoch): a time range's default end derives from it. */
  now: number;
  /** ms left of the query's deadline when sent; absent: none. */
  remainingMs?: number;
  timeoutMs: number;
  /** A phase shared with the request thread: the shards are claimed chunk by chunk (here-share.ts). */
  claims?: ClaimSlot;
}

export type ToWorker = { kind: 'publish'; pubs: Publication[] } | { kind: 'job'; job: Job };

/**
 * An answer to a job: `busyMs`, the worker's time on it (slices summed; the pool's busy figure);
 * `marks`, its moments when the query's timeline is traced (timeline.ts).
 */
export type FromWorker =
  | { kind: 'ready' }
  | { kind: 'done'; id: number; preps: CallPrep[]; busyMs?: number; marks?: ThreadMarks }
  | { kind: 'done'; id: number; partials: CallPartial[]; busyMs?: number; marks?: ThreadMarks }
  /** A shared phase's job that took no shard: closed before it started, or the others took them all. */
  | { kind: 'done'; id: number; none: true; busyMs?: number; marks?: ThreadMarks }
  | { kind: 'failed'; id: number; code?: ErrorCode; message: string; busyMs?: number };

/** A worker's answer to a job. */
export type JobReply = Exclude<FromWorker, { kind: 'ready' }>;

/** Slots of a worker's cancel board: the request thread writes a job's id into id % CANCEL_SLOTS. */
export const CANCEL_SLOTS = 1024;
