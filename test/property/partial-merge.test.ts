// Cluster reads (executor/partial.ts, merge.ts): random data over several shards, the shards
// split at random into k groups (k nodes), every call computed per group, sent through the
// JSON wire form, merged and finalized — the response must equal one node's over all shards,
// errors (result bound) included.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DomainError } from '../../src/domain/errors.js';
import { SHARD_WIDTH } from '../../src/domain/shard.js';
import {
  QueryClock,
  compileReads,
  drainSync,
  executeQuery,
  queryContext,
  recalculateCaches,
} from '../../src/executor/index.js';
import { finalizeQuery, mergeAllPreps } from '../../src/executor/merge.js';
import { needsPrep, partialsWork, prepsWork } from '../../src/executor/partial.js';
import { decodePartial, decodePrep, encodePartial, encodePrep } from '../../src/executor/partial-wire.js';
import type { QueryOptions, QueryResponse } from '../../src/executor/result.js';
import { parse } from '../../src/pql/index.js';
import type { Holder } from '../../src/state/holder.js';
import { MemorySink } from '../helpers/memory-sink.js';
import { NOW, run } from '../unit/executor/harness.js';

const W = SHARD_WIDTH;
const SHARDS = 6;
const TIMES = ['2017-01-01T00:00', '2017-03-05T10:00', '2018-07-08T09:00'];

interface World {
  keys: boolean;
  writes: string[];
  queries: string[];
  assign: number[];
  k: number;
  opts: Partial<QueryOptions>;
}

function colArb(keys: boolean): fc.Arbitrary<string> {
  if (keys) return fc.integer({ min: 0, max: 9 }).map((i) => `"c${i}"`);
  return fc
    .record({ s: fc.integer({ min: 0, max: SHARDS - 1 }), o: fc.constantFrom(0, 1, 2, W - 1) })
    .map(({ s, o }) => String(s * W + o));
}

const rowArb = fc.integer({ min: 0, max: 7 });
const keyRowArb = fc.integer({ min: 0, max: 4 }).map((i) => `"r${i}"`);

