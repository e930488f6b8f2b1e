import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { INT64_MAX, INT64_MIN } from '../../../src/domain/types.js';
import {
  bitDepthFor,
  bsiMax,
  bsiMin,
  bsiRange,
  bsiSum,
  bsiValue,
  clearValues,
  setValues,
  type BsiPredicate,
} from '../../../src/state/bsi.js';
import { RoaringBitmap32 } from '../../../src/roaring/bitmap.js';
import { Fragment } from '../../../src/state/fragment.js';

/** Pilosa's bsiBase for a field with these bounds. */
const baseOf = (min: bigint, max: bigint): bigint => (min > 0n ? min : max < 0n ? max : 0n);

interface Model {
  frag: Fragment;
  base: bigint;
  depth: number;
  values: Map<number, bigint>;
}

function build(base: bigint, writes: [number, bigint][][]): Model {
  const frag = new Fragment(0);
  const values = new Map<number, bigint>();
  let depth = 0;
  for (const batch of writes) {
    const offs = Uint32Array.from(batch.map(([o]) => o));
    const vals = BigInt64Array.from(batch.map(([, v]) => v));
    depth = Math.max(depth, bitDepthFor(vals, base));
    setValues(frag, offs, vals, base, depth);
    for (const [o, v] of batch) values.set(o, v);
  }
  return { frag, base, depth, values };
}

function naive(values: Map<number, bigint>, pred: BsiPredicate): number[] {
  const test = (v: bigint): boolean => {
    switch (pred.op) {
      case 'notNull':
        return true;
      case 'between':
        return v >= pred.lo && v <= pred.hi;
      case '==':
        return v === pred.value;
      case '!=':
        return v !== pred.value;
      case '<':
        return v < pred.value;
      case '<=':
        return v <= pred.value;
      case '>':
        return v > pred.value;
      case '>=':
        return v >= pred.value;
    }
  };
  return [...values]
    .filter(([, v]) => test(v))
    .map(([o]) => o)
    .sort((a, b) => a - b);
}

const extremes = [INT64_MIN, INT64_MIN + 1n, -2n, -1n, 0n, 1n, 2n, INT64_MAX - 1n, INT64_MAX];
const int64 = fc.oneof(
  fc.bigInt({ min: -40n, max: 40n }),
  fc.constantFrom(...extremes),
  fc.bigInt({ min: INT64_MIN, max: INT64_MAX }),
);
const bounds = fc.oneof(
  fc.constant<[bigint, bigint]>([INT64_MIN, INT64_MAX]),
  fc.tuple(int64, int64).map(([a, b]): [bigint, bigint] => (a <= b ? [a, b] : [b, a])),
);
const offset = fc.integer({ min: 0, max: 40 });
const op = fc.constantFrom('==', '!=', '<', '<=', '>', '>=' as const);

