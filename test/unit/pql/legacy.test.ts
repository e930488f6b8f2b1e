// Legacy (0.5–0.10) PQL → current PQL: one row per mapping of src/pql/legacy.ts, plus the calls
// that must stay untouched and the errors for legacy calls that cannot be mapped.
import { describe, expect, it } from 'vitest';
import { parse } from '../../../src/pql/index.js';
import { LegacyQueryError, hasLegacyCall, rewriteLegacy, type LegacyNames } from '../../../src/pql/legacy.js';
import { call, cond, ordered, plain, type PlainCall } from './plain.js';

const names: LegacyNames = {
  rowLabel: (frame) => (frame === 'labelled' ? 'user' : 'rowID'),
  columnLabel: () => 'columnID',
  intField: (frame, name) => `${frame}_${name}`,
  inverseEnabled: (frame) => frame === 'inv',
};

const rewrite = (q: string): PlainCall[] => plain(rewriteLegacy(parse(q), names));
const TS1 = '2017-01-01T00:00';
const TS2 = '2017-02-01T00:00';

const cases: [string, PlainCall[]][] = [
  // Bitmap: every row-argument name of 0.5–0.10, and the frame's own row label.
  ['Bitmap(frame=f, row=5)', [call('Row', { f: 5n })]],
  ['Bitmap(frame=f, rowID=5)', [call('Row', { f: 5n })]],
  ['Bitmap(frame=f, id=5)', [call('Row', { f: 5n })]],
  ['Bitmap(frame="f", row=5)', [call('Row', { f: 5n })]],
  ['Bitmap(frame=labelled, user=7)', [call('Row', { labelled: 7n })]],
  ['Bitmap(row=5)', [call('Row', { general: 5n })]],
  // SetBit / ClearBit
  ['SetBit(frame=f, row=1, col=2)', [call('Set', { _col: 2n, f: 1n })]],
  ['SetBit(frame=f, rowID=1, columnID=2)', [call('Set', { _col: 2n, f: 1n })]],
  [`SetBit(frame=f, row=1, col=2, timestamp="${TS1}")`, [call('Set', { _col: 2n, f: 1n, _timestamp: TS1 })]],
  ['SetBit(row=1, col=2)', [call('Set', { _col: 2n, general: 1n })]],
  ['ClearBit(frame=f, row=1, col=2)', [call('Clear', { _col: 2n, f: 1n })]],
  // Int fields
  ['SetFieldValue(frame=f, col=1, x=10)', [call('Set', { _col: 1n, f_x: 10n })]],
  ['SetFieldValue(frame=f, columnID=1, x=-10)', [call('Set', { _col: 1n, f_x: -10n })]],
  ['Range(frame=f, x > 10)', [call('Row', { f_x: cond('>', 10n) })]],
  ['Range(frame=f, x >< [10, 20])', [call('Row', { f_x: cond('between', [10n, 20n]) })]],
  ['Range(frame=f, x == 3)', [call('Row', { f_x: cond('==', 3n) })]],
  ['Sum(Bitmap(frame=g, row=1), frame=f, field=x)', [call('Sum', { field: 'f_x' }, [call('Row', { g: 1n })])]],
  ['Sum(frame=f, field=x)', [call('Sum', { field: 'f_x' })]],
  ['Min(frame=f, field=x)', [call('Min', { field: 'f_x' })]],
  ['Max(Bitmap(frame=f, row=2), frame=f, field=x)', [call('Max', { field: 'f_x' }, [call('Row', { f: 2n })])]],
  // Time ranges
  [`Range(frame=f, row=1, start="${TS1}", end="${TS2}")`, [call('Row', { f: 1n, from: TS1, to: TS2 })]],
  [`Range(frame=f, rowID=1, start=${TS1}, end=${TS2})`, [call('Row', { f: 1n, from: TS1, to: TS2 })]],
  [`Range(row=1, start="${TS1}", end="${TS2}")`, [call('Row', { general: 1n, from: TS1, to: TS2 })]],
  // Inverse view of an inverseEnabled frame
  ['Bitmap(frame=inv, columnID=7)', [call('Row', { inv: 7n, _inverse: true })]],
  ['TopN(frame=inv, n=2, inverse=true)', [call('TopN', { _field: 'inv', _inverse: true, n: 2n })]],
  // TopN
  ['TopN(frame=f, n=5)', [call('TopN', { _field: 'f', n: 5n })]],
  ['TopN(Bitmap(frame=g, row=1), frame=f, n=2)', [call('TopN', { _field: 'f', n: 2n }, [call('Row', { g: 1n })])]],
  [
    'TopN(frame=f, n=3, field=cat, filters=["a", "b"])',
    [call('TopN', { _field: 'f', n: 3n, attrName: 'cat', attrValues: ['a', 'b'] })],
  ],
  [
    'TopN(frame=f, ids=[1, 2], threshold=2, inverse=false)',
    [call('TopN', { _field: 'f', ids: [1n, 2n], threshold: 2n })],
  ],
  ['TopN(n=4)', [call('TopN', { _field: 'general', n: 4n })]],
  // Attributes
  [
    'SetRowAttrs(frame=f, row=1, color="red", big=true)',
    [call('SetRowAttrs', { _field: 'f', _row: 1n, color: 'red', big: true })],
  ],
  ['SetRowAttrs(frame=labelled, user=3, x=1)', [call('SetRowAttrs', { _field: 'labelled', _row: 3n, x: 1n })]],
  ['SetColumnAttrs(col=2, name="b")', [call('SetColumnAttrs', { _col: 2n, name: 'b' })]],
  ['SetColumnAttrs(frame=f, columnID=2, n=1)', [call('SetColumnAttrs', { _col: 2n, n: 1n })]],
  // Nesting: children of current calls are rewritten too.
  [
    'Count(Intersect(Bitmap(frame=a, row=1), Union(Bitmap(frame=b, row=2), Row(c=3))))',
    [
      call('Count', {}, [
        call('Intersect', {}, [
          call('Row', { a: 1n }),
          call('Union', {}, [call('Row', { b: 2n }), call('Row', { c: 3n })]),
        ]),
      ]),
    ],
  ],
  [
    'Difference(Bitmap(frame=a, row=1), Bitmap(frame=a, row=2))',
    [call('Difference', {}, [call('Row', { a: 1n }), call('Row', { a: 2n })])],
  ],
  // Several top-level calls, legacy and current mixed.
  [
    'SetBit(frame=f, row=1, col=2) Bitmap(frame=f, row=1) Row(g=1)',
    [call('Set', { _col: 2n, f: 1n }), call('Row', { f: 1n }), call('Row', { g: 1n })],
  ],
];

