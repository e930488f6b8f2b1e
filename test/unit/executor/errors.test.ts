import { describe, expect, it } from 'vitest';
import { fixture, keyedFixture } from './fixture.js';
import { error } from './harness.js';

describe('error catalogue (docs/API.md §3.5; all 400)', () => {
  const s = fixture();
  const cases: [string, string][] = [
    ['Foo()', 'executing: map reduce: unknown call: Foo'],
    ['SetBit(frame=f, row=1, col=1)', 'executing: map reduce: unknown call: SetBit'],
    ['Count()', 'executing: Count() requires an input bitmap'],
    ['Count(Row(s=1), Row(s=2))', 'executing: Count() only accepts a single bitmap input'],
    [
      'Count(TopN(s))',
      'executing: TopN() does not return a bitmap and cannot be the input of Count(): expected a bitmap call (Row, Range, Union, Intersect, Difference, Xor, Not or Shift)',
    ],
    ['Count(Row(nope=1))', 'executing: field not found: nope'],
    ['Row(nope=1)', 'executing: map reduce: field not found: nope'],
    ['Row()', 'executing: map reduce: Row() argument required: field'],
    ['Row(s=-1)', "executing: map reduce: Row() error with arg for row: value for 's' must be positive, but got -1"],
    [
      'Row(s=1.5)',
      'executing: map reduce: Row() error with arg for row: could not convert 1.5 of type float64 to uint64 in Call.UintArg',
    ],
    ['Row(n == null)', 'executing: map reduce: Row(): conditions only support integer values'],
    ['Row(n > 1.5)', 'executing: map reduce: Row(): conditions only support integer values'],
    ['Row(n > 1, s=2)', 'executing: map reduce: Row(): too many arguments'],
    ['Row(s > 1)', 'executing: map reduce: bsigroup not found'],
    ['Row(t=1, from="2017-13-01T00:00")', 'executing: map reduce: parsing from time: invalid date: 2017-13-01T00:00'],
    ['Intersect()', 'executing: map reduce: empty Intersect query is currently not supported'],
    ['Difference()', 'executing: map reduce: empty Difference query is currently not supported'],
    ['Not()', 'executing: map reduce: Not() requires an input row'],
    ['Shift(Row(s=1), n=-1)', 'executing: map reduce: cannot shift by negative values'],
    ['Shift(n=1)', 'executing: map reduce: Shift() requires an input row'],
    ['Rows()', 'executing: Rows() field required'],
    ['Rows(nope)', 'executing: field not found: nope'],
    ['GroupBy()', 'executing: need at least one child call'],
    ['GroupBy(Row(s=1))', "executing: 'Row' is not a valid child query for GroupBy, must be 'Rows'"],
    ['GroupBy(Rows(s), Rows(b), previous=[1])', 'executing: mismatched lengths for previous: 1 and children: 2'],
    ['TopN(g)', 'executing: field "g" not found'],
    ['TopN(n)', 'executing: finding top results: cannot compute TopN() on integer field: "n"'],
    ['TopN(t)', 'executing: finding top results: cannot compute TopN(), field has no cache: "t"'],
    ['TopN(b)', 'executing: finding top results: cannot compute TopN(), field has no cache: "b"'],
    ['TopN(s, tanimotoThreshold=101)', 'executing: finding top results: Tanimoto Threshold is from 1 to 100 only'],
    ['TopN(s, n=-1)', "executing: executeTopN: value for 'n' must be positive, but got -1"],
    ['TopN(s, Row(s=1), Row(s=2))', 'executing: finding top results: TopN() can only have one input bitmap'],
    ['Sum()', 'executing: Sum(): field required'],
    ['Sum(field=zz)', 'executing: field not found: zz'],
    ['Sum(field=s)', 'executing: Sum(): field "s" is not an int field'],
    ['Max(Row(s=1), Row(s=2), field=n)', 'executing: Max() only accepts a single bitmap input'],
    ['MinRow(field=n)', 'executing: MinRow() is not supported on int field types'],
    ['Options()', 'executing: Options() requires exactly one child call'],
    ['Options(Row(s=1), excludeRowAttrs=1)', 'executing: Query(): excludeRowAttrs must be a bool'],
    ['Options(Row(s=1), shards=[-1])', 'executing: Query(): shards must be a list of unsigned integers'],
    ['Set(1, nope=1)', 'executing: field not found: nope'],
    ['Set(1, s=-1)', "executing: reading Set() row: value for 's' must be positive, but got -1"],
    ['Set(1, n="x")', 'executing: reading Set() row: could not convert x of type string to int64 in Call.IntArg'],
    ['Set(1, n=2000)', 'executing: Set() value 2000 for int field n is out of range: allowed -1000 to 1000'],
    ['Set(1, b=1)', 'executing: getting bool key: invalid bool argument type: int64'],
    ['Set("a", s=1)', "executing: string 'col' value not allowed unless index 'keys' option enabled"],
    ['Set(1, s="a")', "executing: string 'row' value not allowed unless field 'keys' option enabled"],
    ['Set(1, t=1, 2000-13-01T00:00)', 'executing: invalid date: 2000-13-01T00:00'],
    ['Clear(1, nope=1)', 'executing: field not found: nope'],
    ['ClearRow(n=1)', 'executing: ClearRow() is not supported on int field types'],
    ['Store(Row(s=1), t=1)', "executing: can't Store() on a time field"],
    ['SetRowAttrs(nope, 1, a=1)', 'executing: field not found: nope'],
    [
      'SetRowAttrs(s, 1, a=[1])',
      "executing: invalid value for attribute 'a': attribute values must be strings, integers, floats, booleans or null",
    ],
    // Key errors come from translating the whole query first, as in Pilosa.
    ['Row(nope=1) Row(s="x")', "executing: string 'row' value not allowed unless field 'keys' option enabled"],
  ];
  it.each(cases)('%s', (pql, want) => expect(error(s, 'i', pql)).toBe(want));

  it('keyed index and field', () => {
    const k = keyedFixture();
    expect(error(k, 'k', 'Set(1, kf="x")')).toBe(
      "executing: column value must be a string when index 'keys' option enabled",
    );
    expect(error(k, 'k', 'Set("a", kf=1)')).toBe(
      "executing: row value must be a string when field 'keys' option enabled",
    );
    expect(error(k, 'k', 'Rows(kf, previous=1)')).toBe(
      "executing: row value must be a string when field 'keys' option enabled",
    );
  });

  it('missing index', () => {
    expect(error(s, 'nope', 'Row(s=1)')).toBe('executing: index not found');
  });
});
