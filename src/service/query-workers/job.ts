// One job of a query worker (worker.ts): a phase of a query over its shares' shards, compiled
// against the worker's picture of the durable state (mirror.ts). Apart from the thread, so that
// tests can run a query's jobs against a mirror on their own thread (test/helpers/worker-jobs.ts).
import { badRequest } from '../../domain/errors.js';
import { QueryClock } from '../../executor/clock.js';
import { ReadContext, type ResultOptions } from '../../executor/context.js';
import { partialsWork, prepsWork } from '../../executor/partial.js';
import { compileReads } from '../../executor/reads.js';
import type { Work } from '../../executor/run.js';
import type { ReadonlyIndex } from '../../state/readonly.js';
import type { StateMirror } from './mirror.js';
import type { FromWorker, Job } from './protocol.js';

/** The job's phase as work over its shards, compiled against the mirror as it is now. */
export function* jobWork(mirror: StateMirror, job: Job): Work<FromWorker> {
  const index = mirror.index(job.index);
  // Created by a write not yet durable: the durable state has no such index, hence no bits.
  if (index === undefined) throw badRequest('executing: index not found');
  const { plans } = compileReads(index, job.calls, job.opts, new QueryClock(job.now));
  const ctx = shareContext(index, job.shards, job.opts);
  if (job.phase === 'prep') return { kind: 'done', id: job.id, preps: yield* prepsWork(ctx, plans) };
  return { kind: 'done', id: job.id, partials: yield* partialsWork(ctx, plans, job.preps ?? []) };
}

/**
 * The read context of one share of a query: its shards only, also for what a call reads through
 * the scope (a nested call's own shards), as a worker's job and the request thread's share read.
 */
export function shareContext(index: ReadonlyIndex, shards: readonly number[], opts: ResultOptions): ReadContext {
  const mine = new Set(shards);
  return new ReadContext(index, shards, opts, true, (s) => mine.has(s));
}