describe('legacy PQL rewrite', () => {
  it.each(cases)('%s', (q, expected) => {
    const got = rewrite(q);
    expect(got).toEqual(expected);
    // Argument order matters (positional _col first, _timestamp last).
    expect(ordered(got)).toBe(ordered(expected));
  });

  it('keeps current queries untouched (same object)', () => {
    for (const q of [
      'Row(f=1)',
      'Set(1, f=2)',
      'Set(1, frame=2)',
      `Range(f=1, ${TS1}, ${TS2})`,
      `Range(frame=1, ${TS1}, ${TS2})`,
      'Range(x > 10)',
      'TopN(f, n=5)',
      'Sum(Row(frame=1), field=x)',
      'SetRowAttrs(f, 1, x=1)',
      'SetColumnAttrs(1, x=1)',
      'Count(Row(f=1))',
    ]) {
      const parsed = parse(q);
      expect(hasLegacyCall(parsed)).toBe(false);
      expect(rewriteLegacy(parsed, names)).toBe(parsed);
    }
  });

  it('detects legacy calls anywhere in the tree', () => {
    expect(hasLegacyCall(parse('Count(Union(Row(f=1), Bitmap(frame=f, row=2)))'))).toBe(true);
    expect(hasLegacyCall(parse('Row(f=1) SetBit(frame=f, row=1, col=1)'))).toBe(true);
  });

  it('keeps call positions for error messages', () => {
    const q = rewriteLegacy(parse('Row(f=1) Bitmap(frame=f, row=1)'), names);
    expect(q.calls[1].pos).toBe(9);
  });

  it.each([
    ['Bitmap(frame=f)', /requires a row argument/],
    ['Bitmap(frame=f, col=1)', /frame f has no inverse view/],
    ['Bitmap(frame=f, row=1, rowID=1)', /several row arguments: row, rowID/],
    ['Bitmap(frame=f, row=1, other=2)', /unknown argument other/],
    ['Bitmap(frame=1, row=1)', /frame must be a frame name/],
    ['SetBit(frame=f, col=1)', /SetBit\(\) requires a row argument/],
    ['SetBit(frame=f, row=1)', /SetBit\(\) requires a column argument/],
    ['ClearBit(frame=f, row=1, col=2, timestamp="2017-01-01T00:00")', /unknown argument timestamp/],
    ['SetFieldValue(frame=f, col=1, x=1, y=2)', /exactly one field=value/],
    ['SetFieldValue(frame=f, col=1, x="a")', /must be an integer/],
    ['SetFieldValue(frame=f, x=1)', /requires a column argument/],
    ['Range(frame=f, x=1)', /exactly one field condition/],
    ['TopN(frame=f, inverse=true)', /frame f has no inverse view/],
    ['SetRowAttrs(frame=f, x=1)', /requires a row argument/],
    ['SetColumnAttrs(x=1)', /requires a column argument/],
  ])('%s → error', (q, message) => {
    expect(() => rewriteLegacy(parse(q), names)).toThrow(LegacyQueryError);
    expect(() => rewriteLegacy(parse(q), names)).toThrow(message);
  });
});
