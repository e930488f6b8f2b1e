import fc from 'fast-check';
import roaring from 'roaring';
import { describe, expect, it } from 'vitest';
import type { Bitmap } from '../../../src/roaring/bitmap.js';
import {
  decodeRoaringPositions,
  encodePilosaRoaring,
  RoaringFormatError,
} from '../../../src/roaring/pilosa-roaring.js';

const { RoaringBitmap32 } = roaring;
const SHARD_WIDTH = 2 ** 20;

const fromHex = (s: string): Uint8Array => Uint8Array.from(Buffer.from(s.replace(/\s/g, ''), 'hex'));
const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

/** Plain view of decoded rows: row → sorted offsets. */
const plain = (rows: Map<number, Bitmap>): [number, number[]][] =>
  [...rows].map(([r, b]): [number, number[]] => [r, b.toArray()]).sort((a, b) => a[0] - b[0]);

/** Same rows with equal bitmaps (native comparison: cheap even for dense rows). */
function expectSameRows(actual: Map<number, Bitmap>, expected: Map<number, Bitmap>): void {
  const nonEmpty = [...expected].filter(([, b]) => !b.isEmpty);
  expect([...actual.keys()].sort((a, b) => a - b)).toEqual(nonEmpty.map(([r]) => r).sort((a, b) => a - b));
  for (const [r, b] of nonEmpty) expect(actual.get(r)?.isEqual(b), `row ${r}`).toBe(true);
}

const rowsOf = (entries: [number, number[]][]): Map<number, Bitmap> =>
  new Map(entries.map(([r, vs]) => [r, new RoaringBitmap32(vs)]));

interface Spec {
  key: number;
  type: 1 | 2 | 3;
  /** Low 16-bit values (array, bitmap) or inclusive [start, last] pairs (run). */
  values: number[];
  card?: number;
}

/** An unoptimized Pilosa roaring file, container types as given (what Pilosa may write). */
function pilosaFile(specs: Spec[], opts: { version?: number; tail?: number[] } = {}): Uint8Array {
  const bodies = specs.map((s) => {
    if (s.type === 1) {
      const b = new DataView(new ArrayBuffer(2 * s.values.length));
      s.values.forEach((v, i) => b.setUint16(2 * i, v, true));
      return new Uint8Array(b.buffer);
    }
    if (s.type === 2) {
      const words = new Uint32Array(2048);
      for (const v of s.values) words[v >>> 5] |= 1 << (v & 31);
      return new Uint8Array(words.buffer);
    }
    const b = new DataView(new ArrayBuffer(2 + 2 * s.values.length));
    b.setUint16(0, s.values.length / 2, true);
    s.values.forEach((v, i) => b.setUint16(2 + 2 * i, v, true));
    return new Uint8Array(b.buffer);
  });
  const card = (s: Spec): number => {
    if (s.card !== undefined) return s.card;
    if (s.type !== 3) return s.values.length;
    let n = 0;
    for (let i = 0; i < s.values.length; i += 2) n += s.values[i + 1] - s.values[i] + 1;
    return n;
  };
  const head = 8 + specs.length * 16;
  const size = head + bodies.reduce((n, b) => n + b.length, 0) + (opts.tail?.length ?? 0);
  const out = new Uint8Array(size);
  const v = new DataView(out.buffer);
  v.setUint16(0, 12348, true);
  v.setUint8(2, opts.version ?? 0);
  v.setUint32(4, specs.length, true);
  let at = head;
  specs.forEach((s, i) => {
    v.setBigUint64(8 + 12 * i, BigInt(s.key), true);
    v.setUint16(16 + 12 * i, s.type, true);
    v.setUint16(18 + 12 * i, card(s) - 1, true);
    v.setUint32(8 + 12 * specs.length + 4 * i, at, true);
    out.set(bodies[i], at);
    at += bodies[i].length;
  });
  out.set(opts.tail ?? [], at);
  return out;
}

