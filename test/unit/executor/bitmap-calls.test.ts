import { describe, expect, it, vi } from 'vitest';
import { RoaringBitmap32 } from '../../../src/roaring/bitmap.js';
import { fixture } from './fixture.js';
import { MemorySink, one, run } from './harness.js';

const row = (columns: number[], attrs: Record<string, unknown> = {}): unknown => ({ attrs, columns });

describe('Row / Range per field type', () => {
  const s = fixture();
  const cases: [string, unknown][] = [
    ['Row(s=10)', row([1, 2, 1048576])],
    ['Row(s=99)', row([])],
    ['Row(m=1)', row([1])],
    ['Row(m=2)', row([2])],
    ['Row(b=true)', row([1])],
    ['Row(b=false)', row([2, 3])],
    ['Row(t=1)', row([1, 2, 4])],
    ['Row(t=1, from=2017-01-01T00:00, to=2018-01-01T00:00)', row([1])],
    ['Row(t=1, from=2017-06-01T00:00)', row([2])],
    ['Row(t=1, to=2018-01-01T00:00)', row([1])],
    ['Row(t=1, from=2017-01-02T03:00, to=2017-01-02T04:00)', row([1])],
    ['Row(t=2, from=2017-01-02T03:00, to=2017-01-02T04:00)', row([])],
    ['Row(t=2, from=2017-01-02T04:00, to=2017-01-02T05:00)', row([3])],
    ["Row(t=1, from=1483228800, to='2018-01-01T00:00')", row([1])],
    ['Range(t=1, 2017-01-01T00:00, 2019-01-01T00:00)', row([1, 2])],
    ['Range(t=1, from=2017-01-01T00:00, to=2018-01-01T00:00)', row([1])],
    ['Row(s=10, from=2017-01-01T00:00, to=2018-01-01T00:00)', row([])],
    ['Row(n == 7)', row([3])],
    ['Row(n != 7)', row([1, 2, 4, 5])],
    ['Row(n < 0)', row([1, 5])],
    ['Row(n <= 0)', row([1, 2, 5])],
    ['Row(n < -1)', row([1, 5])],
    ['Row(n > -1)', row([2, 3, 4])],
    ['Row(n > -5)', row([2, 3, 4])],
    ['Row(n >= -5)', row([1, 2, 3, 4])],
    ['Row(n != null)', row([1, 2, 3, 4, 5])],
    ['Row(-6 < n < 8)', row([1, 2, 3])],
    ['Row(-5 <= n <= 7)', row([1, 2, 3])],
    ['Row(n >< [0, 1000])', row([2, 3, 4])],
    ['Row(n == 2000)', row([])],
    ['Row(n != 2000)', row([1, 2, 3, 4, 5])],
    ['Row(n < 2000)', row([1, 2, 3, 4, 5])],
    ['Row(n > -2000)', row([1, 2, 3, 4, 5])],
    ['Row(n >= 1000)', row([4])],
    ['Row(n <= -1000)', row([5])],
    ['Range(n > 6)', row([3, 4])],
    ['Row(n=5)', row([])],
  ];
  it.each(cases)('%s', (pql, want) => expect(one(s, 'i', pql)).toEqual(want));

  it('attaches row attributes to a plain Row() only', () => {
    const s2 = fixture();
    run(s2, 'i', 'SetRowAttrs(s, 10, color="red", weight=5, ratio=0.5, ok=true)');
    const attrs = { color: 'red', ok: true, ratio: 0.5, weight: 5 };
    expect(one(s2, 'i', 'Row(s=10)')).toEqual(row([1, 2, 1048576], attrs));
    expect(one(s2, 'i', 'Row(s=10)', { excludeRowAttrs: true })).toEqual(row([1, 2, 1048576]));
    expect(one(s2, 'i', 'Row(s=10)', { excludeColumns: true })).toEqual(row([], attrs));
    expect(one(s2, 'i', 'Union(Row(s=10))')).toEqual(row([1, 2, 1048576]));
    run(s2, 'i', 'SetRowAttrs(s, 10, color=null)');
    expect(one(s2, 'i', 'Row(s=10)')).toEqual(row([1, 2, 1048576], { ok: true, ratio: 0.5, weight: 5 }));
  });
});

