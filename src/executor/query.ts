// Read-only queries end to end: index lookup, key checks, compile (= validate) every call, run
// them in order, then columnAttrs. executeQuery runs synchronously; executeQueryAsync slices the
// same work and yields to the event loop between slices.
//
// Consistency of the async variant: the state may change while it waits (other requests'
// writes). It records the state version (holder.appliedSeq, which the engine bumps on every
// applied event) and, when a resume finds it changed, throws the partial work away and starts
// over, so an answer always reflects one single state. After `maxRestarts` restarts it runs the
// last attempt without yielding, so a steady stream of writes cannot starve it.
import { badRequest, notFound } from '../domain/errors.js';
import type { Holder } from '../state/holder.js';
import type { Index } from '../state/index-state.js';
import type { Query } from '../pql/ast.js';
import type { ColumnAttrSet, QueryOptions, QueryResponse, QueryResult } from './result.js';
import { compileRead } from './compile-read.js';
import { ReadContext, shardsFor } from './context.js';
import { checkKeys } from './key-check.js';
import { type CallOutput, type Work, executeRead } from './run.js';

export interface AsyncReadOptions {
  /** ms since epoch (defaults to Date.now()): `to` of a time range defaults to now + 1 day. */
  now?: number;
  /** Longest stretch of work between two yields to the event loop. */
  sliceMs?: number;
  /** State version; defaults to holder.appliedSeq. */
  version?: () => number;
  maxRestarts?: number;
}

export function lookupIndex(holder: Holder, name: string): Index {
  const index = holder.index(name);
  if (index === undefined) throw notFound('executing: index not found');
  return index;
}

export function executeQuery(holder: Holder, indexName: string, query: Query, opts: QueryOptions, now = Date.now()): QueryResponse {
  return drainSync(queryWork(holder, indexName, query, opts, now));
}

export async function executeQueryAsync(
  holder: Holder,
  indexName: string,
  query: Query,
  opts: QueryOptions,
  o: AsyncReadOptions = {},
): Promise<QueryResponse> {
  const now = o.now ?? Date.now();
  const version = o.version ?? ((): number => holder.appliedSeq);
  const maxRestarts = o.maxRestarts ?? 3;
  for (let attempt = 0; ; attempt++) {
    const work = queryWork(holder, indexName, query, opts, now);
    if (attempt >= maxRestarts) return drainSync(work);
    const v0 = version();
    // 1 ms slices: a small query arriving meanwhile waits at most about that long.
    const r = await drainAsync(work, o.sliceMs ?? 1, () => version() === v0);
    if (r.done) return r.value;
  }
}

function* queryWork(holder: Holder, indexName: string, query: Query, opts: QueryOptions, now: number): Work<QueryResponse> {
  const index = lookupIndex(holder, indexName);
  checkKeys(index, query.calls);
  const plans = query.calls.map((c) => compileRead({ index, now }, c));
  const outputs: CallOutput[] = [];
  for (const plan of plans) {
    const ctx = new ReadContext(index, shardsFor(index, opts.shards), opts, now, opts.shards !== undefined && opts.shards.length > 0);
    outputs.push(yield* executeRead(ctx, plan));
  }
  return respond(index, outputs, opts.columnAttrs);
}

/** Results plus columnAttrs when requested (by the options or by Options()) and non-empty. */
export function respond(index: Index, outputs: readonly CallOutput[], columnAttrs: boolean): QueryResponse {
  const results: QueryResult[] = outputs.map((o) => o.result);
  if (!columnAttrs && !outputs.some((o) => o.columnAttrs === true)) return { results };
  const sets = columnAttrSets(index, outputs.map((o) => o.columns ?? []));
  return sets.length > 0 ? { results, columnAttrs: sets } : { results };
}

/** Attributes of the columns of all row results, by ascending ID (keys on a keyed index). */
export function columnAttrSets(index: Index, columnLists: readonly number[][]): ColumnAttrSet[] {
  if (index.columnAttrs.size === 0) return [];
  const ids = new Set<number>();
  for (const list of columnLists) for (const c of list) if (index.columnAttrs.has(c)) ids.add(c);
  return [...ids]
    .sort((a, b) => a - b)
    .map((id) => {
      const attrs = { ...index.columnAttrs.get(id) };
      return index.options.keys ? { key: index.columnKeys.key(id) ?? '', attrs } : { id, attrs };
    });
}

export function drainSync<T>(work: Work<T>): T {
  for (;;) {
    const r = work.next();
    if (r.done === true) return r.value;
  }
}

/** Runs work in slices of about sliceMs; gives up (done: false) when `valid` turns false. */
async function drainAsync<T>(work: Work<T>, sliceMs: number, valid: () => boolean): Promise<{ done: true; value: T } | { done: false }> {
  let sliceStart = performance.now();
  for (;;) {
    const r = work.next();
    if (r.done === true) return { done: true, value: r.value };
    if (performance.now() - sliceStart >= sliceMs) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (!valid()) return { done: false };
      sliceStart = performance.now();
    }
  }
}
