// Read-only queries end to end: index lookup, key checks, compile (= validate) every call, run
// them in order, then columnAttrs. executeQuery runs synchronously; executeQueryAsync
// (query-async.ts) slices the same work and yields to the event loop between slices.
import { notFound } from '../domain/errors.js';
import type { Query } from '../pql/ast.js';
import { QueryClock } from './clock.js';
import { type Reads, compileReads, runReadsSync } from './reads.js';
import type { QueryOptions, QueryResponse } from './result.js';
import type { ReadonlyHolder, ReadonlyIndex } from '../state/readonly.js';

export function lookupIndex(holder: ReadonlyHolder, name: string): ReadonlyIndex {
  const index = holder.index(name);
  if (index === undefined) throw notFound('executing: index not found');
  return index;
}

export function executeQuery(
  holder: ReadonlyHolder,
  indexName: string,
  query: Query,
  opts: QueryOptions,
  now?: number,
): QueryResponse {
  return runReadsSync(prepareReads(holder, indexName, query, opts, new QueryClock(now)));
}

export function prepareReads(
  holder: ReadonlyHolder,
  indexName: string,
  query: Query,
  opts: QueryOptions,
  clock: QueryClock,
): Reads {
  return compileReads(lookupIndex(holder, indexName), query.calls, opts, clock);
}
