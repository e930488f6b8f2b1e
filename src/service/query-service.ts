// The query use case at the service boundary: PQL text → parse → (writes: engine.write, one
// durable event group; reads: engine.read/readAsync) → QueryResponse.
import { DomainError, badRequest } from '../domain/errors.js';
import type { Engine } from '../engine/engine.js';
import { HistoryRangeError, type Target } from '../engine/history.js';
import type { QueryOptions, QueryResponse } from '../executor/result.js';
import { LIMITS } from '../config/limits.js';
import { type BudgetClient, type QueryBudget, executeQueryNow, queryBudget } from '../executor/index.js';
import { PqlParseError, parse } from '../pql/index.js';
import type { Query } from '../pql/ast.js';
import { runQuery, runQueryAsync } from './query/index.js';
import { isWriteCall } from './query/write-plan.js';
import { rewriteLegacyQuery } from './legacy/legacy-query.js';
import { hasLegacyCall } from '../pql/legacy.js';
import { type LegacyRelease, checkLegacyRelease } from './legacy/legacy-release.js';
import type { QueryWorkers } from './query-workers/pool.js';
import { workerReadNow } from './query-workers/offload.js';
import { QueryTexts } from './query-texts.js';
import { promised } from '../util/promised.js';

/** The bounds of read queries (--query-timeout, --max-result-rows); 0: none. */
export interface QueryBounds {
  queryTimeoutMs: number;
  maxResultRows: number;
  /** --max-result-bytes, --max-query-memory (answer-size.ts); absent or 0: none. */
  maxResultBytes?: number;
  maxQueryMemory?: number;
}

/** What one request asks of its bounds: a shorter `timeout`, and its client's signal. */
export interface QueryRequestBounds {
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Whether the client went away, read without making `signal` (see http ClientGone). */
  client?: BudgetClient;
  /** The request came with a read-only token: write calls are refused. */
  readOnly?: boolean;
}

/** A query's answer: its response, whether it used 0.x calls, its top-level call names. */
export interface QueryOutcome {
  response: QueryResponse;
  legacy: boolean;
  calls: readonly string[];
}

export class QueryService {
  /** Texts accepted before (query-texts.ts): a repeated query is not parsed again. */
  private readonly texts = new QueryTexts();

  constructor(
    private readonly engine: Engine,
    private readonly bounds: QueryBounds = { queryTimeoutMs: 0, maxResultRows: 0 },
    private readonly release: LegacyRelease = '',
    /** Worker threads for read queries over many shards; none: the request thread runs them. */
    private readonly workers?: QueryWorkers,
  ) {}

  /**
   * `legacy`: the query used 0.x calls, so its answer names row columns `bits`; `calls`: the
   * top-level call names (0.x answers Min/Max and Sum in different shapes).
   */
  execute(index: string, text: string, opts: QueryOptions, req: QueryRequestBounds = {}): Promise<QueryOutcome> {
    return promised(() => this.executeNow(index, text, opts, req));
  }

  /**
   * execute, but a read answered on this thread without slices (most small queries) of a
   * durable state comes back as the outcome itself and its errors are thrown; anything else
   * (writes, sliced or offloaded reads, a state not yet durable) as a promise. The HTTP lean
   * path answers it in the request's own turn: the promise hops of execute cost several µs of a
   * small query (issue 24).
   */
  executeNow(
    index: string,
    text: string,
    opts: QueryOptions,
    req: QueryRequestBounds = {},
  ): QueryOutcome | Promise<QueryOutcome> {
    const { budget, parsed, legacy, calls } = this.accept(text, req);
    // Naming only (labels, frames); the write or read below validates against the state again.
    // A current-API query skips it (no closure, nothing to rewrite).
    const query = legacy ? this.engine.peekApplied((h) => rewriteLegacyQuery(h, index, parsed)) : parsed;
    // After the legacy rewrite, writes are the current write calls (also under Options()).
    const writes = query.calls.some(isWriteCall);
    if (writes && req.readOnly === true)
      throw new DomainError('forbidden', 'forbidden: a read-only token cannot run write calls');
    if (writes)
      return this.engine
        .commit({
          // The limits object is made here, for writes only: a read would make it for nothing.
          decide: (h, sink) =>
            runQuery(
              h,
              sink,
              index,
              query,
              opts,
              { maxWritesPerRequest: LIMITS.maxWritesPerRequest },
              this.engine.clock,
            ),
        })
        .then((response) => ({ response, legacy, calls }));
    const response = this.engine.readNow((h) => {
      const bounded = this.readOptions(opts);
      return this.workers
        ? workerReadNow(this.workers, h, index, query, bounded, budget)
        : executeQueryNow(h, index, query, bounded, { budget });
    });
    return response instanceof Promise
      ? response.then((r) => ({ response: r, legacy, calls }))
      : { response, legacy, calls };
  }

