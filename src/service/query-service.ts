// The query use case at the service boundary: PQL text → parse → (writes: engine.write, one
// durable event group; reads: engine.read/readAsync) → QueryResponse.
import { DomainError, badRequest } from '../domain/errors.js';
import type { Engine } from '../engine/engine.js';
import type { QueryOptions, QueryResponse } from '../executor/result.js';
import { LIMITS } from '../config/limits.js';
import { PqlParseError, parse } from '../pql/index.js';
import type { Query } from '../pql/ast.js';
import { runQuery, runQueryAsync } from './query/index.js';
import { isWriteCall } from './query/write-plan.js';
import { rewriteLegacyQuery } from './legacy/legacy-query.js';
import { hasLegacyCall } from '../pql/legacy.js';
import { type LegacyRelease, checkLegacyRelease } from './legacy/legacy-release.js';

export class QueryService {
  constructor(
    private readonly engine: Engine,
    private readonly release: LegacyRelease = '',
  ) {}

  /**
   * `legacy`: the query used 0.x calls, so its answer names row columns `bits`; `calls`: the
   * top-level call names (0.x answers Min/Max and Sum in different shapes).
   */
  async execute(index: string, text: string, opts: QueryOptions): Promise<{ response: QueryResponse; legacy: boolean; calls: string[] }> {
    if (Buffer.byteLength(text) > LIMITS.maxQueryBytes) throw new DomainError('too_large', `query longer than ${LIMITS.maxQueryBytes} bytes`);
    const parsed = parseQuery(text);
    const legacy = hasLegacyCall(parsed);
    if (legacy) checkLegacyRelease(this.release, parsed);
    const calls = parsed.calls.map((c) => c.name);
    const query = rewriteLegacyQuery(this.engine.holder, index, parsed);
    const limits = { maxWritesPerRequest: LIMITS.maxWritesPerRequest };
    // After the legacy rewrite, writes are the current write calls (also under Options()).
    const response = query.calls.some(isWriteCall)
      ? await this.engine.write((h, sink) => runQuery(h, sink, index, query, opts, limits))
      : await this.engine.readAsync((h) => runQueryAsync(h, index, query, opts, limits));
    return { response, legacy, calls };
  }
}

export function parseQuery(text: string): Query {
  try {
    return parse(text);
  } catch (err) {
    if (err instanceof PqlParseError) throw badRequest(`parsing: ${err.message}`);
    throw err;
  }
}
