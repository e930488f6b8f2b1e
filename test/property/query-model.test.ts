// Differential test: random schemas, random write requests and random nested queries run
// through the real parser + runQuery + executor, and through a naive model (plain sets and
// maps). Every result must match exactly; so must an async run and a replay of the logged events
// into a fresh holder.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SHARD_WIDTH } from '../../src/domain/shard.js';
import { INT64_MAX, INT64_MIN } from '../../src/domain/types.js';
import { parseTimestamp } from '../../src/domain/time-quantum.js';
import { executeQueryAsync, recalculateCaches } from '../../src/executor/index.js';
import { DomainError } from '../../src/domain/errors.js';
import { parse } from '../../src/pql/index.js';
import { apply } from '../../src/state/apply.js';
import { Holder } from '../../src/state/holder.js';
import { MemorySink } from '../helpers/memory-sink.js';
import { NOW, defaultOpts, run, toJson } from '../unit/executor/harness.js';
import { type Query, type Write, expected, renderQuery, renderWrite } from '../unit/executor/oracle-queries.js';
import { type Expr, type FieldSpec, type Name, Oracle, type Schema } from '../unit/executor/query-oracle.js';

const W = SHARD_WIDTH;
const COLS = [0, 1, 2, 5, W - 1, W, W + 3, 2 * W + 1];
const TIMES = [
  '2016-12-31T23:00',
  '2017-01-01T00:00',
  '2017-01-02T03:04',
  '2017-02-28T10:00',
  '2017-12-31T23:59',
  '2018-05-06T07:08',
  '2019-03-01T00:00',
].map((t) => parseTimestamp(t) as number);
const QUANTA = ['Y', 'YM', 'YMD', 'YMDH', 'M', 'MD', 'MDH', 'D', 'DH', 'H'];

const boundsArb = fc.constantFrom<[bigint, bigint]>(
  [INT64_MIN, INT64_MAX],
  [-100n, 100n],
  [10n, 50n],
  [-50n, -10n],
  [0n, 1000n],
);

const schemaArb: fc.Arbitrary<Schema> = fc
  .record({
    keys: fc.boolean(),
    exists: fc.boolean(),
    s1keys: fc.boolean(),
    s1cache: fc.constantFrom<'ranked' | 'lru'>('ranked', 'lru'),
    s2type: fc.constantFrom<'set' | 'mutex'>('set', 'mutex'),
    s2keys: fc.boolean(),
    quantum: fc.constantFrom(...QUANTA),
    noStd: fc.boolean(),
    bounds: boundsArb,
  })
  .map((r) => {
    const f = (name: string, type: FieldSpec['type'], over: Partial<FieldSpec> = {}): FieldSpec => ({
      name,
      type,
      keys: false,
      quantum: '',
      noStd: false,
      min: 0n,
      max: 0n,
      cacheType: 'ranked',
      ...over,
    });
    return {
      keys: r.keys,
      exists: r.exists,
      fields: [
        f('s1', 'set', { keys: r.s1keys, cacheType: r.s1cache }),
        f('s2', r.s2type, { keys: r.s2keys }),
        f('b', 'bool'),
        f('t', 'time', { quantum: r.quantum, noStd: r.noStd }),
        f('n', 'int', { min: r.bounds[0], max: r.bounds[1] }),
      ],
    };
  });

