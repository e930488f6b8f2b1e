// A read query spread over the query workers: validated and compiled here (the request
// thread's errors, in Pilosa's texts, come before any work), its shards cut into one share per
// worker, each share's partials computed by a worker against the durable state it holds, and the
// partials merged and finalized here (executor/merge.ts: order, limits, the result bound, keys
// and attributes), exactly as the cluster merges its nodes' partials. When the workers are idle
// the request thread computes with them, the shards claimed chunk by chunk (here-share.ts).
import {
  type QueryBudget,
  QueryClock,
  budgetSignal,
  checkBudget,
  executePreparedAsync,
  executePreparedNow,
} from '../../executor/index.js';
import { precountAnswer, resultBytes } from '../../executor/answer-size.js';
import { finalizeQuery, mergeAllPreps } from '../../executor/merge.js';
import { drainSync } from '../../executor/run.js';
import type { ReadContext } from '../../executor/context.js';
import {
  type CallPartial,
  type CallPrep,
  innermostPlan,
  needsPrep,
  partialsWork,
  prepsWork,
  readMovesColumns,
} from '../../executor/partial.js';
import { prepareReads } from '../../executor/query.js';
import { runSliced } from '../../executor/query-async.js';
import type { Work } from '../../executor/run.js';
import type { Reads } from '../../executor/reads.js';
import type { QueryOptions, QueryResponse } from '../../executor/result.js';
import type { Query } from '../../pql/ast.js';
import type { ReadonlyHolder } from '../../state/readonly.js';
import { claimedShares } from './job.js';
import { ShardClaims, claimChunk } from './here-share.js';
import type { QueryWorkers } from './pool.js';
import type { FromWorker, Job } from './protocol.js';
import { QueryTimeline } from './timeline.js';
import { rowBitsRead } from './work-estimate.js';
import { promised } from '../../util/promised.js';

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
  return promised(() => workerReadNow(pool, holder, indexName, query, opts, budget));
}

/**
 * workerRead, but a read the request thread runs unsliced answers with its response itself and
 * throws its errors (executePreparedNow); the workers' and sliced reads answer a promise.
 */
export function workerReadNow(
  pool: QueryWorkers,
  holder: ReadonlyHolder,
  indexName: string,
  query: Query,
  opts: QueryOptions,
  budget: QueryBudget,
): QueryResponse | Promise<QueryResponse> {
  const timeline = pool.timelines === undefined ? undefined : new QueryTimeline();
  timeline?.mark('begin');
  const clock = new QueryClock(budget.clock);
  const reads = prepareReads(holder, indexName, query, opts, clock);
  timeline?.mark('compiled');
  if (pool.usable && reads.ctx.shards.length >= pool.minShards && offloadable(reads))
    if (pool.minWorkBits <= 0 || workBits(holder, query, opts, reads, pool.minWorkBits) >= pool.minWorkBits) {
      timeline?.mark('estimated');
      const here = (): Promise<QueryResponse> =>
        executePreparedAsync(holder, reads, indexName, query, opts, clock, { budget });
      return readSpread({ pool, reads, query, opts, budget, now: clock.now(), timeline }, holder, here);
    }
  return executePreparedNow(holder, reads, indexName, query, opts, clock, { budget });
}

/** A query's last work estimate: valid while the state (holder and sequence), index and cap are the same. */
interface KnownWork {
  holder: ReadonlyHolder;
  seq: number;
  index: string;
  cap: number;
  bits: number;
}

/**
 * The estimate of each query kept for the next request with it: a repeated query text is the same
 * Query object (QueryTexts), and until a write is applied its rows hold the same bits, so the
 * rows' sizes shard by shard (about 1.5 µs of a 16-shard Count of two rows) are not read again.
 * A request's own shard list is estimated every time.
 */
const knownWork = new WeakMap<Query, KnownWork>();

function workBits(holder: ReadonlyHolder, query: Query, opts: QueryOptions, reads: Reads, cap: number): number {
  if (opts.shards !== undefined) return rowBitsRead(reads, cap);
  const index = reads.index.name;
  const k = knownWork.get(query);
  if (k !== undefined && k.holder === holder && k.seq === holder.appliedSeq && k.index === index && k.cap === cap)
    return k.bits;
  const bits = rowBitsRead(reads, cap);
  knownWork.set(query, { holder, seq: holder.appliedSeq, index, cap, bits });
  return bits;
}

/** Whether the workers can take the read (their state has no keys, no TopN caches; no Shift). */
export function offloadable(r: Reads): boolean {
  if (r.index.options.keys) return false;
  for (const f of r.index.fields.values()) if (f.options.keys) return false;
  return r.plans.every((p) => innermostPlan(p).kind !== 'topN' && !readMovesColumns(p));
}

/** A read going to the workers: the compiled query, its request's options, deadline and now. */
interface Spread {
  pool: QueryWorkers;
  reads: Reads;
  query: Query;
  opts: QueryOptions;
  budget: QueryBudget;
  now: number;
  /** Marked when the pool collects timelines (timeline.ts). */
  timeline: QueryTimeline | undefined;
}

/**
 * runPhases on the workers; when they are idle, shared with the request thread, or on the request
 * thread alone when that has been faster lately (here-share.ts: ShareGain).
 */
async function readSpread(
  s: Spread,
  holder: ReadonlyHolder,
  alone: () => Promise<QueryResponse>,
): Promise<QueryResponse> {
  const { pool, budget } = s;
  const shards = s.reads.ctx.shards.length;
  // One shard has no second share to give the workers.
  if (shards < 2 || !pool.canShareHere()) return runPhases(s, undefined);
  const onAlone = pool.adaptShare && pool.shareGain.runAlone();
  const t0 = budget.clock.monotonic();
  const response = await (onAlone ? alone() : sharedRead(s, { holder, seq: holder.appliedSeq }));
  pool.shareGain.note(onAlone, (budget.clock.monotonic() - t0) / shards);
  return response;
}

