// A read query spread over the query workers: validated and compiled here (the request
// thread's errors, in Pilosa's texts, come before any work), its shards cut into one share per
// worker, each share's partials computed by a worker against the durable state it holds, and the
// partials merged and finalized here (executor/merge.ts: order, limits, the result bound, keys
// and attributes), exactly as the cluster merges its nodes' partials.
import { type QueryBudget, QueryClock, budgetSignal, checkBudget, executePreparedAsync } from '../../executor/index.js';
import { precountAnswer, resultBytes } from '../../executor/answer-size.js';
import { finalizeQuery, mergeAllPreps } from '../../executor/merge.js';
import { drainSync } from '../../executor/run.js';
import type { CallPartial } from '../../executor/partial.js';
import { type CallPrep, innermostPlan, needsPrep, readMovesColumns } from '../../executor/partial.js';
import { prepareReads } from '../../executor/query.js';
import type { Reads } from '../../executor/reads.js';
import type { QueryOptions, QueryResponse } from '../../executor/result.js';
import type { Query } from '../../pql/ast.js';
import type { ReadonlyHolder } from '../../state/readonly.js';
import type { QueryWorkers } from './pool.js';
import { rowBitsRead } from './work-estimate.js';

/**
 * The query's answer, from the workers or the request thread: here when the pool is down, too
 * few shards, too little work (work-estimate.ts: a job's hand-overs would cost more than the
 * work), or it needs what the workers do not hold (string keys, TopN's caches and attribute
 * filters) or moves columns between shards (Shift). Compiled once for either way.
 */
export function workerRead(
  pool: QueryWorkers,
  holder: ReadonlyHolder,
  indexName: string,
  query: Query,
  opts: QueryOptions,
  budget: QueryBudget,
): Promise<QueryResponse> {
  try {
    const clock = new QueryClock(budget.clock);
    const reads = prepareReads(holder, indexName, query, opts, clock);
    if (pool.usable && reads.ctx.shards.length >= pool.minShards && offloadable(reads))
      if (pool.minWorkBits <= 0 || rowBitsRead(reads, pool.minWorkBits) >= pool.minWorkBits)
        return runPhases(pool, reads, query, opts, budget, clock.now());
    return executePreparedAsync(holder, reads, indexName, query, opts, clock, { budget });
  } catch (e) {
    return Promise.reject(e);
  }
}

function offloadable(r: Reads): boolean {
  if (r.index.options.keys) return false;
  for (const f of r.index.fields.values()) if (f.options.keys) return false;
  return r.plans.every((p) => innermostPlan(p).kind !== 'topN' && !readMovesColumns(p));
}

async function runPhases(
  pool: QueryWorkers,
  reads: Reads,
  query: Query,
  opts: QueryOptions,
  budget: QueryBudget,
  now: number,
): Promise<QueryResponse> {
  const shares = split(reads.ctx.shards, pool.size);
  // Made only now: most reads stay on the request thread, where the client's flag is enough.
  const signal = budgetSignal(budget);
  const left = budget.deadline - budget.clock.monotonic();
  const base = {
    index: reads.index.name,
    calls: query.calls,
    opts,
    now,
    timeoutMs: budget.timeoutMs,
    ...(Number.isFinite(left) ? { remainingMs: left } : {}),
  };
  // The answer's byte budget as the request thread counts it (executor/answer-size.ts): bitmap
  // answers before any work, the rest once built.
  drainSync(precountAnswer(reads.ctx, reads.plans, reads.answer));
  let preps: CallPrep[] = [];
  if (reads.plans.some(needsPrep)) {
    const answers = await pool.run({ ...base, phase: 'prep' }, shares, signal);
    checkBudget(budget);
    preps = mergeAllPreps(reads.plans, answers.map(prepsOf));
  }
  const answers = await pool.run({ ...base, phase: 'partial', preps }, shares, signal);
  const response = finalizeQuery(reads.index, reads.plans, answers.map(partialsOf), opts);
  response.results.forEach((r, i) => reads.answer.add(resultBytes(r), reads.plans[i].kind));
  return response;
}

const prepsOf = (a: Awaited<ReturnType<QueryWorkers['run']>>[number]): CallPrep[] => {
  if (!('preps' in a)) throw new Error('a query worker answered partials to phase one');
  return a.preps;
};

const partialsOf = (a: Awaited<ReturnType<QueryWorkers['run']>>[number]): CallPartial[] => {
  if (!('partials' in a)) throw new Error('a query worker answered phase one to partials');
  return a.partials;
};

/** Contiguous shares of about equal size, as many as there are workers (fewer with fewer shards). */
export function split(shards: readonly number[], n: number): number[][] {
  const k = Math.min(n, shards.length);
  const out: number[][] = [];
  for (let i = 0; i < k; i++)
    out.push(shards.slice(Math.floor((i * shards.length) / k), Math.floor(((i + 1) * shards.length) / k)));
  return out;
}
