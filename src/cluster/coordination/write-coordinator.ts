// POST /index/{i}/query in cluster mode (the QueryService the routes call). The query is
// accepted and validated here exactly as one node does (every node has the whole schema), so a
// bad request is refused with one node's error before anything is sent. Then the calls run in
// order, in runs: a run of read calls goes to the read fan-out; a run of write calls becomes
//   1. one `keys` command on the meta topic for the keys it names that have no ID yet (applied
//      here before going on, so each keyed column's shard is known),
//   2. one `attrs` command on the meta topic for its SetRowAttrs/SetColumnAttrs,
//   3. one `pql` command per log partition it touches: a Set/Clear goes to its column's
//      partition; ClearRow and Store go to every partition (each holder changes only its own
//      partition's shards) — all in one Kafka transaction when there is more than one,
// and its per-call results come from holders. A write acknowledged here was read committed by
// Kafka before the next read run starts, so that run (waiting on end offsets read after it) sees it.
import { DomainError, badRequest } from '../../domain/errors.js';
import { shardOf } from '../../domain/shard.js';
import type { Engine } from '../../engine/engine.js';
import { lookupIndex, resolveCol } from '../../executor/index.js';
import type { QueryOptions, QueryResponse, QueryResult } from '../../executor/result.js';
import { LIMITS } from '../../config/limits.js';
import { hasLegacyCall } from '../../pql/legacy.js';
import type { Call, Query } from '../../pql/ast.js';
import { type LegacyRelease, checkLegacyRelease } from '../../service/legacy/legacy-release.js';
import { rewriteLegacyQuery } from '../../service/legacy/legacy-query.js';
import { type QueryRequestBounds, parseQuery } from '../../service/query-service.js';
import { type Step, type WritePlan, compileQuery, isWriteCall, writeKeys } from '../../service/query/index.js';
import type { Target } from '../../engine/history.js';
import type { LogCommand } from '../commands/command.js';
import type { ClusterWrites } from './cluster-writes.js';
import type { ReadAnswer } from '../reads/query-fanout.js';
import { mergeColumnAttrs, missingKeys } from './write-keys.js';

/** The read fan-out (c-query's QueryFanout.run): read calls only, answered cluster-wide. */
export type ClusterReads = (
  index: string,
  query: Query,
  opts: QueryOptions,
  req: QueryRequestBounds,
  /** atTime (ms): the cluster's state as of then. */
  at?: number,
) => Promise<ReadAnswer>;

/** `stale`: the read was answered without the broker (--cluster-stale-reads), and why. */
type Answer = { response: QueryResponse; legacy: boolean; calls: string[]; stale?: string };

function readAnswer(r: ReadAnswer, legacy: boolean, calls: string[]): Answer {
  const { stale, ...response } = r;
  return stale === undefined ? { response, legacy, calls } : { response, legacy, calls, stale };
}

export class ClusterQueryService {
  constructor(
    private readonly engine: Engine,
    private readonly writes: ClusterWrites,
    private readonly reads: ClusterReads,
    private readonly release: LegacyRelease = '',
  ) {}

  async execute(index: string, text: string, opts: QueryOptions, req: QueryRequestBounds = {}): Promise<Answer> {
    // A write (or a 0.x query, rewritten with the frames' metadata) is validated against this
    // node's schema: first every meta change acknowledged before it (read-your-writes). A read
    // waits for the same in the fan-out, after one ListOffsets for both topics.
    const parsed = parseBounded(text);
    if (hasLegacyCall(parsed) || parsed.calls.some(isWriteCall)) await this.writes.caughtUpMeta();
    const { legacy, calls, query } = this.accept(index, parsed);
    const limits = { maxWritesPerRequest: LIMITS.maxWritesPerRequest };
    const steps = await this.engine.read((h) => compileQuery(lookupIndex(h, index), query, opts, limits));
    if (steps === undefined) return readAnswer(await this.reads(index, query, opts, req), legacy, calls);
    if (req.readOnly === true)
      throw new DomainError('forbidden', 'forbidden: a read-only token cannot run write calls');
    const results: QueryResult[] = [];
    let columnAttrs: QueryResponse['columnAttrs'];
    for (const run of runs(steps)) {
      if (run.kind === 'read') {
        const r = await this.reads(index, { calls: run.at.map((i) => query.calls[i]) }, opts, req);
        results.push(...r.results);
        columnAttrs = mergeColumnAttrs(columnAttrs, r.columnAttrs);
      } else {
        results.push(...(await this.writeRun(index, text, parsed.calls, run, steps, opts)));
      }
    }
    return { response: columnAttrs === undefined ? { results } : { results, columnAttrs }, legacy, calls };
  }

  /**
   * atTime: a read-only query against the cluster's state as of a time — each partition as of its
   * last command stamped at or before it — at every holder (docs/CLUSTER.md, "History"). atSeq
   * names a sequence of one node's log: a cluster has none, so it is refused.
   */
  async executeAt(
    index: string,
    text: string,
    opts: QueryOptions,
    target: Target,
    req: QueryRequestBounds = {},
  ): Promise<Answer> {
    if ('seq' in target)
      throw badRequest(
        "atSeq names a sequence of one node's log and a cluster has no single sequence: read the past with atTime in cluster mode",
      );
    const { legacy, calls, query } = this.accept(index, parseBounded(text));
    if (query.calls.some(isWriteCall))
      throw badRequest('atSeq/atTime queries are read-only: a write cannot change the past');
    return readAnswer(await this.reads(index, query, opts, req, target.timeMs), legacy, calls);
  }