/** A RoaringFormatError (a 400 at the import service) with the decoder's prefix, matching `pattern`. */
function expectRoaringError(f: () => unknown, pattern: RegExp): void {
  expect(f).toThrow(RoaringFormatError);
  expect(f).toThrow(/^unmarshaling roaring data: /);
  expect(f).toThrow(pattern);
}

const range = (a: number, b: number): number[] => Array.from({ length: b - a }, (_, i) => a + i);

describe('decodeRoaringPositions: Pilosa format', () => {
  const observed = '3c30 0000 0100 0000 a000 0000 0000 0000 0300 0100 1800 0000 0100 0100 0200';

  it('decodes the fragment observed from Pilosa 1.4 (docs/API.md §5.3): row 10, columns 1..2', () => {
    expect(plain(decodeRoaringPositions(fromHex(observed)))).toEqual([[10, [1, 2]]]);
  });

  it('decodes from an unaligned view into a larger buffer', () => {
    const file = pilosaFile([{ key: 161, type: 2, values: range(0, 5000) }]);
    const outer = new Uint8Array(file.length + 5);
    outer.set(file, 1);
    expect(plain(decodeRoaringPositions(outer.subarray(1, 1 + file.length)))).toEqual([[10, range(65536, 70536)]]);
  });

  it('ignores the op log after the containers', () => {
    // remove-op for position 10·2^20+1, then garbage: neither is read.
    const withOps = fromHex(observed + '01 0100a00000000000 deadbeef ffff');
    expect(plain(decodeRoaringPositions(withOps))).toEqual([[10, [1, 2]]]);
  });

  it('handles every container type, including unoptimized ones, and rows split over keys', () => {
    const dense = range(0, 5000);
    const file = pilosaFile([
      { key: 0, type: 1, values: [0, 7, 65535] },
      { key: 1, type: 2, values: [1, 2, 3, 40000] }, // sparse bitmap → array
      { key: 15, type: 1, values: dense }, // oversized array → bitmap
      { key: 16, type: 3, values: [0, 0, 10, 65535] },
      { key: 16 * 1000 + 3, type: 2, values: range(100, 6000) },
      { key: 2 ** 48 - 1, type: 3, values: [5, 9] },
    ]);
    const rows = decodeRoaringPositions(file);
    expect([...rows.keys()]).toEqual([0, 1, 1000, 2 ** 44 - 1]);
    expect(rows.get(0)?.toArray()).toEqual([
      0,
      7,
      65535,
      65536 + 1,
      65536 + 2,
      65536 + 3,
      65536 + 40000,
      ...dense.map((v) => 15 * 65536 + v),
    ]);
    expect(rows.get(1)?.toArray()).toEqual([0, ...range(10, 65536)]);
    expect(rows.get(1000)?.toArray()).toEqual(range(100, 6000).map((v) => 3 * 65536 + v));
    expect(rows.get(2 ** 44 - 1)?.toArray()).toEqual(range(15 * 65536 + 5, 15 * 65536 + 10));
  });

  it('decodes empty input to no rows, and a file with no containers to no rows', () => {
    expect(decodeRoaringPositions(new Uint8Array(0)).size).toBe(0);
    expect(decodeRoaringPositions(fromHex('3c30 0000 0000 0000')).size).toBe(0);
  });

  it('rejects malformed files with a message', () => {
    const ok = pilosaFile([{ key: 160, type: 1, values: [1, 2] }]);
    expectRoaringError(() => decodeRoaringPositions(fromHex('3c')), /truncated/);
    expectRoaringError(() => decodeRoaringPositions(fromHex('0000 0000 0000 0000')), /unknown roaring cookie 0/);
    expectRoaringError(() => decodeRoaringPositions(pilosaFile([], { version: 1 })), /wrong roaring version/);
    expectRoaringError(() => decodeRoaringPositions(fromHex('3c30 0000 0200 0000')), /truncated in container headers/);
    for (let cut = 1; cut < ok.length; cut++) {
      expect(() => decodeRoaringPositions(ok.subarray(0, cut)), `cut ${cut}`).toThrow(RoaringFormatError);
    }
    const badOffset = ok.slice();
    new DataView(badOffset.buffer).setUint32(20, 1000, true);
    expectRoaringError(() => decodeRoaringPositions(badOffset), /offset out of bounds: off=1000/);
    const badType = ok.slice();
    badType[16] = 9;
    expectRoaringError(() => decodeRoaringPositions(badType), /unknown container type 9/);
    expectRoaringError(
      () => decodeRoaringPositions(pilosaFile([{ key: 2 ** 48, type: 1, values: [1] }])),
      /container key 281474976710656 out of range/,
    );
    expectRoaringError(
      () =>
        decodeRoaringPositions(
          pilosaFile([
            { key: 5, type: 1, values: [1] },
            { key: 5, type: 1, values: [2] },
          ]),
        ),
      /not strictly increasing/,
    );
    expectRoaringError(
      () => decodeRoaringPositions(pilosaFile([{ key: 0, type: 1, values: [3, 2] }])),
      /array container 0/,
    );
    expectRoaringError(
      () => decodeRoaringPositions(pilosaFile([{ key: 0, type: 2, values: [1, 2], card: 3 }])),
      /holds 2 values but its header says 3/,
    );
    expectRoaringError(
      () => decodeRoaringPositions(pilosaFile([{ key: 0, type: 3, values: [0, 5, 5, 6] }])),
      /overlapping run \[5, 6\]/,
    );
    expectRoaringError(
      () => decodeRoaringPositions(pilosaFile([{ key: 0, type: 3, values: [5, 4] }])),
      /bad or overlapping/,
    );
    expectRoaringError(
      () => decodeRoaringPositions(pilosaFile([{ key: 0, type: 3, values: [0, 5], card: 2 }])),
      /holds 6 values but its header says 2/,
    );
  });
});