function worldArb(): fc.Arbitrary<World> {
  return fc.integer({ min: 0, max: 3 }).chain((kind) => {
    const keys = kind === 0;
    const col = colArb(keys);
    const write = fc.oneof(
      { weight: 8, arbitrary: fc.tuple(col, rowArb).map(([c, r]) => `Set(${c}, s1=${r})`) },
      { weight: 6, arbitrary: fc.tuple(col, keyRowArb).map(([c, r]) => `Set(${c}, s2=${r})`) },
      {
        weight: 3,
        arbitrary: fc.tuple(col, rowArb, fc.constantFrom(...TIMES)).map(([c, r, t]) => `Set(${c}, t=${r}, ${t})`),
      },
      { weight: 4, arbitrary: fc.tuple(col, fc.integer({ min: -20, max: 20 })).map(([c, v]) => `Set(${c}, n=${v})`) },
      { weight: 2, arbitrary: fc.tuple(col, rowArb).map(([c, r]) => `Clear(${c}, s1=${r})`) },
      {
        weight: 1,
        arbitrary: fc
          .tuple(rowArb, fc.constantFrom('"red"', '"blue"'))
          .map(([r, v]) => `SetRowAttrs(s1, ${r}, color=${v}, w=${r})`),
      },
      { weight: 1, arbitrary: col.map((c) => `SetColumnAttrs(${c}, seen=true)`) },
    );
    const leaf = fc.oneof(
      rowArb.map((r) => `Row(s1=${r})`),
      keyRowArb.map((r) => `Row(s2=${r})`),
      fc
        .tuple(rowArb, fc.constantFrom(...TIMES), fc.constantFrom(...TIMES))
        .map(([r, a, b]) => `Row(t=${r}, from=${a}, to=${b})`),
      fc
        .tuple(fc.constantFrom('<', '>=', '=='), fc.integer({ min: -10, max: 10 }))
        .map(([op, v]) => `Row(n ${op} ${v})`),
    );
    const expr = fc.letrec<{ e: string }>((tie) => ({
      e: fc.oneof(
        { depthSize: 'small' },
        { weight: 4, arbitrary: leaf },
        {
          weight: 2,
          arbitrary: fc
            .tuple(
              fc.constantFrom('Union', 'Intersect', 'Difference', 'Xor'),
              fc.array(tie('e'), { minLength: 1, maxLength: 3 }),
            )
            .map(([op, kids]) => `${op}(${kids.join(', ')})`),
        },
        { weight: 1, arbitrary: tie('e').map((e) => `Not(${e})`) },
      ),
    })).e;
    const filter = fc.option(expr, { nil: undefined });
    const withFilter = (f: string | undefined): string => (f === undefined ? '' : `${f}, `);
    const shardList = fc.uniqueArray(fc.integer({ min: 0, max: SHARDS + 1 }), { minLength: 1, maxLength: 4 });
    const call: fc.Arbitrary<string> = fc.oneof(
      { weight: 3, arbitrary: expr.map((e) => `Count(${e})`) },
      { weight: 3, arbitrary: expr },
      { weight: 2, arbitrary: rowArb.map((r) => `Row(s1=${r})`) },
      {
        weight: 3,
        arbitrary: fc
          .tuple(fc.constantFrom('Sum', 'Min', 'Max'), filter)
          .map(([op, f]) => `${op}(${withFilter(f)}field=n)`),
      },
      {
        weight: 2,
        arbitrary: fc
          .tuple(fc.constantFrom('MinRow', 'MaxRow'), fc.constantFrom('s1', 's2'), filter)
          .map(([op, fld, f]) => `${op}(${withFilter(f)}field=${fld})`),
      },
      {
        weight: 4,
        arbitrary: fc
          .record({
            fld: fc.constantFrom('s1', 's2'),
            src: filter,
            n: fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined }),
            ids: fc.option(fc.uniqueArray(rowArb, { maxLength: 3 }), { nil: undefined }),
            threshold: fc.option(fc.constantFrom(1, 2, 3), { nil: undefined }),
            tanimoto: fc.option(fc.constantFrom(10, 30, 50, 70, 90), { nil: undefined }),
            attr: fc.boolean(),
          })
          .map((x) => {
            const args: string[] = [x.fld];
            if (x.src !== undefined) args.push(x.src);
            if (x.n !== undefined) args.push(`n=${x.n}`);
            if (x.ids !== undefined && x.fld === 's1') args.push(`ids=[${x.ids.join(', ')}]`);
            if (x.threshold !== undefined) args.push(`threshold=${x.threshold}`);
            if (x.tanimoto !== undefined) args.push(`tanimotoThreshold=${x.tanimoto}`);
            if (x.attr && x.fld === 's1') args.push('attrName=color, attrValues=["red"]');
            return `TopN(${args.join(', ')})`;
          }),
      },
      {
        weight: 3,
        arbitrary: fc
          .record({
            fld: fc.constantFrom('s1', 's2', 't'),
            previous: fc.option(rowArb, { nil: undefined }),
            limit: fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined }),
            column: fc.option(col, { nil: undefined, freq: 3 }),
          })
          .map((x) => rowsCall(x.fld, x.previous, x.limit, x.column)),
      },
      {
        weight: 4,
        arbitrary: fc
          .record({
            kids: fc.array(
              fc.record({
                fld: fc.constantFrom('s1', 's2'),
                limit: fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined }),
                column: fc.option(col, { nil: undefined, freq: 4 }),
              }),
              { minLength: 1, maxLength: 3 },
            ),
            f: filter,
            limit: fc.option(fc.integer({ min: 0, max: 5 }), { nil: undefined }),
            offset: fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined }),
          })
          .map((x) => {
            const args = x.kids.map((k) => rowsCall(k.fld, undefined, k.limit, k.column));
            if (x.f !== undefined) args.push(`filter=${x.f}`);
            if (x.limit !== undefined) args.push(`limit=${x.limit}`);
            if (x.offset !== undefined) args.push(`offset=${x.offset}`);
            return `GroupBy(${args.join(', ')})`;
          }),
      },
      {
        weight: 3,
        arbitrary: fc
          .record({
            inner: fc.oneof(
              expr,
              expr.map((e) => `Count(${e})`),
              rowArb.map((r) => `TopN(s1, n=${r})`),
            ),
            shards: fc.option(shardList, { nil: undefined }),
            columnAttrs: fc.boolean(),
            excludeColumns: fc.boolean(),
          })
          .map((x) => {
            const args: string[] = [x.inner];
            if (x.shards !== undefined) args.push(`shards=[${x.shards.join(', ')}]`);
            if (x.columnAttrs) args.push('columnAttrs=true');
            if (x.excludeColumns) args.push('excludeColumns=true');
            return `Options(${args.join(', ')})`;
          }),
      },
    );
    const k = fc.integer({ min: 1, max: 4 });
    return fc.record({
      keys: fc.constant(keys),
      writes: fc.array(write, { minLength: 40, maxLength: 150 }),
      queries: fc.array(
        fc.array(call, { minLength: 1, maxLength: 3 }).map((cs) => cs.join(' ')),
        { minLength: 3, maxLength: 8 },
      ),
      k,
      assign: fc.array(fc.integer({ min: 0, max: 3 }), { minLength: SHARDS + 2, maxLength: SHARDS + 2 }),
      opts: fc.record({
        columnAttrs: fc.boolean(),
        excludeRowAttrs: fc.boolean(),
        maxResultRows: fc.constantFrom(undefined, 0, 2, 5),
        shards: fc.option(shardList, { nil: undefined }),
      }),
    });
  });
}

