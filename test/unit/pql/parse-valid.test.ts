// Valid PQL → expected AST, one row per form of docs/API.md §3.1, §3.4 and §6.4 calls.
import { describe, expect, it } from 'vitest';
import { parse } from '../../../src/pql/index.js';
import { call, cond, f, ordered, plain, val, type PlainCall } from './plain.js';

const MAX = 9223372036854775807n;
const MIN = -9223372036854775808n;
const TS1 = '2017-01-01T00:00';
const TS2 = '2017-02-01T00:00';

type Row = readonly [query: string, expected: PlainCall[]];

const row1 = (args: Parameters<typeof call>[1]): PlainCall[] => [call('Row', args)];

const cases: Record<string, Row[]> = {
  'top level': [
    ['', []],
    [' \t\n\r\n ', []],
    ['Row(f=1)', row1({ f: 1n })],
    [
      'Set(1,f=1)Set(2,f=1)Row(f=1)',
      [call('Set', { _col: 1n, f: 1n }), call('Set', { _col: 2n, f: 1n }), call('Row', { f: 1n })],
    ],
    ['  Row(f=1)  Row(f=2)\n', [call('Row', { f: 1n }), call('Row', { f: 2n })]],
    ['Row()', [call('Row')]],
    ['Row( )', [call('Row')]],
    ['Row(,)', [call('Row')]],
    ['Row(f=1,)', row1({ f: 1n })],
    ['Row(f=1 , )', row1({ f: 1n })],
    ['Union(Row(f=1),)', [call('Union', {}, [call('Row', { f: 1n })])]],
    ['Frobnicate(x=1)', [call('Frobnicate', { x: 1n })]],
    ['row(f=1)', [call('row', { f: 1n })]],
    ['A1b2(c=3)', [call('A1b2', { c: 3n })]],
  ],
  'CRLF and whitespace': [
    ['Set(1, f=1)\r\nSet(2, f=1)\r\n', [call('Set', { _col: 1n, f: 1n }), call('Set', { _col: 2n, f: 1n })]],
    [
      'Union(\r\n  Row(f=1),\r\n  Row(f=2)\r\n)\r\n',
      [call('Union', {}, [call('Row', { f: 1n }), call('Row', { f: 2n })])],
    ],
    ['Row(\tf\t=\t1\t)', row1({ f: 1n })],
    ['Row(f=[ 1 ,\r\n 2 ])', row1({ f: [1n, 2n] })],
    ['Row( 1 <\n f <= 5 )', row1({ f: cond('between', [2n, 5n]) })],
  ],
  Set: [
    ['Set(10, f=1)', [call('Set', { _col: 10n, f: 1n })]],
    ['Set(0, f=0)', [call('Set', { _col: 0n, f: 0n })]],
    [`Set(${MAX}, f=${MAX})`, [call('Set', { _col: MAX, f: MAX })]],
    ["Set('key', f=1)", [call('Set', { _col: 'key', f: 1n })]],
    ['Set("k\\"x", f="r")', [call('Set', { _col: 'k"x', f: 'r' })]],
    ['Set(1, f=red)', [call('Set', { _col: 1n, f: 'red' })]],
    ['Set(1, f=true)', [call('Set', { _col: 1n, f: true })]],
    ['Set(1, f=-5)', [call('Set', { _col: 1n, f: -5n })]],
    ['Set(1, f=1, g=2)', [call('Set', { _col: 1n, f: 1n, g: 2n })]],
    [`Set(1, f=1, ${TS1})`, [call('Set', { _col: 1n, f: 1n, _timestamp: TS1 })]],
    [`Set(1, f=1, '${TS1}')`, [call('Set', { _col: 1n, f: 1n, _timestamp: TS1 })]],
    [`Set(1, f=1, "${TS1}")`, [call('Set', { _col: 1n, f: 1n, _timestamp: TS1 })]],
    [`Set( 1 , f = 1 , ${TS1} )`, [call('Set', { _col: 1n, f: 1n, _timestamp: TS1 })]],
    [`Set(1, t=${TS1})`, [call('Set', { _col: 1n, t: TS1 })]],
    ['Set(1, f=1, 1 < g < 5)', [call('Set', { _col: 1n, f: 1n, g: cond('between', [2n, 4n]) })]],
    // Not a positional form (first token is no ID): a generic call the executor will judge.
    ['Set(f=1)', [call('Set', { f: 1n })]],
  ],
  'SetRowAttrs / SetColumnAttrs / Clear / ClearRow / Store': [
    [
      'SetRowAttrs(f, 10, color="blue", n=5, x=1.5, y=true, z=null)',
      [call('SetRowAttrs', { _field: 'f', _row: 10n, color: 'blue', n: 5n, x: f(1.5), y: true, z: null })],
    ],
    ["SetRowAttrs(f, 'key', a=1)", [call('SetRowAttrs', { _field: 'f', _row: 'key', a: 1n })]],
    ['SetRowAttrs( my-field_2 , "k" , a = 1 )', [call('SetRowAttrs', { _field: 'my-field_2', _row: 'k', a: 1n })]],
    ['SetColumnAttrs(7, name="x")', [call('SetColumnAttrs', { _col: 7n, name: 'x' })]],
    ['SetColumnAttrs("k", a=1, b=null)', [call('SetColumnAttrs', { _col: 'k', a: 1n, b: null })]],
    ['Clear(5, f=1)', [call('Clear', { _col: 5n, f: 1n })]],
    ["Clear('c', f='r')", [call('Clear', { _col: 'c', f: 'r' })]],
    ['ClearRow(f=1)', [call('ClearRow', { f: 1n })]],
    ['ClearRow(f="key")', [call('ClearRow', { f: 'key' })]],
    ['Store(Row(f=1), g=2)', [call('Store', { g: 2n }, [call('Row', { f: 1n })])]],
    [
      'Store(Intersect(Row(f=1), Row(g=2)), h=3)',
      [call('Store', { h: 3n }, [call('Intersect', {}, [call('Row', { f: 1n }), call('Row', { g: 2n })])])],
    ],
  ],
  'TopN / Rows / GroupBy / Options': [
    ['TopN(f)', [call('TopN', { _field: 'f' })]],
    ['TopN(f, n=5)', [call('TopN', { _field: 'f', n: 5n })]],
    ['TopN(f,)', [call('TopN', { _field: 'f' })]],
    [
      'TopN(f, Row(g=1), n=5, ids=[1,2,3], threshold=2, tanimotoThreshold=70)',
      [
        call('TopN', { _field: 'f', n: 5n, ids: [1n, 2n, 3n], threshold: 2n, tanimotoThreshold: 70n }, [
          call('Row', { g: 1n }),
        ]),
      ],
    ],
    [
      'TopN(f, attrName="category", attrValues=["x", 1, true])',
      [call('TopN', { _field: 'f', attrName: 'category', attrValues: ['x', 1n, true] })],
    ],
    ['Rows(f)', [call('Rows', { _field: 'f' })]],
    ['Rows( f )', [call('Rows', { _field: 'f' })]],
    ['Rows(f, previous=5, limit=10)', [call('Rows', { _field: 'f', previous: 5n, limit: 10n })]],
    ['Rows(f, column="c", previous=\'k\')', [call('Rows', { _field: 'f', column: 'c', previous: 'k' })]],
    [`Rows(f, from=${TS1}, to="${TS2}")`, [call('Rows', { _field: 'f', from: TS1, to: TS2 })]],
    ['Rows(field=f, limit=2)', [call('Rows', { field: 'f', limit: 2n })]],
    [
      'GroupBy(Rows(a), Rows(b, previous=1), filter=Row(c=1), limit=10)',
      [
        call('GroupBy', { filter: val(call('Row', { c: 1n })), limit: 10n }, [
          call('Rows', { _field: 'a' }),
          call('Rows', { _field: 'b', previous: 1n }),
        ]),
      ],
    ],
    [
      'Options(Row(f=1), columnAttrs=true, excludeColumns=false, excludeRowAttrs=true, shards=[0, 2])',
      [
        call('Options', { columnAttrs: true, excludeColumns: false, excludeRowAttrs: true, shards: [0n, 2n] }, [
          call('Row', { f: 1n }),
        ]),
      ],
    ],
  ],
  Range: [
    [`Range(f=1, ${TS1}, ${TS2})`, [call('Range', { f: 1n, from: TS1, to: TS2 })]],
    [`Range(f=1, "${TS1}", '${TS2}')`, [call('Range', { f: 1n, from: TS1, to: TS2 })]],
    [`Range(f=1, from=${TS1}, to=${TS2})`, [call('Range', { f: 1n, from: TS1, to: TS2 })]],
    [`Range(f=1, from=${TS1}, ${TS2})`, [call('Range', { f: 1n, from: TS1, to: TS2 })]],
    [`Range(f=1, ${TS1}, to=${TS2})`, [call('Range', { f: 1n, from: TS1, to: TS2 })]],
    [`Range(f = key , ${TS1} , ${TS2} )`, [call('Range', { f: 'key', from: TS1, to: TS2 })]],
    [`Range(_row=1, ${TS1}, ${TS2})`, [call('Range', { _row: 1n, from: TS1, to: TS2 })]],
    ['Range(f > 5)', [call('Range', { f: cond('>', 5n) })]],
    ['Range(1 < f < 5)', [call('Range', { f: cond('between', [2n, 4n]) })]],
    ['Range(f=1, from=1483228800, to=1485907200)', [call('Range', { f: 1n, from: 1483228800n, to: 1485907200n })]],
  ],
  'legacy v0.x (all named)': [
    ['Bitmap(frame=f, row=5)', [call('Bitmap', { frame: 'f', row: 5n })]],
    ['Bitmap(frame="f", rowID=5)', [call('Bitmap', { frame: 'f', rowID: 5n })]],
    ['Bitmap(frame=f, col=7)', [call('Bitmap', { frame: 'f', col: 7n })]],
    [
      `SetBit(frame=f, rowID=1, columnID=2, timestamp="${TS1}")`,
      [call('SetBit', { frame: 'f', rowID: 1n, columnID: 2n, timestamp: TS1 })],
    ],
    ['SetBit(frame=f, row=1, col=2)', [call('SetBit', { frame: 'f', row: 1n, col: 2n })]],
    ['ClearBit(frame=f, row=1, col=2)', [call('ClearBit', { frame: 'f', row: 1n, col: 2n })]],
    ['SetRowAttrs(frame=f, rowID=1, k="v")', [call('SetRowAttrs', { frame: 'f', rowID: 1n, k: 'v' })]],
    ['SetColumnAttrs(columnID=2, k=1)', [call('SetColumnAttrs', { columnID: 2n, k: 1n })]],
    ['SetColumnAttrs(col=2, k=1)', [call('SetColumnAttrs', { col: 2n, k: 1n })]],
    [
      `Range(frame=f, rowID=1, start="${TS1}", end="${TS2}")`,
      [call('Range', { frame: 'f', rowID: 1n, start: TS1, end: TS2 })],
    ],
    [
      'SetFieldValue(frame=f, columnID=1, fieldName=10)',
      [call('SetFieldValue', { frame: 'f', columnID: 1n, fieldName: 10n })],
    ],
    ['Range(frame=f, fieldName > 10)', [call('Range', { frame: 'f', fieldName: cond('>', 10n) })]],
    ['Range(frame=f, fieldName >< [10,20])', [call('Range', { frame: 'f', fieldName: cond('between', [10n, 20n]) })]],
    [
      'Sum(Bitmap(frame=f, rowID=1), frame=f, field=x)',
      [call('Sum', { frame: 'f', field: 'x' }, [call('Bitmap', { frame: 'f', rowID: 1n })])],
    ],
    [
      'TopN(Bitmap(frame=f, rowID=1), frame=g, n=3, inverse=false)',
      [call('TopN', { frame: 'g', n: 3n, inverse: false }, [call('Bitmap', { frame: 'f', rowID: 1n })])],
    ],
    ['TopN(frame=f, n=2, filters=["a", "b"])', [call('TopN', { frame: 'f', n: 2n, filters: ['a', 'b'] })]],
    ['Rows(field=f)', [call('Rows', { field: 'f' })]],
  ],
  nesting: [
    [
      'Count(Intersect(Union(Row(a=1), Row(a=2)), Not(Row(b=3))))',
      [
        call('Count', {}, [
          call('Intersect', {}, [
            call('Union', {}, [call('Row', { a: 1n }), call('Row', { a: 2n })]),
            call('Not', {}, [call('Row', { b: 3n })]),
          ]),
        ]),
      ],
    ],
    ['Shift(Row(f=1), n=2)', [call('Shift', { n: 2n }, [call('Row', { f: 1n })])]],
    ['Count(Set(1, f=1))', [call('Count', {}, [call('Set', { _col: 1n, f: 1n })])]],
    ['X(v=[Row(f=1), 2])', [call('X', { v: [val(call('Row', { f: 1n })), 2n] })]],
    ['X(v=TopN(f, n=1))', [call('X', { v: val(call('TopN', { _field: 'f', n: 1n })) })]],
  ],
  integers: [
    [`Row(f=${MAX})`, row1({ f: MAX })],
    [`Row(f=${MIN})`, row1({ f: MIN })],
    ['Row(f=007)', row1({ f: 7n })],
    ['Row(f=-0)', row1({ f: 0n })],
    ['Row(f=00000000000000000000000001)', row1({ f: 1n })],
  ],
  floats: [
    ['Row(f=1.5)', row1({ f: f(1.5) })],
    ['Row(f=-.5)', row1({ f: f(-0.5) })],
    ['Row(f=.25)', row1({ f: f(0.25) })],
    ['Row(f=1.)', row1({ f: f(1) })],
    ['Row(f=-2.0)', row1({ f: f(-2) })],
    ['Row(f=0.1)', row1({ f: f(0.1) })],
  ],
  'bare words, keywords, timestamps': [
    ['Row(f=abc)', row1({ f: 'abc' })],
    ['Row(f=r-2_x:y)', row1({ f: 'r-2_x:y' })],
    ['Row(f=-x)', row1({ f: '-x' })],
    ['Row(f=_x)', row1({ f: '_x' })],
    ['Row(f=:a)', row1({ f: ':a' })],
    ['Row(f=-)', row1({ f: '-' })],
    ['Row(f=true)', row1({ f: true })],
    ['Row(f=false )', row1({ f: false })],
    ['Row(f=null)', row1({ f: null })],
    ['Row(f=truex)', row1({ f: 'truex' })],
    ['Row(f=null_1)', row1({ f: 'null_1' })],
    ['Row(f=[true])', row1({ f: [true] })],
    ['Row(f=[null, false])', row1({ f: [null, false] })],
    [`Row(f=1, from=${TS1}, to="${TS2}")`, row1({ f: 1n, from: TS1, to: TS2 })],
    ['Row(f=1, from=1483228800)', row1({ f: 1n, from: 1483228800n })],
    ['Row(f=9999-19-39T99:99)', row1({ f: '9999-19-39T99:99' })],
  ],
  'quoted strings': [
    ['Row(f="")', row1({ f: '' })],
    ["Row(f='')", row1({ f: '' })],
    ['Row(f="a\\"b\\\\c")', row1({ f: 'a"b\\c' })],
    ['Row(f="\\n\\t\\r\\a\\b\\f\\v")', row1({ f: '\n\t\r\x07\b\f\v' })],
    ['Row(f="\\u00e9\\U0001F600")', row1({ f: 'é😀' })],
    ['Row(f="\\x41\\101")', row1({ f: 'AA' })],
    ['Row(f="\\xc3\\xa9")', row1({ f: 'é' })],
    ['Row(f="héllo 世界 😀")', row1({ f: 'héllo 世界 😀' })],
    ['Row(f="a,b)c(d=e")', row1({ f: 'a,b)c(d=e' })],
    ['Row(f="line1\nline2")', row1({ f: 'line1\nline2' })],
    ["Row(f='a\\nb')", row1({ f: 'a\\nb' })],
    ["Row(f='it\\'s')", row1({ f: "it\\'s" })],
    ['Row(f=\'say "hi"\')', row1({ f: 'say "hi"' })],
    ['Row(f="it\'s")', row1({ f: "it's" })],
  ],
  lists: [
    ['Row(f=[1, 2])', row1({ f: [1n, 2n] })],
    ['Row(f=["a","b"])', row1({ f: ['a', 'b'] })],
    ['Row(f=[ 1 , -2.5 , x , "y" , null ])', row1({ f: [1n, f(-2.5), 'x', 'y', null] })],
    ['Row(f=[])', row1({ f: [] })],
    [`Row(f=[${TS1}])`, row1({ f: [TS1] })],
  ],
  conditions: [
    ['Row(f == 1)', row1({ f: cond('==', 1n) })],
    ['Row(f==-1)', row1({ f: cond('==', -1n) })],
    ['Row(f != null)', row1({ f: cond('!=', null) })],
    ['Row(f < 5)', row1({ f: cond('<', 5n) })],
    ['Row(f <= 5)', row1({ f: cond('<=', 5n) })],
    ['Row(f > 5)', row1({ f: cond('>', 5n) })],
    ['Row(f >= -5)', row1({ f: cond('>=', -5n) })],
    ['Row(f>1.5)', row1({ f: cond('>', f(1.5)) })],
    ['Row(f >< [10, 20])', row1({ f: cond('between', [10n, 20n]) })],
    ['Row(f >< 5)', row1({ f: cond('between', 5n) })],
    ['Row(0 < f < 10)', row1({ f: cond('between', [1n, 9n]) })],
    ['Row(0 <= f <= 10)', row1({ f: cond('between', [0n, 10n]) })],
    ['Row(-10 < f <= -1)', row1({ f: cond('between', [-9n, -1n]) })],
    ['Row(1<=f<5)', row1({ f: cond('between', [1n, 4n]) })],
    [`Row(${MIN} <= f <= ${MAX})`, row1({ f: cond('between', [MIN, MAX]) })],
    ['Row(_row == 3)', row1({ _row: cond('==', 3n) })],
  ],
  'reserved argument names': [
    ['Row(_row=1, _col=2)', row1({ _row: 1n, _col: 2n })],
    [
      'Foo(_start=1, _end=2, _timestamp=3, _field=x)',
      [call('Foo', { _start: 1n, _end: 2n, _timestamp: 3n, _field: 'x' })],
    ],
  ],
};