describe('encodePilosaRoaring', () => {
  it('writes array containers with exact bytes', () => {
    const bytes = encodePilosaRoaring(rowsOf([[10, [1, 2]]]));
    expect(hex(bytes)).toBe(
      '3c300000' + '01000000' + 'a000000000000000' + '0100' + '0100' + '18000000' + '0100' + '0200',
    );
  });

  it('writes the observed run container when runs are enabled and smaller', () => {
    const rows = rowsOf([[10, range(1, 100)]]);
    const bytes = encodePilosaRoaring(rows, { runs: true });
    expect(hex(bytes)).toBe(
      '3c300000' + '01000000' + 'a000000000000000' + '0300' + '6200' + '18000000' + '0100' + '0100' + '6300',
    );
    expect(plain(decodeRoaringPositions(bytes))).toEqual(plain(rows));
  });

  it('uses bitmaps above 4096 values and skips empty rows', () => {
    const rows = rowsOf([
      [0, range(0, 5000).map((v) => v * 3)],
      [1, []],
    ]);
    const bytes = encodePilosaRoaring(rows);
    const v = new DataView(bytes.buffer);
    expect(v.getUint32(4, true)).toBe(1);
    expect(v.getUint16(16, true)).toBe(2);
    expect(bytes.length).toBe(8 + 12 + 4 + 8192);
    expect(plain(decodeRoaringPositions(bytes))).toEqual([[0, range(0, 5000).map((x) => x * 3)]]);
  });

  it('round-trips arbitrary rows with and without runs (property)', () => {
    const offsets = fc.oneof(
      fc.uniqueArray(fc.integer({ min: 0, max: SHARD_WIDTH - 1 }), { maxLength: 300 }),
      fc
        .tuple(fc.integer({ min: 0, max: SHARD_WIDTH - 1 }), fc.integer({ min: 1, max: 70000 }))
        .map(([s, n]) => range(s, Math.min(SHARD_WIDTH, s + n))),
      fc.integer({ min: 0, max: 15 }).map((k) => range(k * 65536, k * 65536 + 5000).filter((x) => x % 7 !== 0)),
    );
    const row = fc.oneof(fc.nat(100), fc.integer({ min: 0, max: 2 ** 44 - 1 }));
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.tuple(row, offsets), { selector: (e) => e[0], maxLength: 6 }),
        fc.boolean(),
        (entries, runs) => {
          const rows = rowsOf(entries);
          expectSameRows(decodeRoaringPositions(encodePilosaRoaring(rows, { runs })), rows);
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe('decodeRoaringPositions: official portable format', () => {
  /** Expected rows for 32-bit positions. */
  function expectedRows(positions: number[]): Map<number, Bitmap> {
    const rows = new Map<number, Bitmap>();
    for (const p of positions) {
      const r = Math.floor(p / SHARD_WIDTH);
      const b = rows.get(r) ?? new RoaringBitmap32();
      b.add(p % SHARD_WIDTH);
      rows.set(r, b);
    }
    return rows;
  }

  it('decodes cookie 12346 (no runs) and 12347 (runs, with and without offsets)', () => {
    const positions = [
      1,
      2,
      3,
      10 * SHARD_WIDTH + 5,
      10 * SHARD_WIDTH + 70000,
      ...range(3 * SHARD_WIDTH, 3 * SHARD_WIDTH + 9000),
    ];
    const plainBitmap = new RoaringBitmap32(positions);
    const noRuns = plainBitmap.serialize('portable');
    expect(new DataView(noRuns.buffer, noRuns.byteOffset).getUint32(0, true)).toBe(12346);
    expectSameRows(decodeRoaringPositions(noRuns), expectedRows(positions));

    const withRuns = new RoaringBitmap32(positions);
    withRuns.runOptimize();
    const runBytes = withRuns.serialize('portable');
    expect(new DataView(runBytes.buffer, runBytes.byteOffset).getUint16(0, true)).toBe(12347);
    expectSameRows(decodeRoaringPositions(runBytes), expectedRows(positions));

    // Fewer than 4 containers with a run: no offset table.
    const small = new RoaringBitmap32(range(100, 200));
    small.runOptimize();
    const smallBytes = small.serialize('portable');
    expect(smallBytes.length).toBe(4 + 1 + 4 + 2 + 4);
    expect(plain(decodeRoaringPositions(smallBytes))).toEqual([[0, range(100, 200)]]);
  });

  it('round-trips CRoaring portable serializations (property)', () => {
    const positions = fc.oneof(
      fc.array(fc.integer({ min: 0, max: 2 ** 32 - 1 }), { maxLength: 200 }),
      fc.array(fc.integer({ min: 0, max: 4 * SHARD_WIDTH }), { maxLength: 3000 }),
      fc
        .tuple(fc.integer({ min: 0, max: 2 ** 32 - 200000 }), fc.integer({ min: 1, max: 150000 }))
        .map(([s, n]) => range(s, s + n)),
    );
    fc.assert(
      fc.property(positions, fc.boolean(), (ps, optimize) => {
        const b = new RoaringBitmap32(ps);
        if (optimize) b.runOptimize();
        expectSameRows(decodeRoaringPositions(b.serialize('portable')), expectedRows(ps));
      }),
      { numRuns: 60 },
    );
  });

  it('rejects truncated portable data at every length', () => {
    const b = new RoaringBitmap32([...range(0, 10), ...range(70000, 80000), 5 * SHARD_WIDTH]);
    b.runOptimize();
    for (const bytes of [b.serialize('portable'), new RoaringBitmap32([1, 2, 70000]).serialize('portable')]) {
      for (let cut = 1; cut < bytes.length; cut++) {
        expect(() => decodeRoaringPositions(bytes.subarray(0, cut)), `cut ${cut}`).toThrow(RoaringFormatError);
      }
    }
  });
});
