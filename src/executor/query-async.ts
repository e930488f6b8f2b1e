// executeQueryAsync: a read-only query sliced, yielding to the event loop between slices.
//
// Consistency: the state may change while it waits (other requests' writes). It records the
// state version (holder.appliedSeq, which the engine bumps on every applied event) and, when a
// resume finds it changed, throws the partial work away and starts over, so an answer always
// reflects one single state. After `maxRestarts` restarts it runs the last attempt without
// yielding, so a steady stream of writes cannot starve it.
//
// Bounds (budget.ts): the deadline is checked at every clock reading of a slice and the client
// at every resume; either ends the query with an error, also in the last, unyielding attempt.
import type { Query } from '../pql/ast.js';
import { type Clock, systemClock } from '../util/clock.js';
import { type QueryBudget, checkBudget } from './budget.js';
import { QueryClock } from './clock.js';
import { prepareReads } from './query.js';
import { type Reads, readsWork, runReadsSync, unsliced } from './reads.js';
import type { QueryOptions, QueryResponse } from './result.js';
import { type Work, drainSync } from './run.js';
import type { ReadonlyHolder } from '../state/readonly.js';
import { promised } from '../util/promised.js';

export interface AsyncReadOptions {
  /** ms since epoch (default: the clock's now): `to` of a time range defaults to now + 1 day. */
  now?: number;
  /** What slices are timed by and "now" is read from (default: the budget's, else the system's). */
  clock?: Clock;
  /** Longest stretch of work between two yields to the event loop. */
  sliceMs?: number;
  /** State version; defaults to holder.appliedSeq. */
  version?: () => number;
  maxRestarts?: number;
  /** Deadline and client of the request; none: unbounded (tests, internal callers). */
  budget?: QueryBudget;
}

/** The default options, shared: a fresh `{}` per query would be garbage to collect. */
const NO_OPTIONS: AsyncReadOptions = Object.freeze({});

/**
 * Not an async function: a query that finishes within its first slice (most do) answers with an
 * already-resolved promise, without the extra hops of awaiting an inner async function. Errors
 * still come back as a rejected promise.
 */
export function executeQueryAsync(
  holder: ReadonlyHolder,
  indexName: string,
  query: Query,
  opts: QueryOptions,
  o: AsyncReadOptions = NO_OPTIONS,
): Promise<QueryResponse> {
  return promised(() => executeQueryNow(holder, indexName, query, opts, o));
}

/** executeQueryAsync answering as executePreparedNow: an unsliced query's response itself. */
export function executeQueryNow(
  holder: ReadonlyHolder,
  indexName: string,
  query: Query,
  opts: QueryOptions,
  o: AsyncReadOptions = NO_OPTIONS,
): QueryResponse | Promise<QueryResponse> {
  const clock = new QueryClock(o.now ?? o.clock ?? o.budget?.clock);
  return executePreparedNow(
    holder,
    prepareReads(holder, indexName, query, opts, clock),
    indexName,
    query,
    opts,
    clock,
    o,
  );
}

/**
 * executeQueryAsync for a query the caller already compiled against `holder` with `clock`
 * (the query-worker offload decision compiles it once for both ways of running it).
 */
export function executePreparedAsync(
  holder: ReadonlyHolder,
  reads: Reads,
  indexName: string,
  query: Query,
  opts: QueryOptions,
  clock: QueryClock,
  o: AsyncReadOptions = NO_OPTIONS,
): Promise<QueryResponse> {
  return promised(() => executePreparedNow(holder, reads, indexName, query, opts, clock, o));
}

/**
 * executePreparedAsync, but a query that runs unsliced (most small ones) answers with its
 * response itself, not a promise of it, and its errors are thrown: the HTTP lean path answers
 * it in the same turn, without the promise hops (issue 24). Sliced work answers a promise.
 */
export function executePreparedNow(
  holder: ReadonlyHolder,
  reads: Reads,
  indexName: string,
  query: Query,
  opts: QueryOptions,
  clock: QueryClock,
  o: AsyncReadOptions = NO_OPTIONS,
): QueryResponse | Promise<QueryResponse> {
  const maxRestarts = o.maxRestarts ?? 3;
  if (maxRestarts <= 0) return runReadsSync(reads);
  if (unsliced(reads, o.sliceMs ?? 1)) {
    const response = runReadsSync(reads);
    // As a slice's first clock reading would: the deadline and the client, once the work is done.
    checkBudget(o.budget);
    return response;
  }
  const prepare = (): Work<QueryResponse> => readsWork(prepareReads(holder, indexName, query, opts, clock));
  return runSliced(readsWork(reads), prepare, holder, o);
}

/**
 * Any read work sliced as executeQueryAsync slices a query: `work` is prepared against the
 * holder's current state, `prepare` prepares it again after a restart. Not an async function,
 * for the same reason as executeQueryAsync.
 */
