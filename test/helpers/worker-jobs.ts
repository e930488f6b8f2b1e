// The executor tests' reads through the query workers' jobs, on the test's own thread (the
// query-workers run of the tests: vitest.query-workers.config.ts). The state is published as the
// engine publishes it to the workers (engine/frozen-feed.ts) and applied to a worker's mirror;
// the query's shards are cut in two shares and each share's job runs against the mirror
// (service/query-workers/job.ts); jobs and answers are structured-cloned as messages are; the
// answers are merged and finalized as offload.ts does. Only the thread hop is left out: the
// integration and property tests of the workers cross it.
import { FrozenFeed } from '../../src/engine/frozen-feed.js';
import { precountAnswer, resultBytes } from '../../src/executor/answer-size.js';
import { QueryClock } from '../../src/executor/clock.js';
import { finalizeQuery, mergeAllPreps } from '../../src/executor/merge.js';
import { type CallPrep, needsPrep } from '../../src/executor/partial.js';
import { prepareReads } from '../../src/executor/query.js';
import type { QueryOptions, QueryResponse } from '../../src/executor/result.js';
import { drainSync } from '../../src/executor/run.js';
import type { Query } from '../../src/pql/ast.js';
import { jobWork } from '../../src/service/query-workers/job.js';
import { StateMirror } from '../../src/service/query-workers/mirror.js';
import { offloadable, partialsOf, prepsOf, split } from '../../src/service/query-workers/offload.js';
import type { FromWorker, Job } from '../../src/service/query-workers/protocol.js';
import type { Holder } from '../../src/state/holder.js';

/** Whether this run of the tests asks for query workers (BITLEDGER_QUERY_WORKERS above 1). */
export const workerJobsAsked = (): boolean => Number(process.env.BITLEDGER_QUERY_WORKERS) > 1;

/** The read's answer from two workers' jobs; undefined when the workers would not take it. */
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
  const shares = split(reads.ctx.shards, 2);
  const base = { index, calls: query.calls, opts, now, timeoutMs: 0 };
  const run = (job: Omit<Job, 'id' | 'shards'>): Extract<FromWorker, { kind: 'done' }>[] =>
    shares.map((shards, id) => {
      const answer = structuredClone(drainSync(jobWork(mirror, structuredClone({ ...job, id, shards }))));
      if (answer.kind !== 'done') throw new Error(`a job answered ${answer.kind}`);
      return answer;
    });
  let preps: CallPrep[] = [];
  if (reads.plans.some(needsPrep)) preps = mergeAllPreps(reads.plans, run({ ...base, phase: 'prep' }).map(prepsOf));
  const partials = run({ ...base, phase: 'partial', preps }).map(partialsOf);
  const response = finalizeQuery(reads.index, reads.plans, partials, opts);
  response.results.forEach((r, i) => reads.answer.add(resultBytes(r), reads.plans[i].kind));
  return response;
}
