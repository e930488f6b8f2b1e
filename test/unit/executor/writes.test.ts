import { describe, expect, it } from 'vitest';
import { fixture, keyedFixture } from './fixture.js';
import { MemorySink, error, one, results, run } from './harness.js';

const row = (columns: number[]): unknown => ({ attrs: {}, columns });

describe('Set', () => {
  it('reports exactly whether a bit changed, per field type', () => {
    const s = fixture();
    expect(results(s, 'i', 'Set(7, s=10) Set(7, s=10)')).toEqual([true, false]);
    expect(results(s, 'i', 'Set(1, m=1) Set(1, m=2) Row(m=1) Row(m=2)')).toEqual([false, true, row([]), row([1, 2])]);
    expect(results(s, 'i', 'Set(1, b=true) Set(1, b=false) Row(b=true) Row(b=false)')).toEqual([
      false,
      true,
      row([]),
      row([1, 2, 3]),
    ]);
    expect(results(s, 'i', 'Set(9, n=5) Set(9, n=5) Set(9, n=-6) Row(n == -6)')).toEqual([true, false, true, row([9])]);
    expect(results(s, 'i', 'Set(9, t=1) Set(9, t=1, 2019-02-03T04:05) Set(9, t=1, 2019-02-03T04:05)')).toEqual([
      true,
      true,
      false,
    ]);
  });

  it('marks existence on the first field event (one record per Set), and time views per quantum unit', () => {
    const s = fixture();
    const mark = s.events.length;
    run(s, 'i', 'Set(9, t=5, 2019-02-03T04:05)');
    const ev = s.since(mark);
    const label = (e: (typeof ev)[number]): string =>
      e.type === 'BitsSet'
        ? `${e.field}/${e.view}/${e.shard}/${e.rows.join()}/${e.columns.map((c) => Array.from(c).join()).join()}${e.exists ? ' +exists' : ''}`
        : e.type;
    expect(ev.map(label)).toEqual([
      't/standard/0/5/9 +exists',
      't/standard_2019/0/5/9',
      't/standard_201902/0/5/9',
      't/standard_20190203/0/5/9',
      't/standard_2019020304/0/5/9',
    ]);
    expect(s.holder.index('i')!.existence!.view('standard')!.fragment(0)!.has(0, 9)).toBe(true);
    // A second Set of the same bit changes nothing and logs nothing.
    const again = s.events.length;
    run(s, 'i', 'Set(9, t=5)');
    expect(s.since(again)).toEqual([]);
  });

  it('a time field without a standard view sets nothing without a timestamp', () => {
    const s = new MemorySink()
      .createIndex('i')
      .createField('i', 'q', 'time', { timeQuantum: 'Y', noStandardView: true });
    const mark = s.events.length;
    expect(results(s, 'i', 'Set(1, q=1) Not(Union())')).toEqual([false, row([1])]);
    expect(s.since(mark).map((e) => e.type)).toEqual(['BitsSet']);
  });

  it('ValuesSet carries offsets and shards', () => {
    const s = new MemorySink().createIndex('i', { trackExistence: false }).createField('i', 'n', 'int');
    const mark = s.events.length;
    run(s, 'i', 'Set(1048580, n=-3)');
    const [e] = s.since(mark);
    expect(e).toMatchObject({
      type: 'ValuesSet',
      field: 'n',
      shard: 1,
      columns: Uint32Array.of(4),
      values: BigInt64Array.of(-3n),
    });
  });

  it('rejects int values outside the field bounds', () => {
    const s = fixture();
    expect(error(s, 'i', 'Set(9, n=1001)')).toBe(
      'executing: Set() value 1001 for int field n is out of range: allowed -1000 to 1000',
    );
    expect(error(s, 'i', 'Set(9, n=-1001)')).toBe(
      'executing: Set() value -1001 for int field n is out of range: allowed -1000 to 1000',
    );
  });
});

describe('Clear, ClearRow, Store', () => {
  it('Clear reports exactly what it cleared, time views included', () => {
    const s = fixture();
    expect(results(s, 'i', 'Clear(1, s=10) Clear(1, s=10) Row(s=10)')).toEqual([true, false, row([2, 1048576])]);
    expect(results(s, 'i', 'Clear(1, t=1) Row(t=1, from=2017-01-01T00:00, to=2018-01-01T00:00) Row(t=1)')).toEqual([
      true,
      row([]),
      row([2, 4]),
    ]);
    expect(results(s, 'i', 'Clear(3, n=7) Row(n == 7)')).toEqual([false, row([3])]);
    expect(results(s, 'i', 'Clear(1, b=true) Row(b=true)')).toEqual([true, row([])]);
    // Clear does not touch existence.
    expect(one(s, 'i', 'Not(Union())')).toEqual(row([1, 2, 3, 4, 5, 1048576]));
  });

  it('ClearRow removes the row from every view and shard', () => {
    const s = fixture();
    expect(results(s, 'i', 'ClearRow(s=10) ClearRow(s=10) Row(s=10)')).toEqual([true, false, row([])]);
    expect(results(s, 'i', 'ClearRow(t=1) Row(t=1, from=2017-01-01T00:00, to=2019-01-01T00:00) Row(t=1)')).toEqual([
      true,
      row([]),
      row([]),
    ]);
    expect(error(s, 'i', 'ClearRow(n=1)')).toBe('executing: ClearRow() is not supported on int field types');
  });

  it('ClearRow with explicit shards only clears those', () => {
    const s = fixture();
    expect(results(s, 'i', 'ClearRow(s=10)', { shards: [1] })).toEqual([true]);
    expect(one(s, 'i', 'Row(s=10)')).toEqual(row([1, 2]));
  });

  it('Store replaces a row with the child result and reports changes exactly', () => {
    const s = fixture();
    expect(results(s, 'i', 'Store(Row(s=10), s=20) Row(s=20) Store(Row(s=10), s=20)')).toEqual([
      true,
      row([1, 2, 1048576]),
      false,
    ]);
    expect(results(s, 'i', 'Store(Row(b=false), s=20) Row(s=20)')).toEqual([true, row([2, 3])]);
    expect(results(s, 'i', 'Store(Intersect(Row(s=20), Row(s=11)), s=20) Row(s=20)')).toEqual([true, row([2])]);
    expect(error(s, 'i', 'Store(Row(s=10), m=2)')).toBe("executing: can't Store() on a mutex field");
  });
});

