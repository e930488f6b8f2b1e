// TopN by the threshold algorithm (executor/topn-select.ts) and from kept totals
// (topn-totals.ts) against counting every candidate row in every shard: random data with many ties (few columns a shard), stale caches (writes
// after the recalculation, small cache sizes), per-shard thresholds, a filter row, tanimoto,
// ids and attribute filters. The model below is the old algorithm written plainly.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { STANDARD_VIEW } from '../../src/domain/names.js';
import { SHARD_WIDTH } from '../../src/domain/shard.js';
import { recalculateCaches } from '../../src/executor/index.js';
import { MemorySink, one, run } from '../unit/executor/harness.js';

const SHARDS = 4;
const ROWS = 10;
const OFFSETS = 12;

type Bit = [field: 'f' | 'g', row: number, shard: number, offset: number];
/** field → row → shard → offsets */
type Model = Map<string, Map<number, Map<number, Set<number>>>>;

interface Args {
  src?: [string, number];
  n?: number;
  ids?: number[];
  threshold?: number;
  tanimoto?: number;
  attr?: string[];
}

interface World {
  cacheSize: number;
  bits: Bit[];
  late: Bit[];
  attrs: [number, string][];
  queries: Args[];
}

const bitArb: fc.Arbitrary<Bit> = fc.tuple(
  fc.constantFrom<'f' | 'g'>('f', 'f', 'f', 'g'),
  fc.integer({ min: 0, max: ROWS - 1 }),
  fc.integer({ min: 0, max: SHARDS - 1 }),
  fc.integer({ min: 0, max: OFFSETS - 1 }),
);

/** Present `percent` % of the time. */
function sometimes<T>(arb: fc.Arbitrary<T>, percent: number): fc.Arbitrary<T | undefined> {
  return fc.oneof({ weight: percent, arbitrary: arb }, { weight: 100 - percent, arbitrary: fc.constant(undefined) });
}

const argsArb: fc.Arbitrary<Args> = fc.record({
  src: sometimes(fc.tuple(fc.constantFrom('f', 'g'), fc.integer({ min: 0, max: ROWS - 1 })), 50),
  n: sometimes(fc.integer({ min: 0, max: 5 }), 85),
  ids: sometimes(fc.uniqueArray(fc.integer({ min: 0, max: ROWS + 1 }), { maxLength: 4 }), 15),
  threshold: sometimes(fc.integer({ min: 1, max: 4 }), 30),
  tanimoto: sometimes(fc.constantFrom(1, 10, 30, 50, 70, 90, 100), 25),
  attr: sometimes(fc.uniqueArray(fc.constantFrom('a', 'b', 'c'), { minLength: 1, maxLength: 2 }), 20),
});

const worldArb: fc.Arbitrary<World> = fc.record({
  cacheSize: fc.constantFrom(2, 4, 50_000),
  bits: fc.array(bitArb, { minLength: 40, maxLength: 300 }),
  late: fc.array(bitArb, { maxLength: 30 }),
  attrs: fc.array(fc.tuple(fc.integer({ min: 0, max: ROWS - 1 }), fc.constantFrom('a', 'b', 'c')), { maxLength: 6 }),
  queries: fc.array(argsArb, { minLength: 1, maxLength: 6 }),
});

function pqlOf(a: Args): string {
  const args = ['f'];
  if (a.src !== undefined) args.push(`Row(${a.src[0]}=${a.src[1]})`);
  if (a.n !== undefined) args.push(`n=${a.n}`);
  if (a.ids !== undefined) args.push(`ids=[${a.ids.join(', ')}]`);
  if (a.threshold !== undefined) args.push(`threshold=${a.threshold}`);
  if (a.tanimoto !== undefined) args.push(`tanimotoThreshold=${a.tanimoto}`);
  if (a.attr !== undefined) args.push(`attrName=cat, attrValues=[${a.attr.map((v) => `"${v}"`).join(', ')}]`);
  return `TopN(${args.join(', ')})`;
}

function write(sink: MemorySink, model: Model, bits: readonly Bit[]): void {
  for (const [field, row, shard, offset] of bits) {
    sink.emit({
      type: 'BitsSet',
      index: 'i',
      field,
      view: STANDARD_VIEW,
      shard,
      rows: [row],
      columns: [Uint32Array.of(offset)],
    });
    const rows = model.get(field) ?? new Map<number, Map<number, Set<number>>>();
    model.set(field, rows);
    const shards = rows.get(row) ?? new Map<number, Set<number>>();
    rows.set(row, shards);
    const set = shards.get(shard) ?? new Set<number>();
    shards.set(shard, set);
    set.add(offset);
  }
}