describe('combinations, Not, Shift, Count', () => {
  const s = fixture();
  const cases: [string, unknown][] = [
    ['Union(Row(s=10), Row(m=2))', row([1, 2, 1048576])],
    ['Union()', row([])],
    ['Xor()', row([])],
    ['Intersect(Row(s=10), Row(m=1))', row([1])],
    ['Intersect(Row(s=10))', row([1, 2, 1048576])],
    ['Difference(Row(s=10), Row(s=11))', row([1, 1048576])],
    ['Difference(Row(s=10), Row(s=11), Row(b=true))', row([1048576])],
    ['Xor(Row(s=10), Row(b=false))', row([1, 3, 1048576])],
    ['Xor(Row(s=10), Row(b=false), Row(s=12))', row([1, 1048576])],
    ['Not(Row(s=10))', row([3, 4, 5])],
    ['Not(Union())', row([1, 2, 3, 4, 5, 1048576])],
    ['Shift(Row(s=10), n=1)', row([2, 3, 1048577])],
    ['Shift(Row(s=10))', row([1, 2, 1048576])],
    ['Shift(Row(s=10), n=1048575)', row([1048576, 1048577, 2097151])],
    ['Shift(Shift(Row(s=12), n=1048575), n=1048576)', row([2097154])],
    ['Count(Row(s=10))', 3],
    ['Count(Intersect(Row(s=10), Row(s=11)))', 1],
    ['Count(Intersect(Row(s=10), Row(b=false), Row(m=2)))', 1],
    ['Count(Intersect(Row(s=10), Row(s=10), Row(s=10)))', 3],
    ['Count(Intersect(Row(s=10), Row(s=99)))', 0],
    ['Count(Intersect(Row(s=99), Row(s=10)))', 0],
    ['Count(Intersect(Row(s=10), Row(s=99), Row(s=10)))', 0],
    ['Count(Union(Row(s=10), Row(s=12)))', 4],
    ['Count(Difference(Row(s=10), Row(s=11)))', 2],
    ['Count(Xor(Row(s=10), Row(b=false)))', 3],
    ['Count(Not(Row(s=10)))', 3],
    ['Count(Shift(Row(s=10), n=1048575))', 3],
    ['Count(Union())', 0],
  ];
  it.each(cases)('%s', (pql, want) => expect(one(s, 'i', pql)).toEqual(want));

  it('Count(Intersect(a, b)) never builds the intersection', () => {
    const and = vi.spyOn(RoaringBitmap32, 'and');
    try {
      expect(one(s, 'i', 'Count(Intersect(Row(s=10), Row(b=false)))')).toBe(1);
      expect(and).not.toHaveBeenCalled();
    } finally {
      and.mockRestore();
    }
  });

  it('restricts every read to the requested shards', () => {
    expect(one(s, 'i', 'Row(s=10)', { shards: [1] })).toEqual(row([1048576]));
    expect(one(s, 'i', 'Count(Row(s=10))', { shards: [0] })).toBe(2);
    expect(one(s, 'i', 'Count(Intersect(Row(s=10), Row(s=10)))', { shards: [0] })).toBe(2);
    expect(one(s, 'i', 'Count(Intersect(Row(s=10), Row(s=10)))', { shards: [1] })).toBe(1);
    expect(one(s, 'i', 'Not(Row(s=10))', { shards: [1] })).toEqual(row([]));
    // Shift carries columns out of the requested shards.
    expect(one(s, 'i', 'Shift(Row(s=10), n=1048575)', { shards: [0] })).toEqual(row([1048576, 1048577]));
  });

  it('sees shards created by earlier writes of the same request', () => {
    const s2 = fixture();
    expect(run(s2, 'i', 'Set(5242880, s=10) Count(Row(s=10))').results[1]).toEqual({ type: 'count', n: 4 });
  });

  it('Not needs existence tracking', () => {
    const s2 = new MemorySink().createIndex('j', { trackExistence: false }).createField('j', 's');
    run(s2, 'j', 'Set(1, s=1)');
    expect(() => run(s2, 'j', 'Not(Row(s=1))')).toThrow(
      'executing: map reduce: index does not support existence tracking: j',
    );
  });
});
