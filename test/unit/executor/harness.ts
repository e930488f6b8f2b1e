// Test harness: run PQL through the real parser and runQuery, and render results in Pilosa's
// JSON shapes (docs/API.md §3.3) so expectations read like Pilosa responses. In the
// query-workers run of the tests, reads go through the workers' jobs (helpers/worker-jobs.ts).
import { DomainError } from '../../../src/domain/errors.js';
import type { QueryOptions, QueryResponse, QueryResult } from '../../../src/executor/result.js';
import { parse } from '../../../src/pql/index.js';
import { runQuery } from '../../../src/service/query/index.js';
import { isWriteCall } from '../../../src/service/query/write-plan.js';
import { viaWorkerJobs, workerJobsAsked } from '../../helpers/worker-jobs.js';
import { MemorySink } from '../../helpers/memory-sink.js';

export const NOW = Date.UTC(2020, 0, 1);

export const defaultOpts: QueryOptions = { columnAttrs: false, excludeColumns: false, excludeRowAttrs: false };

export function run(
  sink: MemorySink,
  index: string,
  pql: string,
  opts: Partial<QueryOptions> = {},
  max = 0,
): QueryResponse {
  const query = parse(pql);
  const o = { ...defaultOpts, ...opts };
  // The query-workers run of the tests: reads the workers take are answered by their jobs.
  if (workerJobsAsked() && !query.calls.some(isWriteCall)) {
    const r = viaWorkerJobs(sink.holder, index, query, o, NOW);
    if (r !== undefined) return r;
  }
  return runQuery(sink.holder, sink, index, query, o, { maxWritesPerRequest: max }, NOW);
}

/** The JSON results of a query (one entry per call). */
export function results(sink: MemorySink, index: string, pql: string, opts: Partial<QueryOptions> = {}): unknown[] {
  return run(sink, index, pql, opts).results.map(toJson);
}

/** The JSON result of a single-call query. */
export function one(sink: MemorySink, index: string, pql: string, opts: Partial<QueryOptions> = {}): unknown {
  const r = results(sink, index, pql, opts);
  if (r.length !== 1) throw new Error(`expected one result, got ${r.length}`);
  return r[0];
}

/** The error message of a failing query (throws if it succeeds). */
export function error(sink: MemorySink, index: string, pql: string, opts: Partial<QueryOptions> = {}, max = 0): string {
  try {
    run(sink, index, pql, opts, max);
  } catch (e) {
    if (e instanceof DomainError) return e.message;
    throw e;
  }
  throw new Error(`query succeeded: ${pql}`);
}

export const num = (v: bigint): number | bigint => (v >= -(2n ** 53n) && v <= 2n ** 53n ? Number(v) : v);

export function toJson(r: QueryResult): unknown {
  switch (r.type) {
    case 'row':
      if (r.keys !== undefined)
        return r.keys.length > 0
          ? { attrs: attrs(r.attrs), columns: [], keys: r.keys }
          : { attrs: attrs(r.attrs), columns: [] };
      return { attrs: attrs(r.attrs), columns: Array.isArray(r.columns) ? r.columns : r.columns.toArray() };
    case 'count':
      return r.n;
    case 'changed':
      return r.changed;
    case 'pairs':
      return r.pairs.map((p) =>
        p.key !== undefined ? { id: p.id, key: p.key, count: p.count } : { id: p.id, count: p.count },
      );
    case 'valcount':
      return { value: num(r.value), count: r.count };
    case 'null':
      return null;
    case 'groupcounts':
      return r.groups;
    case 'rowids':
      return r.keys !== undefined
        ? r.keys.length > 0
          ? { rows: null, keys: r.keys }
          : { rows: null }
        : { rows: r.rows };
    case 'pair':
      return r.pair.key !== undefined
        ? { id: r.pair.id, key: r.pair.key, count: r.pair.count }
        : { id: r.pair.id, count: r.pair.count };
  }
}

function attrs(a: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(a).sort()) {
    const v = a[k];
    out[k] = typeof v === 'bigint' ? num(v) : v;
  }
  return out;
}

export { MemorySink };