/** runPhases shared with the request thread; once without if the state moved. */
async function sharedRead(s: Spread, here: Here): Promise<QueryResponse> {
  try {
    return await runPhases(s, here);
  } catch (err) {
    if (!(err instanceof StateMoved)) throw err;
    s.pool.stats.stateMoved++;
    // A write was applied during the request thread's share: the workers' shares read the state
    // before it. The workers alone read one state (the durable one) again.
    return runPhases(s, undefined);
  }
}

/**
 * Prep and partial phases over the workers and, with `here`, the request thread's share of its
 * holder, as of its `seq` (the state the workers hold: QueryWorkers.canShareHere).
 */
async function runPhases(
  { pool, reads, query, opts, budget, now, timeline }: Spread,
  here: Here | undefined,
): Promise<QueryResponse> {
  const shards = reads.ctx.shards;
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
  const phase = <T>(job: Omit<Job, 'id' | 'shards'>, local: (ctx: ReadContext) => Work<T>, of: (a: JobAnswer) => T) =>
    here === undefined
      ? pool.run(job, split(shards, pool.size), signal).then((a) => a.map(of))
      : sharedPhase({ pool, here, reads, budget, signal, timeline }, job, local, of);
  let preps: CallPrep[] = [];
  if (reads.plans.some(needsPrep)) {
    const answers = await phase({ ...base, phase: 'prep' }, (ctx) => prepsWork(ctx, reads.plans), prepsOf);
    checkBudget(budget);
    preps = mergeAllPreps(reads.plans, answers);
  }
  const answers = await phase(
    { ...base, phase: 'partial', preps },
    (ctx) => partialsWork(ctx, reads.plans, preps),
    partialsOf,
  );
  const response = finalizeQuery(reads.index, reads.plans, answers, opts);
  response.results.forEach((r, i) => reads.answer.add(resultBytes(r), reads.plans[i].kind));
  if (timeline !== undefined && here !== undefined) {
    timeline.mark('finalized');
    pool.timelines?.push(timeline);
  }
  return response;
}

/** The request thread's state while it shares a query: its holder, at the sequence it had. */
interface Here {
  holder: ReadonlyHolder;
  seq: number;
}

/**
 * One phase with the request thread's share (here-share.ts): the workers' jobs sent first (all
 * workers but one: as many threads as cores), then the chunks the request thread claims computed
 * here in slices (deadline and client checked as any sliced read), against the holder as of
 * `here.seq`; a write applied since (before this phase, or during it) ends it with StateMoved.
 * Once no shard is left, the workers that had not started are closed (they take none) and the
 * others awaited: each holds one chunk at most.
 */
async function sharedPhase<T>(
  s: {
    pool: QueryWorkers;
    here: Here;
    reads: Reads;
    budget: QueryBudget;
    signal: AbortSignal | undefined;
    timeline: QueryTimeline | undefined;
  },
  job: Omit<Job, 'id' | 'shards'>,
  local: (ctx: ReadContext) => Work<T>,
  of: (a: JobAnswer) => T,
): Promise<T[]> {
  const { pool, here, reads, timeline } = s;
  // A write applied between two phases (after the first phase's share): the second would read it.
  if (here.holder.appliedSeq !== here.seq) stateMoved();
  const shards = reads.ctx.shards;
  const claims = new ShardClaims(Math.min(pool.size - 1, shards.length - 1));
  // Its first chunk before the workers can claim any: whatever they do, the request thread
  // computes from the start (and a write applied meanwhile is seen at its first yield).
  const mySlot = timeline === undefined ? claims.here : { ...claims.here, marks: timeline.here };
  timeline?.mark('boarded');
  const first = claimChunk(mySlot, shards.length);
  const sent = pool.share(job, shards, claims, s.signal, timeline);
  timeline?.mark('posted');
  pool.stats.sharedHere++;
  let mine: T[];
  try {
    const work = claimedShares(reads.index, mySlot, shards, reads.ctx.opts, local, first);
    mine = await runSliced(work, stateMoved, here.holder, {
      budget: s.budget,
      maxRestarts: 1,
      sliceMs: pool.hereSliceMs,
    });
  } catch (err) {
    sent.abandon();
    throw err;
  }
  // The workers not started take nothing; the others hold a chunk at most.
  timeline?.mark('hereDone');
  const closed = Array.from({ length: claims.jobs }, (_, i) => claims.close(i));
  for (let i = 0; i < claims.jobs; i++) if (!closed[i] && claims.spinUntilDone(i, pool.finishSpinMs)) sent.receive(i);
  timeline?.mark('spun');
  const answers = await sent.answers((i) => closed[i]);
  timeline?.mark('answers');
  const theirs: T[] = [];
  for (const a of answers) {
    if (timeline !== undefined) timeline.workers.push(a.marks ?? { shards: 0, chunks: 0 });
    if (!('none' in a)) theirs.push(of(a));
  }
  return [...mine, ...theirs];
}

/** A write was applied while the request thread computed its share. */
class StateMoved extends Error {}

const stateMoved = (): never => {
  throw new StateMoved("the state changed during the request thread's share");
};

type JobAnswer = Extract<FromWorker, { kind: 'done' }>;

export const prepsOf = (a: JobAnswer): CallPrep[] => {
  if (!('preps' in a)) throw new Error('a query worker answered partials to phase one');
  return a.preps;
};

export const partialsOf = (a: JobAnswer): CallPartial[] => {
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
