import { describe, expect, it } from 'vitest';
import { fixture, keyedFixture } from './fixture.js';
import { MemorySink, one, run } from './harness.js';

const g = (s: number, b: number, count: number): unknown => ({
  group: [
    { field: 's', rowID: s },
    { field: 'b', rowID: b },
  ],
  count,
});

describe('Rows', () => {
  const s = fixture();
  const cases: [string, unknown][] = [
    ['Rows(s)', { rows: [10, 11, 12] }],
    ['Rows(field=s)', { rows: [10, 11, 12] }],
    ['Rows(s, previous=10)', { rows: [11, 12] }],
    ['Rows(s, limit=2)', { rows: [10, 11] }],
    ['Rows(s, previous=10, limit=1)', { rows: [11] }],
    ['Rows(s, column=2)', { rows: [10, 11] }],
    ['Rows(s, column=1048576)', { rows: [10] }],
    ['Rows(s, column=77)', { rows: [] }],
    ['Rows(m)', { rows: [1, 2] }],
    ['Rows(b)', { rows: [0, 1] }],
    ['Rows(t)', { rows: [1, 2] }],
    ['Rows(t, from=2018-01-01T00:00)', { rows: [1] }],
    ['Rows(t, to=2017-06-01T00:00)', { rows: [1, 2] }],
    ['Rows(t, from=2017-01-02T04:00, to=2017-01-02T05:00)', { rows: [2] }],
    ['Rows(n)', { rows: [] }],
  ];
  it.each(cases)('%s', (pql, want) => expect(one(s, 'i', pql)).toEqual(want));

  it('time fields without a standard view read their time views', () => {
    const t = new MemorySink()
      .createIndex('i')
      .createField('i', 'q', 'time', { timeQuantum: 'YM', noStandardView: true });
    run(t, 'i', 'Set(1, q=3, 2019-05-01T00:00) Set(2, q=4, 2020-01-01T00:00) Set(3, q=5)');
    expect(one(t, 'i', 'Rows(q)')).toEqual({ rows: [3, 4] });
    expect(one(t, 'i', 'Row(q=5)')).toEqual({ attrs: {}, columns: [] });
    expect(one(t, 'i', 'Row(q=4, from=2019-12-01T00:00, to=2020-02-01T00:00)')).toEqual({ attrs: {}, columns: [2] });
    // `to` defaults to now + 1 day (2020-01-02): a YM quantum cannot cover part of January.
    expect(one(t, 'i', 'Row(q=4, from=2019-12-01T00:00)')).toEqual({ attrs: {}, columns: [] });
  });

  it('keys on keyed fields and columns', () => {
    const k = keyedFixture();
    expect(one(k, 'k', 'Rows(kf)')).toEqual({ rows: null, keys: ['x', 'y'] });
    expect(one(k, 'k', 'Rows(kf, previous="x")')).toEqual({ rows: null, keys: ['y'] });
    expect(one(k, 'k', 'Rows(kf, column="b")')).toEqual({ rows: null, keys: ['x'] });
    expect(one(k, 'k', 'Rows(kf, column="nope")')).toEqual({ rows: null });
    expect(one(k, 'k', 'Rows(kf, previous="nope")')).toEqual({ rows: null });
    expect(one(k, 'k', 'Rows(u)')).toEqual({ rows: [3] });
  });
});

describe('GroupBy', () => {
  const s = fixture();
  const cases: [string, unknown][] = [
    ['GroupBy(Rows(s), Rows(b))', [g(10, 0, 1), g(10, 1, 1), g(11, 0, 1), g(12, 0, 1)]],
    ['GroupBy(Rows(s), Rows(b), limit=2)', [g(10, 0, 1), g(10, 1, 1)]],
    ['GroupBy(Rows(s), Rows(b), offset=1, limit=2)', [g(10, 1, 1), g(11, 0, 1)]],
    ['GroupBy(Rows(s), Rows(b), offset=9)', []],
    ['GroupBy(Rows(s), Rows(b), filter=Row(m=1))', [g(10, 1, 1)]],
    ['GroupBy(Rows(s, previous=10), Rows(b, previous=0))', [g(10, 1, 1), g(11, 0, 1), g(12, 0, 1)]],
    ['GroupBy(Rows(s), Rows(b), previous=[10, 0])', [g(10, 1, 1), g(11, 0, 1), g(12, 0, 1)]],
    ['GroupBy(Rows(s, previous=11), Rows(b))', [g(11, 0, 1), g(12, 0, 1)]],
    ['GroupBy(Rows(s, limit=1), Rows(b))', [g(10, 0, 1), g(10, 1, 1)]],
    ['GroupBy(Rows(s, column=3), Rows(b))', [g(12, 0, 1)]],
    ['GroupBy(Rows(s, column=99), Rows(b))', []],
    [
      'GroupBy(Rows(s))',
      [
        { group: [{ field: 's', rowID: 10 }], count: 3 },
        { group: [{ field: 's', rowID: 11 }], count: 1 },
        { group: [{ field: 's', rowID: 12 }], count: 1 },
      ],
    ],
  ];
  it.each(cases)('%s', (pql, want) => expect(one(s, 'i', pql)).toEqual(want));

  it('merges counts across shards and uses row keys on keyed fields', () => {
    const k = keyedFixture();
    run(k, 'k', 'Set("d", u=3) Set("a", u=3)');
    expect(one(k, 'k', 'GroupBy(Rows(kf), Rows(u))')).toEqual([
      {
        group: [
          { field: 'kf', rowKey: 'x' },
          { field: 'u', rowID: 3 },
        ],
        count: 1,
      },
      {
        group: [
          { field: 'kf', rowKey: 'y' },
          { field: 'u', rowID: 3 },
        ],
        count: 1,
      },
    ]);
    const t = new MemorySink().createIndex('i').createField('i', 'a').createField('i', 'c');
    run(t, 'i', 'Set(1, a=1) Set(1, c=2) Set(1048577, a=1) Set(1048577, c=2)');
    expect(one(t, 'i', 'GroupBy(Rows(a), Rows(c))')).toEqual([
      {
        group: [
          { field: 'a', rowID: 1 },
          { field: 'c', rowID: 2 },
        ],
        count: 2,
      },
    ]);
  });
});