  /**
   * A read-only query against the state as of `target` (atSeq/atTime): a past holder from the
   * LRU, never the live one. Writes and points outside the history answer 400.
   */
  async executeAt(
    index: string,
    text: string,
    opts: QueryOptions,
    target: Target,
    req: QueryRequestBounds = {},
  ): Promise<{ response: QueryResponse; legacy: boolean; calls: readonly string[] }> {
    const { budget, parsed, legacy, calls } = this.accept(text, req);
    let seq: number;
    try {
      seq = await this.engine.history.resolve(target);
    } catch (err) {
      if (err instanceof HistoryRangeError) throw badRequest(err.message);
      throw err;
    }
    const holder = await this.engine.history.stateAt(seq);
    const query = rewriteLegacyQuery(holder, index, parsed);
    if (query.calls.some(isWriteCall))
      throw badRequest('atSeq/atTime queries are read-only: a write cannot change the past');
    const response = await runQueryAsync(holder, index, query, this.readOptions(opts), { budget });
    return { response, legacy, calls };
  }

  /** The request's options with the server's bounds of a read. */
  private readOptions(opts: QueryOptions): QueryOptions {
    const b = this.bounds;
    // Spelled out, not spread: a spread of the request's options took several µs a query. Every
    // field of the request's QueryOptions is carried, as the spread did.
    return {
      shards: opts.shards,
      columnAttrs: opts.columnAttrs,
      excludeColumns: opts.excludeColumns,
      excludeRowAttrs: opts.excludeRowAttrs,
      metaOffset: opts.metaOffset,
      maxResultRows: b.maxResultRows,
      maxResultBytes: b.maxResultBytes,
      maxQueryMemory: b.maxQueryMemory,
    };
  }

  /**
   * What every query goes through before it touches a state, live or past: its deadline, the
   * size limit, parsing, and (0.x calls) the spellings of the --legacy-release.
   */
  private accept(
    text: string,
    req: QueryRequestBounds,
  ): { budget: QueryBudget; parsed: Query; legacy: boolean; calls: readonly string[] } {
    const budget = queryBudget(
      effectiveTimeout(this.bounds.queryTimeoutMs, req.timeoutMs),
      // The client's flag is enough and cheaper than an AbortSignal; work sent to the query
      // workers asks the flag for a signal then (http ClientGone makes it on demand).
      req.client ?? req.signal,
      this.engine.clock,
    );
    const known = this.texts.get(text);
    if (known !== undefined) return { budget, parsed: known.parsed, legacy: known.legacy, calls: known.calls };
    if (Buffer.byteLength(text) > LIMITS.maxQueryBytes)
      throw new DomainError('too_large', `query longer than ${LIMITS.maxQueryBytes} bytes`);
    const parsed = parseQuery(text);
    const legacy = hasLegacyCall(parsed);
    if (legacy) checkLegacyRelease(this.release, parsed);
    const accepted = this.texts.keep(text, { parsed, legacy, calls: parsed.calls.map((c) => c.name) });
    return { budget, parsed: accepted.parsed, legacy: accepted.legacy, calls: accepted.calls };
  }
}

/** A request's `timeout` can shorten the server's deadline, never lift it. */
function effectiveTimeout(server: number, requested: number | undefined): number {
  if (requested === undefined || requested <= 0) return server;
  return server > 0 ? Math.min(server, requested) : requested;
}

export function parseQuery(text: string): Query {
  try {
    return parse(text);
  } catch (err) {
    if (err instanceof PqlParseError) throw badRequest(`parsing: ${err.message}`);
    throw err;
  }
}
