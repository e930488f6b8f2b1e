// One job of a query worker (worker.ts): a phase of a query over its shares' shards, compiled
// against the worker's picture of the durable state (mirror.ts). Apart from the thread, so that
// tests can run a query's jobs against a mirror on their own thread (test/helpers/worker-jobs.ts).
import { badRequest } from '../../domain/errors.js';
import { QueryClock } from '../../executor/clock.js';
import { ReadContext, type ResultOptions } from '../../executor/context.js';
import { mergeAllPartials, mergeAllPreps } from '../../executor/merge.js';
import { partialsWork, prepsWork } from '../../executor/partial.js';
import { compileReads } from '../../executor/reads.js';
import type { Work } from '../../executor/run.js';
import type { ReadonlyIndex } from '../../state/readonly.js';
import { type ClaimSlot, claimedWork } from './here-share.js';
import type { StateMirror } from './mirror.js';
import type { Job, JobReply } from './protocol.js';

/**
 * The job's phase as work over its shards, compiled against the mirror as it is now; in a phase
 * shared with the request thread, over the chunks of them it claims, merged here.
 */
export function* jobWork(mirror: StateMirror, job: Job): Work<JobReply> {
  const index = mirror.index(job.index);
  // Created by a write not yet durable: the durable state has no such index, hence no bits.
  if (index === undefined) throw badRequest('executing: index not found');
  const { plans } = compileReads(index, job.calls, job.opts, new QueryClock(job.now));
  const { id } = job;
  if (job.phase === 'prep') {
    const parts = yield* shareWork(index, job, (ctx) => prepsWork(ctx, plans));
    if (parts.length === 0) return { kind: 'done', id, none: true };
    return { kind: 'done', id, preps: parts.length === 1 ? parts[0] : mergeAllPreps(plans, parts) };
  }
  const parts = yield* shareWork(index, job, (ctx) => partialsWork(ctx, plans, job.preps ?? []));
  if (parts.length === 0) return { kind: 'done', id, none: true };
  return { kind: 'done', id, partials: parts.length === 1 ? parts[0] : mergeAllPartials(plans, parts) };
}

/** `work` over the job's shards (one result), or over each chunk it claims of them (shared). */
function* shareWork<T>(index: ReadonlyIndex, job: Job, work: (ctx: ReadContext) => Work<T>): Work<T[]> {
  if (job.claims === undefined) return [yield* work(shareContext(index, job.shards, job.opts))];
  return yield* claimedShares(index, job.claims, job.shards, job.opts, work);
}

/** `work` over each chunk of `shards` claimed through `claims` (here-share.ts, from `first` if claimed before), in its own context. */
export function claimedShares<T>(
  index: ReadonlyIndex,
  claims: ClaimSlot,
  shards: readonly number[],
  opts: ResultOptions,
  work: (ctx: ReadContext) => Work<T>,
  first?: [number, number],
): Work<T[]> {
  return claimedWork(claims, shards, (chunk) => work(shareContext(index, chunk, opts)), first);
}

/**
 * The read context of one share of a query: its shards only, also for what a call reads through
 * the scope (a nested call's own shards), as a worker's job and the request thread's share read.
 */
export function shareContext(index: ReadonlyIndex, shards: readonly number[], opts: ResultOptions): ReadContext {
  const mine = new Set(shards);
  return new ReadContext(index, shards, opts, true, (s) => mine.has(s));
}