function arbs(schema: Schema): { writes: fc.Arbitrary<Write[][]>; queries: fc.Arbitrary<Query[]> } {
  const col: fc.Arbitrary<Name> = schema.keys
    ? fc.constantFrom('c0', 'c1', 'c2', 'c3', 'c4', 'c5')
    : fc.constantFrom(...COLS);
  const rowFor = (f: FieldSpec): fc.Arbitrary<Name> =>
    f.type === 'bool'
      ? fc.boolean()
      : f.keys
        ? fc.constantFrom('r0', 'r1', 'r2', 'r3')
        : fc.integer({ min: 0, max: 3 });
  const [s1, s2, b, t, n] = schema.fields;
  const outside = [n.min - 1n, n.max + 1n].filter((v) => v >= INT64_MIN && v <= INT64_MAX);
  const value = fc.oneof(
    {
      weight: 6,
      arbitrary: fc
        .oneof(
          fc.bigInt({ min: 0n, max: 40n }).map((d) => n.min + d),
          fc.bigInt({ min: 0n, max: 40n }).map((d) => n.max - d),
          fc.bigInt({ min: -30n, max: 30n }),
        )
        .map((v) => (v < n.min ? n.min : v > n.max ? n.max : v)),
    },
    { weight: 3, arbitrary: fc.constantFrom(n.min, n.max, n.min < 0n && n.max > 0n ? 0n : n.min) },
    ...(outside.length > 0 ? [{ weight: 1, arbitrary: fc.constantFrom(...outside) }] : []),
  );
  const time = fc.option(fc.constantFrom(...TIMES), { nil: undefined });
  const setField = fc.constantFrom(s1, s2, b, t);
  const write: fc.Arbitrary<Write> = fc.oneof(
    {
      weight: 8,
      arbitrary: setField.chain((f) =>
        fc.record({
          k: fc.constant('set' as const),
          f: fc.constant(f.name),
          col,
          row: rowFor(f),
          ts: f.type === 'time' ? time : fc.constant(undefined),
        }),
      ),
    },
    { weight: 3, arbitrary: fc.record({ k: fc.constant('setValue' as const), f: fc.constant('n'), col, v: value }) },
    {
      weight: 2,
      arbitrary: setField.chain((f) =>
        fc.record({ k: fc.constant('clear' as const), f: fc.constant(f.name), col, row: rowFor(f) }),
      ),
    },
    {
      weight: 1,
      arbitrary: setField.chain((f) =>
        fc.record({ k: fc.constant('clearRow' as const), f: fc.constant(f.name), row: rowFor(f) }),
      ),
    },
  );

  const cmpValue = fc.oneof(value, fc.bigInt({ min: -3n, max: 3n }), fc.constantFrom(INT64_MIN, INT64_MAX));
  const leaf: fc.Arbitrary<Expr> = fc.oneof(
    {
      weight: 4,
      arbitrary: fc.constantFrom(s1, s2, b, t).chain((f) => rowFor(f).map((r): Expr => ({ k: 'row', f: f.name, r }))),
    },
    {
      weight: 2,
      arbitrary: fc.record({ r: rowFor(t), from: time, to: time }).map((x): Expr => ({ k: 'time', f: 't', ...x })),
    },
    {
      weight: 3,
      arbitrary: fc
        .record({ op: fc.constantFrom('==', '!=', '<', '<=', '>', '>=' as const), v: cmpValue })
        .map((x): Expr => ({ k: 'cmp', f: 'n', ...x })),
    },
    { weight: 1, arbitrary: fc.tuple(cmpValue, cmpValue).map(([lo, hi]): Expr => ({ k: 'between', f: 'n', lo, hi })) },
    { weight: 1, arbitrary: fc.constant<Expr>({ k: 'notNull', f: 'n' }) },
  );
  const expr = fc.letrec<{ e: Expr }>((tie) => ({
    e: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      { weight: 5, arbitrary: leaf },
      {
        weight: 2,
        arbitrary: fc
          .record({
            op: fc.constantFrom('Union', 'Intersect', 'Difference', 'Xor' as const),
            kids: fc.array(tie('e'), { minLength: 1, maxLength: 3 }),
          })
          .map((x): Expr => ({ k: 'nary', ...x })),
      },
      ...(schema.exists ? [{ weight: 1, arbitrary: tie('e').map((kid): Expr => ({ k: 'not', kid })) }] : []),
      {
        weight: 1,
        arbitrary: fc
          .record({ kid: tie('e'), n: fc.constantFrom(1, 3, W - 1, W + 2) })
          .map((x): Expr => ({ k: 'shift', ...x })),
      },
    ),
  })).e;
  const filter = fc.option(expr, { nil: undefined });
  const rowsField = fc.constantFrom(s1, s2, b, ...(t.noStd ? [] : [t]));
  const query: fc.Arbitrary<Query> = fc.oneof(
    { weight: 5, arbitrary: expr.map((e): Query => ({ k: 'bitmap', e })) },
    { weight: 3, arbitrary: expr.map((e): Query => ({ k: 'count', e })) },
    {
      weight: 2,
      arbitrary: fc
        .record({ op: fc.constantFrom('Sum', 'Min', 'Max' as const), e: filter })
        .map((x): Query => ({ k: 'valCount', ...x })),
    },
    {
      weight: 2,
      arbitrary: fc
        .record({
          f: fc.constantFrom(s1.name, s2.name),
          e: filter,
          n: fc.integer({ min: 0, max: 3 }),
          threshold: fc.constantFrom(0, 0, 2),
        })
        .map((x): Query => ({ k: 'topN', ...x })),
    },
    {
      weight: 2,
      arbitrary: rowsField.chain((f) =>
        fc
          .record({
            f: fc.constant(f.name),
            previous: fc.option(rowFor(f), { nil: undefined }),
            limit: fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined }),
            column: fc.option(col, { nil: undefined }),
          })
          .map((x): Query => ({ k: 'rows', ...x })),
      ),
    },
    {
      weight: 2,
      arbitrary: fc
        .record({
          fs: fc.array(
            rowsField.map((f) => f.name),
            { minLength: 1, maxLength: 3 },
          ),
          e: filter,
          limit: fc.option(fc.integer({ min: 0, max: 4 }), { nil: undefined }),
          offset: fc.option(fc.integer({ min: 0, max: 2 }), { nil: undefined }),
        })
        .map((x): Query => ({ k: 'groupBy', ...x })),
    },
    {
      weight: 1,
      arbitrary: fc
        .record({
          op: fc.constantFrom('MinRow', 'MaxRow' as const),
          f: fc.constantFrom(s1.name, s2.name, b.name),
          e: filter,
        })
        .map((x): Query => ({ k: 'minMaxRow', ...x })),
    },
    {
      weight: 1,
      arbitrary: fc
        .record({ target: rowFor(s1), e: expr.filter((e) => !hasShift(e)) })
        .map((x): Query => ({ k: 'store', ...x })),
    },
  );
  return {
    writes: fc.array(fc.array(write, { minLength: 1, maxLength: 4 }), { minLength: 3, maxLength: 14 }),
    queries: fc.array(query, { minLength: 4, maxLength: 14 }),
  };
}