describe('bsi storage', () => {
  it('bitDepthFor handles the full signed range relative to the base', () => {
    expect(bitDepthFor(BigInt64Array.from([0n]), 0n)).toBe(0);
    expect(bitDepthFor(BigInt64Array.from([1n, -1n]), 0n)).toBe(1);
    expect(bitDepthFor(BigInt64Array.from([INT64_MAX]), INT64_MIN)).toBe(64);
    expect(bitDepthFor(BigInt64Array.from([INT64_MIN]), 0n)).toBe(64);
    expect(bitDepthFor(BigInt64Array.from([1000n]), 0n)).toBe(10);
  });

  it('stores and reads back values, last write per column wins', () => {
    const m = build(0n, [
      [
        [3, 5n],
        [3, -7n],
        [9, INT64_MIN],
      ],
      [[9, 2n]],
    ]);
    expect(bsiValue(m.frag, 3, 0n, m.depth)).toBe(-7n);
    expect(bsiValue(m.frag, 9, 0n, m.depth)).toBe(2n);
    expect(bsiValue(m.frag, 4, 0n, m.depth)).toBeUndefined();
    clearValues(m.frag, Uint32Array.from([3]), m.depth);
    expect(bsiValue(m.frag, 3, 0n, m.depth)).toBeUndefined();
  });

  it('round-trips, sums, min/max and ranges agree with a naive model', () => {
    fc.assert(
      fc.property(
        bounds,
        fc.array(fc.array(fc.tuple(offset, int64), { minLength: 1, maxLength: 12 }), { minLength: 1, maxLength: 4 }),
        fc.array(fc.oneof(fc.tuple(op, int64), fc.tuple(fc.constant('between' as const), int64, int64)), {
          maxLength: 8,
        }),
        fc.option(fc.array(offset, { maxLength: 20 })),
        ([min, max], batches, preds, filterList) => {
          const base = baseOf(min, max);
          const clamp = (v: bigint): bigint => (v < min ? min : v > max ? max : v);
          const m = build(
            base,
            batches.map((b) => b.map(([o, v]): [number, bigint] => [o, clamp(v)])),
          );
          for (const [o, v] of m.values) expect(bsiValue(m.frag, o, base, m.depth)).toBe(v);

          const filter = filterList === null ? undefined : RoaringBitmap32.from(filterList);
          const vals = [...m.values].filter(([o]) => filter === undefined || filter.has(o)).map(([, v]) => v);
          const sum = bsiSum(m.frag, filter, base, m.depth);
          expect(sum).toEqual({ value: vals.reduce((a, b) => a + b, 0n), count: vals.length });
          const lo = vals.length === 0 ? undefined : vals.reduce((a, b) => (b < a ? b : a));
          const hi = vals.length === 0 ? undefined : vals.reduce((a, b) => (b > a ? b : a));
          expect(bsiMin(m.frag, filter, base, m.depth)).toEqual(
            lo === undefined ? undefined : { value: lo, count: vals.filter((v) => v === lo).length },
          );
          expect(bsiMax(m.frag, filter, base, m.depth)).toEqual(
            hi === undefined ? undefined : { value: hi, count: vals.filter((v) => v === hi).length },
          );

          const all: BsiPredicate[] = [{ op: 'notNull' }];
          for (const p of preds) {
            if (p[0] === 'between') all.push({ op: 'between', lo: p[1], hi: p[2] });
            else all.push({ op: p[0], value: p[1] });
          }
          // Values present in the data are the interesting edges: probe them and their neighbours.
          for (const v of [...m.values.values()].slice(0, 5)) {
            for (const d of [-1n, 0n, 1n]) {
              const q = v + d;
              if (q < INT64_MIN || q > INT64_MAX) continue;
              for (const o of ['==', '!=', '<', '<=', '>', '>='] as const) all.push({ op: o, value: q });
            }
          }
          for (const p of all) {
            const got = bsiRange(m.frag, p, base, m.depth).toArray();
            const want = naive(m.values, p);
            if (got.join() !== want.join()) expect({ p, got }).toEqual({ p, got: want });
          }
        },
      ),
      { numRuns: 250 },
    );
  });

  it('strict comparisons near zero are exact (Pilosa 1.4 gets these wrong)', () => {
    const m = build(0n, [
      [
        [1, -2n],
        [2, -1n],
        [3, 0n],
        [4, 1n],
        [5, 2n],
      ],
    ]);
    const q = (p: BsiPredicate): number[] => bsiRange(m.frag, p, 0n, m.depth).toArray();
    expect(q({ op: '<', value: 0n })).toEqual([1, 2]);
    expect(q({ op: '<', value: -1n })).toEqual([1]);
    expect(q({ op: '>', value: -1n })).toEqual([3, 4, 5]);
    expect(q({ op: '>=', value: 0n })).toEqual([3, 4, 5]);
  });

  it('a filtered sum only counts the filtered negatives (Pilosa 1.4 defect)', () => {
    const m = build(0n, [
      [
        [20, -50n],
        [22, 999n],
      ],
    ]);
    expect(bsiSum(m.frag, RoaringBitmap32.from([22]), 0n, m.depth)).toEqual({ value: 999n, count: 1 });
  });

  it('rewriting a value with a smaller magnitude clears the old high bits', () => {
    const m = build(0n, [[[7, 1000n]], [[7, 3n]]]);
    expect(bsiValue(m.frag, 7, 0n, m.depth)).toBe(3n);
    expect(bsiRange(m.frag, { op: '>', value: 500n }, 0n, m.depth).toArray()).toEqual([]);
  });
});
