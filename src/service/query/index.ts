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
  QueryClock,
  type ReadContext,
  checkKeys,
  compileRead,
  compileReads,
  executeQueryAsync,
  executeReadSync,
  lookupIndex,
  queryContext,
  respond,
  runReadsSync,
} from '../../executor/index.js';
import type { QueryOptions, QueryResponse, QueryResult } from '../../executor/result.js';
import type { Call, Query } from '../../pql/ast.js';
import type { Holder } from '../../state/holder.js';
import type { Index } from '../../state/index-state.js';
import { assertNever } from '../../util/assert.js';
import { assignKeys } from './plan-keys.js';
import { decideColumnAttrs, decideRowAttrs } from './decide-attrs.js';
import { decideClear, decideSet, decideSetValue } from './decide-bits.js';
import { decideClearRow, decideStore } from './decide-rows.js';
import { type WritePlan, compileWrite, isWriteCall } from './write-plan.js';

export interface QueryLimits {
  /** Write calls allowed in one request; 0 = unlimited. */
  maxWritesPerRequest: number;
}

type Step = { kind: 'read'; plan: ReturnType<typeof compileRead> } | { kind: 'write'; plan: WritePlan };

export function runQuery(
  holder: Holder,
  sink: EventSink,
  indexName: string,
  query: Query,
  opts: QueryOptions,
  limits: QueryLimits,
  /** ms since epoch; a time range without `to` ends at now + 1 day (tests pin it). */
  now?: number,
): QueryResponse {
  const index = lookupIndex(holder, indexName);
  let writes = 0;
  for (const c of query.calls) if (isWriteCall(c)) writes++;
  if (limits.maxWritesPerRequest > 0 && writes > limits.maxWritesPerRequest)
    throw badRequest('executing: too many write commands');
  const clock = new QueryClock(now);
  if (writes === 0) return runReadsSync(compileReads(index, query.calls, opts, clock));
  // Read-only queries check keys inside compileReads; writes need them checked before compiling.
  checkKeys(index, query.calls);
  const env = { index, clock, keysChecked: true };
  const steps: Step[] = query.calls.map((c: Call) =>
    isWriteCall(c) ? { kind: 'write', plan: compileWrite(env, c) } : { kind: 'read', plan: compileRead(env, c) },
  );
  assignKeys(
    index,
    steps.flatMap((s) => (s.kind === 'write' ? [s.plan] : [])),
    sink,
  );
  const explicit = opts.shards !== undefined && opts.shards.length > 0;
  const outputs: CallOutput[] = [];
  for (const step of steps) {
    // Per step: an earlier write may have added shards.
    const ctx = queryContext(index, opts);
    outputs.push(
      step.kind === 'read' ? executeReadSync(ctx, step.plan) : { result: write(index, ctx, explicit, step.plan, sink) },
    );
  }
  return respond(index, outputs, opts.columnAttrs);
}

/** Read-only queries (the caller checked): sliced, yielding to the event loop between shards. */
export function runQueryAsync(
  holder: Holder,
  indexName: string,
  query: Query,
  opts: QueryOptions,
  _limits?: QueryLimits,
  o?: AsyncReadOptions,
): Promise<QueryResponse> {
  return executeQueryAsync(holder, indexName, query, opts, o);
}

function write(index: Index, ctx: ReadContext, explicitShards: boolean, p: WritePlan, sink: EventSink): QueryResult {
  switch (p.kind) {
    case 'set':
      return changed(decideSet(index, p, sink));
    case 'setValue':
      return changed(decideSetValue(index, p, sink));
    case 'clear':
      return changed(decideClear(index, p, sink));
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
        ctx.withSettings(p.settings),
        explicitShards || p.settings.shards !== undefined,
        p.child,
        sink,
      );
    default:
      return assertNever(p, 'write plan');
  }
}

const changed = (c: boolean): QueryResult => ({ type: 'changed', changed: c });

export { type WritePlan, isWriteCall } from './write-plan.js';
