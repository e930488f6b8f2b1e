import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ZERO_TIME,
  isValidTimeQuantum,
  parseTimestamp,
  timeFromUnixSeconds,
  viewPeriod,
  viewsByTimeRange,
  viewsForTimestamp,
} from '../../../src/domain/time-quantum.js';

const ts = (s: string): number => {
  const t = parseTimestamp(s);
  if (t === undefined) throw new Error(`bad timestamp ${s}`);
  return t;
};
const range = (a: string, b: string, q: string): string[] =>
  viewsByTimeRange(ts(a), ts(b), q).map((v) => v.slice('standard_'.length));

describe('time quantum', () => {
  it('validates quanta like Pilosa', () => {
    for (const q of ['Y', 'YM', 'YMD', 'YMDH', 'M', 'MD', 'MDH', 'D', 'DH', 'H', ''])
      expect(isValidTimeQuantum(q)).toBe(true);
    for (const q of ['YD', 'MY', 'HD', 'YMDHM', 'y', 'X', 'YH']) expect(isValidTimeQuantum(q)).toBe(false);
  });

  it('parses timestamps as UTC and rejects impossible dates', () => {
    expect(ts('2017-01-02T03:04')).toBe(Date.UTC(2017, 0, 2, 3, 4));
    expect(ts('2000-02-29T00:00')).toBe(Date.UTC(2000, 1, 29));
    for (const bad of [
      '2000-13-01T00:00',
      '2001-02-29T00:00',
      '2000-01-32T00:00',
      '2000-01-01T24:00',
      '2000-01-01T00:60',
      '2000-1-01T00:00',
      '2000-01-01',
      'x',
    ]) {
      expect(parseTimestamp(bad)).toBeUndefined();
    }
    expect(new Date(ts('0001-01-01T00:00')).getUTCFullYear()).toBe(1);
    expect(ZERO_TIME).toBe(ts('0001-01-01T00:00'));
    expect(timeFromUnixSeconds(86400n)).toBe(86_400_000);
  });

  it('names the views of a timestamp, one per unit', () => {
    expect(viewsForTimestamp(ts('2017-01-02T03:04'), 'YMDH')).toEqual([
      'standard_2017',
      'standard_201701',
      'standard_20170102',
      'standard_2017010203',
    ]);
    expect(viewsForTimestamp(ts('0099-11-30T23:00'), 'MD')).toEqual(['standard_009911', 'standard_00991130']);
    expect(viewPeriod('standard_201702')).toEqual({
      unit: 'M',
      start: Date.UTC(2017, 1, 1),
      end: Date.UTC(2017, 2, 1),
    });
    expect(viewPeriod('standard')).toBeUndefined();
    expect(viewPeriod('bsig_x')).toBeUndefined();
  });

  it('covers ranges with the fewest views (docs/API.md §3.6 and Pilosa time_test.go)', () => {
    expect(range('1999-12-31T00:00', '2002-01-01T03:00', 'Y')).toEqual(['1999', '2000', '2001']);
    expect(range('2000-01-01T00:00', '2002-01-01T00:00', 'Y')).toEqual(['2000', '2001']);
    expect(range('2000-11-01T00:00', '2003-03-01T00:00', 'YM')).toEqual([
      '200011',
      '200012',
      '2001',
      '2002',
      '200301',
      '200302',
    ]);
    expect(range('2001-10-31T00:00', '2002-01-01T00:00', 'YM')).toEqual(['200110', '200111', '200112']);
    expect(range('2000-11-28T00:00', '2003-03-02T00:00', 'YMD')).toEqual([
      '20001128',
      '20001129',
      '20001130',
      '200012',
      '2001',
      '2002',
      '200301',
      '200302',
      '20030301',
    ]);
    expect(range('2000-11-28T22:00', '2002-03-01T03:00', 'YMDH')).toEqual([
      '2000112822',
      '2000112823',
      '20001129',
      '20001130',
      '200012',
      '2001',
      '200201',
      '200202',
      '2002030100',
      '2002030101',
      '2002030102',
    ]);
    expect(range('2000-11-28T00:00', '2000-12-02T00:00', 'D')).toEqual([
      '20001128',
      '20001129',
      '20001130',
      '20001201',
    ]);
    expect(range('2000-11-28T22:00', '2000-12-02T02:00', 'DH')).toEqual([
      '2000112822',
      '2000112823',
      '20001129',
      '20001130',
      '20001201',
      '2000120200',
      '2000120201',
    ]);
    // YMD drops a partial final day; an empty or inverted range has no views.
    expect(range('2000-01-01T00:00', '2000-01-05T12:00', 'YMD')).toEqual([
      '20000101',
      '20000102',
      '20000103',
      '20000104',
    ]);
    expect(range('2000-01-01T00:00', '2000-01-01T00:00', 'YMDH')).toEqual([]);
    expect(range('2001-01-01T00:00', '2000-01-01T00:00', 'Y')).toEqual([]);
  });

  it('a window gives exactly the unwindowed views that overlap it', () => {
    const time = fc.integer({ min: Date.UTC(1995, 0, 1), max: Date.UTC(2005, 0, 1) }).map((t) => t - (t % 60_000));
    const quantum = fc.constantFrom('Y', 'YM', 'YMD', 'YMDH', 'M', 'MD', 'MDH', 'D', 'DH', 'H');
    fc.assert(
      fc.property(time, time, quantum, time, fc.integer({ min: 1, max: 3 * 365 * 24 }), (a, b, q, wFrom, wHours) => {
        const [start, end] = a <= b ? [a, b] : [b, a];
        // Short ranges for hour-only quanta keep the unwindowed walk cheap.
        const e = q.startsWith('D') || q === 'H' || q === 'MDH' ? Math.min(end, start + 200 * 86_400_000) : end;
        const within = { from: wFrom, to: wFrom + wHours * 3_600_000 };
        const overlaps = (v: string): boolean => {
          const p = viewPeriod(v);
          return p !== undefined && p.start < within.to && p.end > within.from;
        };
        expect(viewsByTimeRange(start, e, q, within)).toEqual(viewsByTimeRange(start, e, q).filter(overlaps));
      }),
      { numRuns: 300 },
    );
  });

  it('a list of spans gives exactly the unwindowed views that overlap one of them', () => {
    const time = fc.integer({ min: Date.UTC(2015, 0, 1), max: Date.UTC(2019, 0, 1) }).map((t) => t - (t % 60_000));
    const quantum = fc.constantFrom('Y', 'YM', 'YMD', 'YMDH', 'M', 'MD', 'MDH', 'D', 'DH', 'H');
    const span = fc
      .tuple(time, fc.integer({ min: 1, max: 24 * 40 }))
      .map(([from, h]) => ({ from, to: from + h * 3_600_000 }));
    fc.assert(
      fc.property(time, time, quantum, fc.array(span, { maxLength: 5 }), (a, b, q, spans) => {
        const [start, end] = a <= b ? [a, b] : [b, a];
        const e = q.startsWith('D') || q === 'H' || q === 'MDH' ? Math.min(end, start + 200 * 86_400_000) : end;
        const overlaps = (v: string): boolean => {
          const p = viewPeriod(v);
          return p !== undefined && spans.some((s) => p.start < s.to && p.end > s.from);
        };
        expect(viewsByTimeRange(start, e, q, spans)).toEqual(viewsByTimeRange(start, e, q).filter(overlaps));
      }),
      { numRuns: 300 },
    );
  });

  it('a range from year 1 to the present skips the empty centuries quickly', () => {
    const within = { from: ts('2017-03-01T00:00'), to: ts('2017-03-01T02:00') };
    const started = performance.now();
    const views = viewsByTimeRange(ZERO_TIME, ts('2030-01-01T00:00'), 'H', within);
    expect(views).toEqual(['standard_2017030100', 'standard_2017030101']);
    expect(viewsByTimeRange(ZERO_TIME, ts('2030-01-01T00:00'), 'YMDH', within)).toEqual(['standard_2017']);
    // Hourly data a decade apart: only the hours around the data are visited.
    const spans = [
      { from: ts('2001-06-01T10:00'), to: ts('2001-06-01T11:00') },
      { from: ts('2011-06-01T10:00'), to: ts('2011-06-01T11:00') },
    ];
    expect(viewsByTimeRange(ZERO_TIME, ts('2030-01-01T00:00'), 'H', spans)).toEqual([
      'standard_2001060110',
      'standard_2011060110',
    ]);
    expect(performance.now() - started).toBeLessThan(500);
  });
});