function rowsCall(fld: string, previous?: number, limit?: number, column?: string): string {
  const args = [fld];
  if (previous !== undefined) args.push(fld === 's2' ? `previous="r${previous}"` : `previous=${previous}`);
  if (limit !== undefined) args.push(`limit=${limit}`);
  if (column !== undefined) args.push(`column=${column}`);
  if (fld === 't') args.push(`from=${TIMES[0]}, to=${TIMES[2]}`);
  return `Rows(${args.join(', ')})`;
}

function setup(w: World): MemorySink {
  const sink = new MemorySink().createIndex('i', { keys: w.keys, trackExistence: true });
  sink.createField('i', 's1', 'set', { cacheSize: 3 });
  sink.createField('i', 's2', 'set', { keys: true });
  sink.createField('i', 't', 'time', { timeQuantum: 'YMD' });
  sink.createField('i', 'n', 'int', { min: -20n, max: 20n });
  for (const q of w.writes) run(sink, 'i', q);
  recalculateCaches(sink.holder);
  return sink;
}

type Outcome = { ok: QueryResponse } | { error: string };

function outcome(fn: () => QueryResponse): Outcome {
  try {
    return { ok: fn() };
  } catch (e) {
    if (e instanceof DomainError) return { error: e.message };
    throw e;
  }
}

/** What the coordinator does, with each group of shards standing for one node. */
function fannedOut(holder: Holder, pql: string, opts: QueryOptions, nodes: ((s: number) => boolean)[]): QueryResponse {
  const clock = new QueryClock(NOW);
  const index = holder.index('i');
  if (index === undefined) throw new Error('no index');
  const reads = compileReads(index, parse(pql).calls, opts, clock);
  // Every node compiles the query itself from the text, as the partial route does.
  const nodeCtx = (scope: (s: number) => boolean) => {
    const r = compileReads(index, parse(pql).calls, opts, new QueryClock(NOW));
    return { plans: r.plans, ctx: queryContext(index, opts, scope) };
  };
  const wire = <T>(v: T): unknown => JSON.parse(JSON.stringify(v));
  let preps = reads.plans.map(() => ({ kind: 'none' }) as const);
  if (reads.plans.some(needsPrep)) {
    const all = nodes.map((scope) => {
      const { plans, ctx } = nodeCtx(scope);
      return (wire(drainSync(prepsWork(ctx, plans)).map(encodePrep)) as unknown[]).map(decodePrep);
    });
    const merged = mergeAllPreps(reads.plans, all);
    preps = wire(merged.map(encodePrep)) as never;
    preps = (preps as unknown[]).map(decodePrep) as never;
  }
  const parts = nodes.map((scope) => {
    const { plans, ctx } = nodeCtx(scope);
    return (wire(drainSync(partialsWork(ctx, plans, preps)).map(encodePartial)) as unknown[]).map(decodePartial);
  });
  return finalizeQuery(index, reads.plans, parts, opts);
}

function check(w: World): void {
  const sink = setup(w);
  const nodeOf = (s: number): number => (s < w.assign.length ? w.assign[s] : s) % w.k;
  const nodes = Array.from({ length: w.k }, (_, n) => (s: number) => nodeOf(s) === n);
  const opts: QueryOptions = {
    columnAttrs: w.opts.columnAttrs ?? false,
    excludeColumns: false,
    excludeRowAttrs: w.opts.excludeRowAttrs ?? false,
    maxResultRows: w.opts.maxResultRows,
    shards: w.opts.shards,
  };
  for (const pql of w.queries) {
    const want = outcome(() => executeQuery(sink.holder, 'i', parse(pql), opts, NOW));
    const got = outcome(() => fannedOut(sink.holder, pql, opts, nodes));
    expect({ pql, got }).toEqual({ pql, got: want });
  }
}

describe('partial results merged equal one node', () => {
  it('over random data, shard splits and query shapes', () => {
    fc.assert(
      fc.property(worldArb(), (w) => check(w)),
      { numRuns: Number(process.env.PARTIAL_RUNS ?? 400) },
    );
  });
});