/** Store runs over the index's shards: a Shift could carry columns out of them. */
function hasShift(e: Expr): boolean {
  if (e.k === 'shift') return true;
  if (e.k === 'nary') return e.kids.some(hasShift);
  return e.k === 'not' && hasShift(e.kid);
}

function setup(schema: Schema): { sink: MemorySink; model: Oracle } {
  const sink = new MemorySink().createIndex('i', { keys: schema.keys, trackExistence: schema.exists });
  for (const f of schema.fields) {
    sink.createField('i', f.name, f.type, {
      keys: f.keys,
      ...(f.type === 'time' ? { timeQuantum: f.quantum, noStandardView: f.noStd } : {}),
      ...(f.type === 'int' ? { min: f.min, max: f.max } : {}),
      ...(f.type === 'set' || f.type === 'mutex' ? { cacheType: f.cacheType } : {}),
    });
  }
  return { sink, model: new Oracle(schema, NOW) };
}

/** Applies one write request to both sides; an invalid one must change neither. */
function applyWrites(sink: MemorySink, model: Oracle, batch: Write[]): void {
  const pql = batch.map((w) => renderWrite(model.schema, w)).join(' ');
  const invalid = batch.some((w) => w.k === 'setValue' && (w.v < model.field('n').min || w.v > model.field('n').max));
  if (invalid) {
    const mark = sink.events.length;
    expect(() => run(sink, 'i', pql)).toThrow(DomainError);
    expect(sink.events.length).toBe(mark);
    return;
  }
  const want = batch.map((w) => {
    switch (w.k) {
      case 'set':
        return model.set(w.f, model.col(w.col, true) as number, model.row(w.f, w.row, true) as number, w.ts);
      case 'setValue':
        return model.setValue(w.f, model.col(w.col, true) as number, w.v);
      case 'clear':
        return model.clear(w.f, model.col(w.col, false), model.row(w.f, w.row, false));
      case 'clearRow':
        return model.clearRow(w.f, model.row(w.f, w.row, false));
    }
  });
  expect({ pql, got: run(sink, 'i', pql).results.map(toJson) }).toEqual({ pql, got: want });
}

describe('query model (differential)', () => {
  // 1,000 random cases are CPU work alone: 65–104 s beside other engineers' test runs on 2 cores
  // (load 30), so the bound is generous: a loaded machine makes it slower, never wrong.
  it('executor and naive model agree on random schemas, writes and queries', { timeout: 400_000 }, () => {
    fc.assert(
      fc.property(
        schemaArb.chain((schema) => {
          const a = arbs(schema);
          return fc.record({ schema: fc.constant(schema), writes: a.writes, queries: a.queries });
        }),
        ({ schema, writes, queries }) => {
          const { sink, model } = setup(schema);
          for (const batch of writes) applyWrites(sink, model, batch);
          // Replaying the log into a fresh holder must give the same answers: events are
          // self-contained (no live fragment rows inside them).
          const replay = new Holder();
          let replayed = 0;
          for (const q of queries) {
            recalculateCaches(sink.holder);
            const pql = renderQuery(schema, q);
            const want = expected(model, q);
            expect({ pql, got: run(sink, 'i', pql).results.map(toJson)[0] }).toEqual({ pql, got: want });
            if (q.k === 'store') continue;
            for (; replayed < sink.events.length; replayed++) apply(replay, sink.events[replayed]);
            recalculateCaches(replay);
            const again = run(new MemorySink(replay), 'i', pql).results.map(toJson)[0];
            expect({ pql, replay: again }).toEqual({ pql, replay: want });
          }
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('the async executor agrees with the model too', async () => {
    await fc.assert(
      fc.asyncProperty(
        schemaArb.chain((schema) => {
          const a = arbs(schema);
          return fc.record({
            schema: fc.constant(schema),
            writes: a.writes,
            queries: a.queries.map((qs) => qs.filter((q) => q.k !== 'store')),
          });
        }),
        async ({ schema, writes, queries }) => {
          const { sink, model } = setup(schema);
          for (const batch of writes) applyWrites(sink, model, batch);
          recalculateCaches(sink.holder);
          const pql = queries.map((q) => renderQuery(schema, q)).join(' ');
          const r = await executeQueryAsync(sink.holder, 'i', parse(pql), defaultOpts, { now: NOW, sliceMs: 0 });
          expect({ pql, got: r.results.map(toJson) }).toEqual({ pql, got: queries.map((q) => expected(model, q)) });
        },
      ),
      { numRuns: 200 },
    );
  });
});