describe('attributes', () => {
  it('SetRowAttrs / SetColumnAttrs merge, null deletes, and columnAttrs reports them', () => {
    const s = fixture();
    expect(
      results(s, 'i', 'SetColumnAttrs(2, name="two", n=2) SetColumnAttrs(1048576, big=true) SetColumnAttrs(2, n=null)'),
    ).toEqual([null, null, null]);
    expect(run(s, 'i', 'Row(s=10)', { columnAttrs: true }).columnAttrs).toEqual([
      { id: 2, attrs: { name: 'two' } },
      { id: 1048576, attrs: { big: true } },
    ]);
    expect(run(s, 'i', 'Row(s=12)', { columnAttrs: true }).columnAttrs).toBeUndefined();
    expect(run(s, 'i', 'Options(Row(s=10), columnAttrs=true)').columnAttrs).toHaveLength(2);
    expect(run(s, 'i', 'Row(s=10)', { columnAttrs: true, excludeColumns: true }).columnAttrs).toBeUndefined();
  });

  it('emits no event for an update that changes nothing', () => {
    const s = fixture();
    run(s, 'i', 'SetRowAttrs(s, 10, a=1)');
    const mark = s.events.length;
    run(s, 'i', 'SetRowAttrs(s, 10, a=1, zz=null)');
    expect(s.since(mark)).toEqual([]);
  });

  it('keyed indexes report column attrs by key', () => {
    const k = keyedFixture();
    run(k, 'k', 'SetColumnAttrs("b", x=1)');
    expect(run(k, 'k', 'Row(kf="x")', { columnAttrs: true }).columnAttrs).toEqual([{ key: 'b', attrs: { x: 1n } }]);
  });
});

describe('requests', () => {
  it('validates every call first: a bad call anywhere applies nothing', () => {
    const s = fixture();
    const mark = s.events.length;
    expect(error(s, 'i', 'Set(100, s=1) Set(101, n=5000)')).toMatch(
      /^executing: Set\(\) value 5000 for int field n is out of range/,
    );
    expect(error(s, 'i', 'Set(100, s=1) Row(nope=1)')).toBe('executing: map reduce: field not found: nope');
    expect(error(s, 'i', 'Set(100, s=1) Set(101, s=1, 2000-13-01T00:00)')).toBe(
      'executing: invalid date: 2000-13-01T00:00',
    );
    expect(s.since(mark)).toEqual([]);
    expect(one(s, 'i', 'Row(s=1)')).toEqual(row([]));
  });

  it('limits the number of writes', () => {
    const s = fixture();
    expect(error(s, 'i', 'Set(1, s=1) Set(2, s=1) Clear(1, s=1)', {}, 2)).toBe('executing: too many write commands');
    expect(run(s, 'i', 'Set(1, s=1) Set(2, s=1) Row(s=1)', {}, 2).results).toHaveLength(3);
  });

  it('assigns new keys in one event per translator, in order of appearance', () => {
    const k = keyedFixture();
    const mark = k.events.length;
    run(k, 'k', 'Set("z", kf="q") Row(kf="never") Set("a", kf="r") Set("y", kf="q") Clear("w", kf="w")');
    const keys = k.since(mark).filter((e) => e.type === 'KeysAssigned');
    expect(keys).toEqual([
      { type: 'KeysAssigned', index: 'k', field: '', firstId: 4, keys: ['z', 'y'] },
      { type: 'KeysAssigned', index: 'k', field: 'kf', firstId: 3, keys: ['q', 'r'] },
    ]);
    expect(one(k, 'k', 'Row(kf="q")')).toEqual({ attrs: {}, columns: [], keys: ['z', 'y'] });
    expect(one(k, 'k', 'Row(kf="x")')).toEqual({ attrs: {}, columns: [], keys: ['a', 'b'] });
    expect(one(k, 'k', 'Row(kf="never")')).toEqual({ attrs: {}, columns: [] });
  });

  it('reads see the writes before them in the same request', () => {
    const s = fixture();
    expect(results(s, 'i', 'Row(s=30) Set(4, s=30) Row(s=30) Clear(4, s=30) Count(Row(s=30))')).toEqual([
      row([]),
      true,
      row([4]),
      true,
      0,
    ]);
  });
});

describe('Store events', () => {
  it('one RowStored without explicit shards, deltas with them', () => {
    const s = fixture();
    let mark = s.events.length;
    run(s, 'i', 'Store(Row(s=10), s=11)');
    expect(s.since(mark).map((e) => e.type)).toEqual(['RowStored']);
    expect(one(s, 'i', 'Row(s=11)')).toEqual(row([1, 2, 1048576]));
    mark = s.events.length;
    expect(results(s, 'i', 'Store(Row(s=12), s=11)', { shards: [0] })).toEqual([true]);
    expect(s.since(mark).map((e) => e.type)).toEqual(['BitsCleared', 'BitsSet']);
    expect(one(s, 'i', 'Row(s=11)')).toEqual(row([3, 1048576]));
  });
});
