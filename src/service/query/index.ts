// The query use case: one parsed PQL query against one index.
//
// Order (docs/API.md §3.2, with Pilosa's defects fixed): (a) index lookup; (b) the write-count
// limit; (c) key checks and compilation of EVERY call, which validates it completely — so a
// request with a bad call anywhere applies nothing; (d) key assignment for the writes (one
// KeysAssigned event per translator, IDs from its nextId; reads never assign: an unknown key
// reads as an empty row); (e) the calls in order: reads through the executor, writes decided
// against the current state and emitted to the sink, which applies them at once so later calls
// see them. Every error is a 400 DomainError (`executing: …`).
import { badRequest } from '../../domain/errors.js';
import type { EventSink } from '../../events/types.js';
import {
  type AsyncReadOptions,
  type CallOutput,
  type ColRef,
  QueryClock,
  ReadContext,
  checkKeys,
  compileRead,
  compileReads,
  executeQueryAsync,
  executeReadSync,
  lookupIndex,
  queryContext,
  resolveCol,
  respond,
  runReadsSync,
} from '../../executor/index.js';
import type { QueryOptions, QueryResponse, QueryResult } from '../../executor/result.js';
import type { Call, Query } from '../../pql/ast.js';
import { shardOf } from '../../domain/shard.js';
import { assertNever } from '../../util/assert.js';
import { assignKeys } from './plan-keys.js';
import { decideColumnAttrs, decideRowAttrs } from './decide-attrs.js';
import { decideClear, decideSet, decideSetValue } from './decide-bits.js';
import { decideClearRow, decideStore } from './decide-rows.js';
import { type WritePlan, compileWrite, isWriteCall } from './write-plan.js';
import type { ReadonlyHolder, ReadonlyIndex } from '../../state/readonly.js';
import type { Clock } from '../../util/clock.js';

export interface QueryLimits {
  /** Write calls allowed in one request; 0 = unlimited. */
  maxWritesPerRequest: number;
}

export type Step = { kind: 'read'; plan: ReturnType<typeof compileRead> } | { kind: 'write'; plan: WritePlan };

export function runQuery(
  holder: ReadonlyHolder,
  sink: EventSink,
  indexName: string,
  query: Query,
  opts: QueryOptions,
  limits: QueryLimits,
  /** ms since epoch, or the clock to read it from; a time range without `to` ends at now + 1 day (tests pin it). */
  now?: number | Clock,
  /**
   * Cluster mode: the writes may change only shards for which this holds (the shards of one
   * log partition). Calls that touch every shard (ClearRow, Store) then change only those, as
   * with an explicit shard list; a Set or Clear of a column elsewhere changes nothing; keys must
   * have been assigned before (by the meta topic), so none is assigned here.
   */
  onlyShards?: (shard: number) => boolean,
): QueryResponse {
  const index = lookupIndex(holder, indexName);
  const clock = new QueryClock(now);
  const steps = compileQuery(index, query, opts, limits, clock);
  if (steps === undefined) return runReadsSync(compileReads(index, query.calls, opts, clock));
  if (onlyShards === undefined)
    assignKeys(
      index,
      steps.flatMap((s) => (s.kind === 'write' ? [s.plan] : [])),
      sink,
    );
  const explicit = onlyShards !== undefined || (opts.shards !== undefined && opts.shards.length > 0);
  const outputs: CallOutput[] = [];
  for (const step of steps) {
    // Per step: an earlier write may have added shards.
    const ctx = restrict(queryContext(index, opts), onlyShards);
    outputs.push(
      step.kind === 'read'
        ? executeReadSync(ctx, step.plan)
        : { result: write(index, ctx, explicit, step.plan, sink, onlyShards) },
    );
  }
  return respond(index, outputs, opts.columnAttrs);
}

/**
 * Steps (a)–(c) for a query with writes: the write-count limit, key checks and compilation of
 * every call, which throws the request's first error; undefined for a read-only query (which
 * compileReads validates). The cluster's coordinator validates with it before anything is sent.
 */
export function compileQuery(
  index: ReadonlyIndex,
  query: Query,
  opts: QueryOptions,
  limits: QueryLimits,
  clock: QueryClock = new QueryClock(),
): Step[] | undefined {
  let writes = 0;
  for (const c of query.calls) if (isWriteCall(c)) writes++;
  if (limits.maxWritesPerRequest > 0 && writes > limits.maxWritesPerRequest)
    throw badRequest('executing: too many write commands');
  if (writes === 0) {
    compileReads(index, query.calls, opts, clock);
    return undefined;
  }
  // Read-only queries check keys inside compileReads; writes need them checked before compiling.
  checkKeys(index, query.calls);
  const env = { index, clock, keysChecked: true, metaOffset: opts.metaOffset };
  return query.calls.map((c: Call) =>
    isWriteCall(c) ? { kind: 'write', plan: compileWrite(env, c) } : { kind: 'read', plan: compileRead(env, c) },
  );
}

/** Read-only queries (the caller checked): sliced, yielding to the event loop between shards. */
export function runQueryAsync(
  holder: ReadonlyHolder,
  indexName: string,
  query: Query,
  opts: QueryOptions,
  o?: AsyncReadOptions,
): Promise<QueryResponse> {
  return executeQueryAsync(holder, indexName, query, opts, o);
}

/** The context with only the shards `only` keeps (an explicit list: nothing else is touched). */
function restrict(ctx: ReadContext, only: ((shard: number) => boolean) | undefined): ReadContext {
  if (only === undefined) return ctx;
  return new ReadContext(ctx.index, ctx.shards.filter(only), ctx.opts, true);
}

/** Whether a one-column write lies outside the shards it may change (unknown keys: nothing to do). */
function outside(index: ReadonlyIndex, col: ColRef, only: ((shard: number) => boolean) | undefined): boolean {
  if (only === undefined) return false;
  const id = resolveCol(index, col);
  return id === undefined || !only(shardOf(id));
}

function write(
  index: ReadonlyIndex,
  ctx: ReadContext,
  explicitShards: boolean,
  p: WritePlan,
  sink: EventSink,
  only?: (shard: number) => boolean,
): QueryResult {
  switch (p.kind) {
    case 'set':
      return changed(!outside(index, p.col, only) && decideSet(index, p, sink));
    case 'setValue':
      return changed(!outside(index, p.col, only) && decideSetValue(index, p, sink));
    case 'clear':
      return changed(!outside(index, p.col, only) && decideClear(index, p, sink));
    case 'clearRow':
      return changed(decideClearRow(ctx, explicitShards, p, sink));
    case 'store':
      return changed(decideStore(ctx, explicitShards, p, sink));
    case 'rowAttrs':
      decideRowAttrs(index, p, sink);
      return { type: 'null' };
    case 'columnAttrs':
      decideColumnAttrs(index, p, sink);
      return { type: 'null' };
    case 'options':
      return write(
        index,
        restrict(ctx.withSettings(p.settings), only),
        explicitShards || p.settings.shards !== undefined,
        p.child,
        sink,
        only,
      );
    default:
      return assertNever(p, 'write plan');
  }
}

const changed = (c: boolean): QueryResult => ({ type: 'changed', changed: c });

export { type WritePlan, isWriteCall } from './write-plan.js';
export { writeKeys } from './plan-keys.js';