/** The cached rows of each shard of f: the cacheSize largest, ties by ascending ID. */
function ranked(model: Model, cacheSize: number): Map<number, number[]> {
  const out = new Map<number, number[]>();
  for (let s = 0; s < SHARDS; s++) {
    const sized: [number, number][] = [];
    for (const [row, shards] of model.get('f') ?? []) {
      const n = shards.get(s)?.size ?? 0;
      if (n > 0) sized.push([row, n]);
    }
    if (sized.length === 0) continue;
    sized.sort((a, b) => b[1] - a[1] || a[0] - b[0]);
    out.set(
      s,
      sized.slice(0, cacheSize).map(([r]) => r),
    );
  }
  return out;
}

/** Every candidate counted in every shard, as TopN answered before the threshold algorithm. */
function expected(w: World, model: Model, caches: Map<number, number[]>, a: Args): { id: number; count: number }[] {
  const attrs = new Map<number, string>();
  for (const [row, v] of w.attrs) attrs.set(row, v);
  let candidates = a.ids !== undefined ? [...new Set(a.ids)] : [...new Set([...caches.values()].flat())];
  if (a.attr !== undefined) candidates = candidates.filter((r) => a.attr?.includes(attrs.get(r) ?? '') === true);
  const tanimoto = a.src !== undefined && a.tanimoto !== undefined && a.tanimoto > 0;
  const threshold = a.threshold ?? 1;
  const src = (s: number): Set<number> | undefined =>
    a.src === undefined ? undefined : (model.get(a.src[0])?.get(a.src[1])?.get(s) ?? new Set());
  let srcCount = 0;
  for (let s = 0; s < SHARDS; s++) srcCount += src(s)?.size ?? 0;
  const pairs: { id: number; count: number }[] = [];
  for (const r of candidates) {
    let count = 0;
    let size = 0;
    for (let s = 0; s < SHARDS; s++) {
      const bits = model.get('f')?.get(r)?.get(s) ?? new Set<number>();
      const within = src(s);
      const c = within === undefined ? bits.size : [...bits].filter((o) => within.has(o)).length;
      if (c === 0 || (!tanimoto && c < threshold)) continue;
      count += c;
      size += bits.size;
    }
    if (count === 0) continue;
    if (tanimoto && Math.ceil((count * 100) / (size + srcCount - count)) <= (a.tanimoto ?? 0)) continue;
    pairs.push({ id: r, count });
  }
  pairs.sort((x, y) => y.count - x.count || x.id - y.id);
  return a.ids === undefined && (a.n ?? 0) > 0 ? pairs.slice(0, a.n) : pairs;
}

describe('TopN by the threshold algorithm and by kept totals', () => {
  it('equals counting every candidate in every shard', () => {
    fc.assert(
      fc.property(worldArb, (w) => {
        const sink = new MemorySink().createIndex('i').createField('i', 'f', 'set', { cacheSize: w.cacheSize });
        sink.createField('i', 'g');
        const model: Model = new Map();
        // Every shard exists for the index (column in _exists), so the query covers all four.
        run(sink, 'i', Array.from({ length: SHARDS }, (_, s) => `Set(${s * SHARD_WIDTH}, g=${ROWS})`).join(' '));
        write(sink, model, w.bits);
        for (const [row, v] of w.attrs) run(sink, 'i', `SetRowAttrs(f, ${row}, cat="${v}")`);
        recalculateCaches(sink.holder);
        const atRecalc = ranked(model, w.cacheSize);
        // Each query twice: the second answer of an unfiltered TopN comes from the kept totals
        // (executor/topn-totals.ts), which the late writes below must then leave behind.
        for (const a of w.queries)
          for (let k = 0; k < 2; k++)
            expect(one(sink, 'i', pqlOf(a)), pqlOf(a)).toEqual(expected(w, model, atRecalc, a));
        // Writes after the recalculation: counts are current, the candidates those cached then
        // (a shard first seen now is ranked on first use).
        write(sink, model, w.late);
        const now = ranked(model, w.cacheSize);
        const caches = new Map(now);
        for (const [s, rows] of atRecalc) caches.set(s, rows);
        for (const a of w.queries)
          for (let k = 0; k < 2; k++) expect(one(sink, 'i', pqlOf(a)), pqlOf(a)).toEqual(expected(w, model, caches, a));
      }),
      { numRuns: 300 },
    );
  });
});
