// The executor tests' reads through the query workers' jobs, on the test's own thread (the
// query-workers run of the tests: vitest.query-workers.config.ts). The state is published as the
// engine publishes it to the workers (engine/frozen-feed.ts) and applied to a worker's mirror;
// each phase is shared as offload.ts shares it when the workers are idle: the request thread's
// chunks (against the holder) and a worker job's chunks (against the mirror, merged there,
// service/query-workers/job.ts) claimed in turns from one board (here-share.ts); jobs and
// answers are structured-cloned as messages are; the chunks' and the job's answers are merged
// and finalized as offload.ts does. Only the thread hop is left out: the integration and property
// tests of the workers cross it.
import { FrozenFeed } from '../../src/engine/frozen-feed.js';
import { precountAnswer, resultBytes } from '../../src/executor/answer-size.js';
import { QueryClock } from '../../src/executor/clock.js';
import type { ReadContext } from '../../src/executor/context.js';
import { finalizeQuery, mergeAllPreps } from '../../src/executor/merge.js';
import { type CallPrep, needsPrep, partialsWork, prepsWork } from '../../src/executor/partial.js';
import { prepareReads } from '../../src/executor/query.js';
import type { QueryOptions, QueryResponse } from '../../src/executor/result.js';
import { type Work, drainSync } from '../../src/executor/run.js';
import type { Query } from '../../src/pql/ast.js';
import { ShardClaims, startClaiming } from '../../src/service/query-workers/here-share.js';
import { claimedShares, jobWork } from '../../src/service/query-workers/job.js';
import { StateMirror } from '../../src/service/query-workers/mirror.js';
import { offloadable, partialsOf, prepsOf } from '../../src/service/query-workers/offload.js';
import type { FromWorker, Job } from '../../src/service/query-workers/protocol.js';
import type { Holder } from '../../src/state/holder.js';

/** Whether this run of the tests asks for query workers (BITLEDGER_QUERY_WORKERS above 1). */
export const workerJobsAsked = (): boolean => Number(process.env.BITLEDGER_QUERY_WORKERS) > 1;

type JobAnswer = Extract<FromWorker, { kind: 'done' }>;

/** The read's answer from the request thread's and a worker's chunks; undefined when the workers would not take it. */
export function viaWorkerJobs(
  holder: Holder,
  index: string,
  query: Query,
  opts: QueryOptions,
  now: number,
): QueryResponse | undefined {
  const reads = prepareReads(holder, index, query, opts, new QueryClock(now));
  if (reads.ctx.shards.length === 0 || !offloadable(reads)) return undefined;
  const mirror = new StateMirror();
  mirror.apply(structuredClone(new FrozenFeed(holder).enable()));
  drainSync(precountAnswer(reads.ctx, reads.plans, reads.answer));
  const shards = reads.ctx.shards;
  const base = { index, calls: query.calls, opts, now, timeoutMs: 0 };
  const shared = <T>(
    job: Omit<Job, 'id' | 'shards'>,
    local: (ctx: ReadContext) => Work<T>,
    of: (a: JobAnswer) => T,
  ) => {
    const claims = new ShardClaims(1);
    const sent: Job = structuredClone({ ...job, id: 1, shards, claims: claims.slotOf(0) });
    if (!startClaiming(sent.claims ?? claims.slotOf(0))) throw new Error('a fresh job would not start');
    const theirs = jobWork(mirror, sent);
    const mine = claimedShares(reads.index, claims.here, shards, reads.ctx.opts, local);
    // Turns, as two threads would take them: one step each, until both are done.
    let a = theirs.next();
    let b = mine.next();
    while (a.done !== true || b.done !== true) {
      if (a.done !== true) a = theirs.next();
      if (b.done !== true) b = mine.next();
    }
    const answer = structuredClone(a.value);
    if (answer.kind !== 'done') throw new Error(`a job answered ${answer.kind}`);
    return 'none' in answer ? b.value : [...b.value, of(answer)];
  };
  let preps: CallPrep[] = [];
  if (reads.plans.some(needsPrep))
    preps = mergeAllPreps(
      reads.plans,
      shared({ ...base, phase: 'prep' }, (ctx) => prepsWork(ctx, reads.plans), prepsOf),
    );
  const partials = shared(
    { ...base, phase: 'partial', preps },
    (ctx) => partialsWork(ctx, reads.plans, preps),
    partialsOf,
  );
  const response = finalizeQuery(reads.index, reads.plans, partials, opts);
  response.results.forEach((r, i) => reads.answer.add(resultBytes(r), reads.plans[i].kind));
  return response;
}