export function runSliced<T>(
  work: Work<T>,
  prepare: () => Work<T>,
  holder: ReadonlyHolder,
  o: AsyncReadOptions,
): Promise<T> {
  try {
    const maxRestarts = o.maxRestarts ?? 3;
    if (maxRestarts <= 0) return Promise.resolve(finish(work, o.budget, o.clock ?? o.budget?.clock ?? systemClock));
    const version = o.version ?? ((): number => holder.appliedSeq);
    const v0 = version();
    // 1 ms slices: a small query arriving meanwhile waits at most about that long.
    const sliceMs = o.sliceMs ?? 1;
    // The first slice runs now, as it would at the start of an async function.
    const budget = o.budget;
    const clock = o.clock ?? budget?.clock ?? systemClock;
    const r = drainSlice(work, sliceMs, budget, clock);
    if (r.done === true) return Promise.resolve(r.value);
    return continueAsync(prepare, { sliceMs, version, maxRestarts, budget, clock }, work, v0);
  } catch (e) {
    return Promise.reject(e);
  }
}

/** The rest of runSliced once its first slice ran out: yield, check, resume or restart. */
async function continueAsync<T>(
  prepare: () => Work<T>,
  o: Required<Omit<AsyncReadOptions, 'now' | 'budget'>> & { budget: QueryBudget | undefined },
  work: Work<T>,
  v0: number,
): Promise<T> {
  for (let attempt = 0; ; ) {
    const r = await drainAsync(work, o, () => o.version() === v0, attempt === 0);
    if (r.done) return r.value;
    attempt++;
    const next = prepare();
    // The last attempt runs straight through, but still within the deadline.
    if (attempt >= o.maxRestarts) return finish(next, o.budget, o.clock);
    v0 = o.version();
    work = next;
    const first = drainSlice(work, o.sliceMs, o.budget, o.clock);
    if (first.done === true) return first.value;
  }
}

/**
 * Runs work for about sliceMs from now; done: false when it is suspended at a shard boundary.
 * The clock is read every `every` steps, sized from the steps so far so that about sliceMs/8
 * passes between readings: a per-shard clock reading cost several percent on queries over
 * hundreds of small shards, while one slow step still ends the slice on time.
 */
function drainSlice<T>(
  work: Work<T>,
  sliceMs: number,
  budget: QueryBudget | undefined,
  clock: Clock,
): IteratorResult<void, T> {
  const sliceStart = clock.monotonic();
  let steps = 0;
  let every = 1;
  let countdown = 1;
  for (;;) {
    const r = work.next();
    if (r.done === true) return r;
    steps++;
    if (--countdown > 0) continue;
    const now = clock.monotonic();
    checkBudget(budget, now);
    const elapsed = now - sliceStart;
    if (elapsed >= sliceMs) return r;
    every =
      elapsed <= 0
        ? MAX_STEPS_PER_CLOCK
        : Math.max(1, Math.min(MAX_STEPS_PER_CLOCK, Math.floor(sliceMs / 8 / (elapsed / steps))));
    countdown = every;
  }
}

const MAX_STEPS_PER_CLOCK = 64;

/** Runs work to its end without yielding, checking the budget as a slice does. */
function finish<T>(work: Work<T>, budget: QueryBudget | undefined, clock: Clock): T {
  if (budget === undefined) return drainSync(work);
  const r = drainSlice(work, Infinity, budget, clock);
  if (r.done !== true) throw new Error('an unbounded slice ended before its work');
  return r.value;
}

/**
 * Resolves after the event loop's next poll phase, where waiting requests are read. A query
 * starts from a request callback, i.e. in a poll phase, and a setImmediate made there fires in
 * that same loop turn: its first yield let no request in, and a small query waited two slices,
 * about a whole 2.5 ms 256-shard query (query-http bench). A second setImmediate, made in the
 * check phase, fires only after the next poll phase; later yields are made there already.
 */
function afterPoll(madeInCheckPhase: boolean): Promise<void> {
  return new Promise<void>((resolve) => setImmediate(madeInCheckPhase ? resolve : () => setImmediate(resolve)));
}

/**
 * Yields to the event loop, then runs slices; gives up (done: false) when `valid` turns false.
 * `fromCaller`: the work's first slice ran in the caller's turn (any phase), not in a resume.
 */
async function drainAsync<T>(
  work: Work<T>,
  o: { sliceMs: number; budget: QueryBudget | undefined; clock: Clock },
  valid: () => boolean,
  fromCaller: boolean,
): Promise<{ done: true; value: T } | { done: false }> {
  for (let turn = 0; ; turn++) {
    await afterPoll(turn > 0 || !fromCaller);
    checkBudget(o.budget);
    if (!valid()) return { done: false };
    const r = drainSlice(work, o.sliceMs, o.budget, o.clock);
    if (r.done === true) return { done: true, value: r.value };
  }
}