describe('parse: valid queries', () => {
  for (const [group, rows] of Object.entries(cases)) {
    describe(group, () => {
      it.each(rows)('%j', (query, expected) => {
        const got = plain(parse(query));
        expect(got).toEqual(expected);
        // toEqual ignores key order; source order of arguments is part of the contract.
        expect(ordered(got)).toBe(ordered(expected));
      });
    });
  }
});

describe('parse: positions', () => {
  it('Call.pos is the offset of each call name, nested and multi-line', () => {
    const text = 'Count(\n  Union(Row(f=1),\r\n Row(g=2)))  Set(1, f=Row(x=1))';
    const q = parse(text);
    const [count, set] = q.calls;
    expect(count.pos).toBe(0);
    const union = count.children[0];
    expect(union.pos).toBe(text.indexOf('Union'));
    expect(union.children.map((c) => c.pos)).toEqual([text.indexOf('Row(f'), text.indexOf('Row(g')]);
    expect(set.pos).toBe(text.indexOf('Set'));
    const v = set.args.get('f');
    expect(v?.kind === 'call' ? v.call.pos : -1).toBe(text.indexOf('Row(x'));
  });

  it('child calls and key args are separated into children and args', () => {
    const q = parse('Sum(Row(f=1), field=x)');
    expect(q.calls[0].children).toHaveLength(1);
    expect([...q.calls[0].args.keys()]).toEqual(['field']);
  });

  it('int values are bigint and floats are number', () => {
    const v = parse('Row(a=1, b=1.0)').calls[0].args;
    expect(v.get('a')).toEqual({ kind: 'int', value: 1n });
    expect(v.get('b')).toEqual({ kind: 'float', value: 1 });
  });
});
