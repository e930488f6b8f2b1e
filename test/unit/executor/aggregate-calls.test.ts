import { describe, expect, it } from 'vitest';
import { INT64_MAX, INT64_MIN } from '../../../src/domain/types.js';
import { fixture, keyedFixture } from './fixture.js';
import { MemorySink, one, results, run } from './harness.js';

describe('Sum / Min / Max', () => {
  const s = fixture();
  const cases: [string, unknown][] = [
    ['Sum(field=n)', { value: 2, count: 5 }],
    ['Min(field=n)', { value: -1000, count: 1 }],
    ['Max(field=n)', { value: 1000, count: 1 }],
    ['Sum(Row(s=10), field=n)', { value: -5, count: 2 }],
    ['Min(Row(b=false), field=n)', { value: 0, count: 1 }],
    ['Max(Row(b=false), field=n)', { value: 7, count: 1 }],
    ['Sum(Row(s=99), field=n)', { value: 0, count: 0 }],
    ['Min(Row(s=99), field=n)', { value: 0, count: 0 }],
    ['Max(Not(Row(n > -1)), field=n)', { value: -5, count: 1 }],
  ];
  it.each(cases)('%s', (pql, want) => expect(one(s, 'i', pql)).toEqual(want));

  it('a filtered Sum only counts the filtered negatives (Pilosa 1.4 §8.2)', () => {
    const t = new MemorySink().createIndex('i').createField('i', 'f').createField('i', 'w', 'int');
    run(t, 'i', 'Set(20, w=-50) Set(22, w=999) Set(22, f=77)');
    expect(one(t, 'i', 'Sum(Row(f=77), field=w)')).toEqual({ value: 999, count: 1 });
  });

  it('counts ties across shards and is exact at the int64 extremes', () => {
    const t = new MemorySink().createIndex('i').createField('i', 'w', 'int');
    run(t, 'i', `Set(1, w=${INT64_MAX}) Set(1048577, w=${INT64_MAX}) Set(2, w=${INT64_MIN}) Set(3, w=${INT64_MIN})`);
    expect(results(t, 'i', 'Max(field=w) Min(field=w) Sum(field=w)')).toEqual([
      { value: INT64_MAX, count: 2 },
      { value: INT64_MIN, count: 2 },
      { value: -2, count: 4 },
    ]);
    expect(one(t, 'i', `Row(w == ${INT64_MIN})`)).toEqual({ attrs: {}, columns: [2, 3] });
    expect(one(t, 'i', `Row(w > ${INT64_MIN})`)).toEqual({ attrs: {}, columns: [1, 1048577] });
  });
});

describe('MinRow / MaxRow', () => {
  const s = fixture();
  const cases: [string, unknown][] = [
    ['MinRow(field=s)', { id: 10, count: 1 }],
    ['MaxRow(field=s)', { id: 12, count: 1 }],
    ['MinRow(Row(b=false), field=s)', { id: 10, count: 1 }],
    ['MaxRow(Row(b=false), field=s)', { id: 12, count: 1 }],
    ['MinRow(Row(b=true), field=s)', { id: 10, count: 1 }],
    ['MinRow(Union(Row(m=1), Row(m=2)), field=s)', { id: 10, count: 2 }],
    ['MinRow(Row(s=99), field=s)', { id: 0, count: 0 }],
    ['MaxRow(field=b)', { id: 1, count: 1 }],
    ['MinRow(field=m)', { id: 1, count: 1 }],
  ];
  it.each(cases)('%s', (pql, want) => expect(one(s, 'i', pql)).toEqual(want));

  it('translates the row to its key on keyed fields', () => {
    const k = keyedFixture();
    expect(one(k, 'k', 'MinRow(field=kf)')).toEqual({ id: 1, key: 'x', count: 1 });
    expect(one(k, 'k', 'MaxRow(field=kf)')).toEqual({ id: 2, key: 'y', count: 1 });
  });
});
