import { describe, expect, it } from 'vitest';
import { fixture, keyedFixture } from './fixture.js';
import { one, results, run } from './harness.js';

describe('Options', () => {
  const s = fixture();
  run(s, 'i', 'SetRowAttrs(s, 10, color="red") SetColumnAttrs(1, name="one")');
  const cases: [string, unknown][] = [
    ['Options(Row(s=10))', { attrs: { color: 'red' }, columns: [1, 2, 1048576] }],
    ['Options(Row(s=10), excludeRowAttrs=true)', { attrs: {}, columns: [1, 2, 1048576] }],
    ['Options(Row(s=10), excludeColumns=true)', { attrs: { color: 'red' }, columns: [] }],
    ['Options(Row(s=10), shards=[1, 0])', { attrs: { color: 'red' }, columns: [1, 2, 1048576] }],
    ['Options(Row(s=10), shards=[1])', { attrs: { color: 'red' }, columns: [1048576] }],
    ['Options(Count(Row(s=10)), shards=[0])', 2],
    ['Options(TopN(s, n=1), shards=[1])', [{ id: 10, count: 1 }]],
  ];
  it.each(cases)('%s', (pql, want) => expect(one(s, 'i', pql)).toEqual(want));

  it('columnAttrs=true turns on the response-level column attributes', () => {
    expect(run(s, 'i', 'Options(Row(s=10), columnAttrs=true)').columnAttrs).toEqual([
      { id: 1, attrs: { name: 'one' } },
    ]);
    expect(run(s, 'i', 'Options(Row(s=10), columnAttrs=false)').columnAttrs).toBeUndefined();
  });

  it('wraps writes too', () => {
    const t = fixture();
    expect(results(t, 'i', 'Options(Set(7, s=10), excludeColumns=true) Row(s=10)')).toEqual([
      true,
      { attrs: {}, columns: [1, 2, 7, 1048576] },
    ]);
    expect(results(t, 'i', 'Options(ClearRow(s=10), shards=[0]) Row(s=10)')).toEqual([
      true,
      { attrs: {}, columns: [1048576] },
    ]);
  });

  it('keyed results honour excludeColumns', () => {
    const k = keyedFixture();
    expect(one(k, 'k', 'Options(Row(kf="x"), excludeColumns=true)')).toEqual({ attrs: {}, columns: [] });
    expect(one(k, 'k', 'Row(kf="x")')).toEqual({ attrs: {}, columns: [], keys: ['a', 'b'] });
  });
});