  /** What every parsed query goes through: 0.x spellings and names. */
  private accept(index: string, parsed: Query): { legacy: boolean; calls: string[]; query: Query } {
    const legacy = hasLegacyCall(parsed);
    if (legacy) checkLegacyRelease(this.release, parsed);
    const query = legacy ? this.engine.peekApplied((h) => rewriteLegacyQuery(h, index, parsed)) : parsed;
    return { legacy, calls: parsed.calls.map((c) => c.name), query };
  }

  private async writeRun(
    index: string,
    text: string,
    source: readonly Call[],
    run: Run,
    steps: readonly Step[],
    opts: QueryOptions,
  ): Promise<QueryResult[]> {
    const plans = run.at.map((i) => (steps[i] as Extract<Step, { kind: 'write' }>).plan);
    const keys = this.engine.peekApplied((h) => missingKeys(lookupIndex(h, index), writeKeys(plans)));
    if (keys !== undefined) await this.writes.meta({ kind: 'keys', index, ...keys });
    const out: QueryResult[] = new Array<QueryResult>(run.at.length);
    const attrs: number[] = [];
    const byPartition = new Map<number, number[]>();
    const P = this.writes.view.partitions;
    run.at.forEach((callIndex, j) => {
      const plan = plans[j];
      const target = this.engine.peekApplied((h) => partitionsOf(lookupIndex(h, index), plan, opts, P, this.writes));
      if (target === 'meta') {
        attrs.push(j);
        out[j] = { type: 'null' };
        return;
      }
      out[j] = { type: 'changed', changed: false };
      for (const p of target) {
        let list = byPartition.get(p);
        if (list === undefined) byPartition.set(p, (list = []));
        list.push(j);
      }
      void callIndex;
    });
    const textOf = (j: number): string => callText(text, source, run.at[j]);
    if (attrs.length > 0) await this.writes.meta({ kind: 'attrs', index, pql: attrs.map(textOf).join('\n') });
    if (byPartition.size === 0) return out;
    const metaOffset = this.writes.metaOffset();
    const commands: LogCommand[] = [...byPartition].map(([partition, js]) => ({
      kind: 'pql',
      index,
      pql: js.map(textOf).join('\n'),
      ...(opts.shards !== undefined && opts.shards.length > 0 ? { shards: opts.shards } : {}),
      partition,
      metaOffset,
      ...(this.release !== '' ? { release: this.release } : {}),
    }));
    const answers = await this.writes.logResults(commands);
    [...byPartition.values()].forEach((js, k) => {
      const res = answers[k] as QueryResult[];
      js.forEach((j, n) => {
        const r = res[n];
        const cur = out[j];
        if (r?.type === 'changed' && cur.type === 'changed')
          out[j] = { type: 'changed', changed: cur.changed || r.changed };
      });
    });
    return out;
  }
}

type Run = { kind: 'read' | 'write'; at: number[] };

/** The size limit, then the parse. */
function parseBounded(text: string): Query {
  if (Buffer.byteLength(text) > LIMITS.maxQueryBytes)
    throw new DomainError('too_large', `query longer than ${LIMITS.maxQueryBytes} bytes`);
  return parseQuery(text);
}

/** Consecutive calls of one kind, in order. */
function runs(steps: readonly Step[]): Run[] {
  const out: Run[] = [];
  steps.forEach((s, i) => {
    const last = out[out.length - 1];
    if (last !== undefined && last.kind === s.kind) last.at.push(i);
    else out.push({ kind: s.kind, at: [i] });
  });
  return out;
}

/** A top-level call's own source text: from its name to the next call's (or the end). */
function callText(text: string, calls: readonly Call[], i: number): string {
  const end = i + 1 < calls.length ? calls[i + 1].pos : text.length;
  return text.slice(calls[i].pos, end).trim();
}

/**
 * Where a write goes: attributes to the meta topic; a one-column write to its column's partition
 * (none when its key names nothing yet: a Clear of an unknown key changes nothing); ClearRow and
 * Store to the partitions of the shards they may touch — every partition unless shards are named.
 */
function partitionsOf(
  index: ReturnType<typeof lookupIndex>,
  plan: WritePlan,
  opts: QueryOptions,
  P: number,
  writes: ClusterWrites,
): 'meta' | number[] {
  const partitionOf = (s: number): number => writes.view.partitionOf(index.name, s);
  switch (plan.kind) {
    case 'rowAttrs':
    case 'columnAttrs':
      return 'meta';
    case 'set':
    case 'setValue':
    case 'clear': {
      const col = resolveCol(index, plan.col);
      return col === undefined ? [] : [partitionOf(shardOf(col))];
    }
    case 'clearRow':
    case 'store': {
      const named = opts.shards !== undefined && opts.shards.length > 0 ? opts.shards : undefined;
      if (named !== undefined) return [...new Set(named.map(partitionOf))];
      return Array.from({ length: P }, (_, p) => p);
    }
    case 'options': {
      const inner = partitionsOf(index, plan.child, opts, P, writes);
      if (inner === 'meta' || plan.settings.shards === undefined) return inner;
      if (plan.child.kind === 'clearRow' || plan.child.kind === 'store')
        return [...new Set(plan.settings.shards.map(partitionOf))];
      return inner;
    }
  }
}
