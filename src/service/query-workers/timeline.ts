// A shared query's moments on each thread, for finding where its wall time goes (issue 25:
// bench/query-workers-exec.ts prints them). Off unless a bench asks (QueryWorkers.timelines):
// the marks cost a clock reading each, a handful a query.
import { crossThreadMs } from '../../util/clock.js';

/** One thread's part of a shared phase: ms on the cross-thread clock (crossThreadMs). */
export interface ThreadMarks {
  /** The job's message taken from the worker's port (workers only). */
  received?: number;
  /** Its first slice began (workers only). */
  started?: number;
  /** Its first chunk claimed, and its last chunk computed. */
  firstChunk?: number;
  lastChunk?: number;
  /** Shards it computed, chunks it claimed. */
  shards: number;
  chunks: number;
  /** Its answer posted (workers only). */
  posted?: number;
}

/** The request thread's moments of one shared read, by name, and each worker job's marks. */
export class QueryTimeline {
  readonly at: Record<string, number> = {};
  readonly here: ThreadMarks = { shards: 0, chunks: 0 };
  readonly workers: ThreadMarks[] = [];

  mark(name: string): void {
    this.at[name] = crossThreadMs();
  }
}

export function newMarks(): ThreadMarks {
  return { shards: 0, chunks: 0 };
}
