// Fragment bit deltas: bitmaps and plain offset arrays (the Set/Clear form) must have the same
// effect, on new and existing rows, below and above the per-bit threshold; arrays are copied.
import { describe, expect, it } from 'vitest';
import { RoaringBitmap32, type ColumnOffsets } from '../../../src/roaring/bitmap.js';
import { Fragment } from '../../../src/state/fragment.js';

const forms = (offsets: number[]): [string, () => ColumnOffsets][] => [
  ['bitmap', () => new RoaringBitmap32(offsets)],
  ['array', () => Uint32Array.from(offsets)],
];

describe('Fragment bit deltas', () => {
  const few = [5, 1, 9];
  const many = Array.from({ length: 40 }, (_, i) => i * 3);
  for (const offsets of [few, many]) {
    for (const [form, make] of forms(offsets)) {
      it(`adds and removes ${offsets.length} offsets given as ${form}`, () => {
        const f = new Fragment(0);
        const given = make();
        f.addBits(1, given);
        expect(f.row(1)?.toArray()).toEqual([...offsets].sort((a, b) => a - b));
        if (given instanceof Uint32Array) given.fill(7); // the fragment kept a copy
        expect(f.row(1)?.size).toBe(offsets.length);
        f.addBits(1, Uint32Array.of(2, 1_048_575));
        expect(f.has(1, 1_048_575)).toBe(true);
        f.removeBits(1, make());
        expect(f.row(1)?.toArray()).toEqual(offsets.includes(2) ? [1_048_575] : [2, 1_048_575]);
        f.removeBits(1, Uint32Array.of(2, 1_048_575));
        expect(f.row(1)).toBeUndefined();
        expect(f.isEmpty).toBe(true);
      });
    }
  }

  it('ignores empty deltas and removals from missing rows', () => {
    const f = new Fragment(3);
    f.addBits(4, Uint32Array.of());
    f.addBits(5, new RoaringBitmap32());
    f.removeBits(6, Uint32Array.of(1));
    expect(f.isEmpty).toBe(true);
  });
});

describe('Fragment rows adopted from imports and snapshots', () => {
  const range = (from: number, to: number): number[] => Array.from({ length: to - from }, (_, k) => from + k);
  const shapes: [string, () => number[]][] = [
    ['sparse', () => Array.from({ length: 900 }, (_, k) => k * 1163)],
    ['dense', () => range(0, 70_000).filter((c) => c % 3 !== 0)],
    ['runs', () => [...range(10, 5_000), ...range(70_000, 140_000), ...range(1_000_000, 1_048_576)]],
  ];
  for (const [shape, columns] of shapes) {
    it(`compacts a ${shape} row it adopts and answers exactly as a copied one`, () => {
      const adopted = new Fragment(0);
      const copied = new Fragment(0);
      const given = new RoaringBitmap32(columns());
      adopted.adoptBits(1, given);
      copied.addBits(1, new RoaringBitmap32(columns()));
      expect(adopted.row(1)).toBe(given); // kept, not copied
      expect(adopted.row(1)?.toArray()).toEqual(copied.row(1)?.toArray());
      // Compacted: runs where smaller, so never more serialized bytes than the copy.
      expect(adopted.row(1)!.getSerializationSizeInBytes('portable')).toBeLessThanOrEqual(
        copied.row(1)!.getSerializationSizeInBytes('portable'),
      );
      if (shape === 'runs')
        expect(adopted.row(1)!.getSerializationSizeInBytes('portable')).toBeLessThan(
          copied.row(1)!.getSerializationSizeInBytes('portable') / 10,
        );
      // Later writes and reads behave the same on both.
      for (const f of [adopted, copied]) {
        f.addBits(1, Uint32Array.of(3, 4_999, 5_000, 69_999, 1_048_575));
        f.removeBits(1, new RoaringBitmap32(range(100, 200)));
        f.adoptBits(1, new RoaringBitmap32([7, 8, 9])); // an existing row: merged, not replaced
        f.remove(1, 10);
        f.add(1, 600_000);
      }
      expect(adopted.row(1)?.toArray()).toEqual(copied.row(1)?.toArray());
      expect(adopted.has(1, 600_000)).toBe(true);
      expect(adopted.has(1, 10)).toBe(false);
    });
  }
});

describe('Fragment bulk adoption (imports)', () => {
  const rowOf = (r: number, n: number): number[] => Array.from({ length: n }, (_, k) => (k * 977 + r * 13) % 1_048_576);

  it('packs the new rows of a large adoption frozen; writes copy a row first; existing rows merge', () => {
    const f = new Fragment(0);
    f.addBits(9, Uint32Array.of(1, 2));
    const rows = [1, 2, 9];
    const given = rows.map((r) => new RoaringBitmap32(rowOf(r, 40_000)));
    f.adoptRows(rows, given);
    expect(f.row(1)?.isFrozen).toBe(true);
    expect(f.row(2)?.isFrozen).toBe(true);
    expect(f.row(1)?.toArray()).toEqual([...new Set(rowOf(1, 40_000))].sort((a, b) => a - b));
    // Row 9 existed: merged into, not replaced, and still mutable.
    expect(f.row(9)?.isFrozen).toBe(false);
    expect(f.row(9)?.size).toBe(new Set([1, 2, ...rowOf(9, 40_000)]).size);
    f.add(1, 1_048_575);
    expect(f.row(1)?.isFrozen).toBe(false);
    expect(f.row(1)?.has(1_048_575)).toBe(true);
    expect(f.row(2)?.has(1_048_575)).toBe(false);
    f.removeBits(2, new RoaringBitmap32(rowOf(2, 40_000)));
    expect(f.row(2)).toBeUndefined();
  });

  it("answers a viewed packed row's size from its bytes, and the new size once the row is written", () => {
    const f = new Fragment(0);
    const rows = [1, 2];
    f.adoptRows(
      rows,
      rows.map((r) => new RoaringBitmap32(rowOf(r, 40_000))),
    );
    const n = new Set(rowOf(1, 40_000)).size;
    expect(f.row(1)?.isFrozen).toBe(true);
    expect(f.rowSize(1)).toBe(n);
    const fresh = rowOf(1, 40_000).includes(1_048_575) ? 1_048_574 : 1_048_575;
    f.add(1, fresh);
    expect(f.rowSize(1)).toBe(n + 1);
    f.row(2);
    f.clearRow(2);
    expect(f.rowSize(2)).toBe(0);
    f.setRow(2, new RoaringBitmap32([7, 8]));
    expect(f.rowSize(2)).toBe(2);
  });

  it('keeps packed rows as bytes until read: counts, sizes, footprint and capture make no view', () => {
    const f = new Fragment(0);
    const ids = Array.from({ length: 300 }, (_, k) => k * 2);
    const bits = ids.map((r) => [...new Set(rowOf(r, 700))].sort((a, b) => a - b));
    f.adoptRows(
      ids,
      bits.map((b) => new RoaringBitmap32(b)),
    );
    expect(f.packedCount).toBe(300);
    expect(f.rows.size).toBe(300);
    expect(f.hasRow(4)).toBe(true);
    expect(f.hasRow(5)).toBe(false);
    expect([...f.rows.keys()].sort((a, b) => a - b)).toEqual(ids);
    expect(new Map(f.rowSizes())).toEqual(new Map(ids.map((r, i) => [r, bits[i].length])));
    const fp = f.footprint();
    expect(fp.bits).toBe(bits.reduce((n, b) => n + b.length, 0));
    expect(fp.bytes).toBeGreaterThan(fp.bits * 2); // 2 bytes a value in array containers, and headers
    const captured = f.captureRow(4);
    expect(captured).toBeInstanceOf(Uint8Array);
    expect(RoaringBitmap32.unsafeFrozenView(captured as Uint8Array, 'unsafe_frozen_croaring').toArray()).toEqual(
      bits[2],
    );
    expect(f.peekRow(6)?.toArray()).toEqual(bits[3]);
    expect(f.packedCount).toBe(300);
    // Reading a row views it, for good; writes copy; Store and ClearRow drop the bytes.
    expect(f.row(0)?.isFrozen).toBe(true);
    expect(f.packedCount).toBe(299);
    expect(f.add(2, 1_048_575)).toBe(true);
    expect(f.row(2)?.isFrozen).toBe(false);
    expect(f.row(2)?.size).toBe(bits[1].length + 1);
    f.setRow(8, new RoaringBitmap32([5]));
    expect(f.row(8)?.toArray()).toEqual([5]);
    expect(f.clearRow(10)).toBe(true);
    expect(f.hasRow(10)).toBe(false);
    expect(f.clearRow(10)).toBe(false);
    expect(f.packedCount).toBe(296); // 0 viewed; 2 and 8 written; 10 cleared
    // A full scan reads (and views) every row.
    let n = 0;
    for (const [id, bm] of f.rows) {
      n++;
      if (id > 10) expect(bm.toArray()).toEqual(bits[id / 2]);
    }
    expect(n).toBe(299);
    expect(f.packedCount).toBe(0);
  });

  it('keeps a small adoption mutable (streamed imports write to their rows again)', () => {
    const f = new Fragment(0);
    f.adoptRows([1, 2], [new RoaringBitmap32([1, 2, 3]), new RoaringBitmap32([4])]);
    expect(f.row(1)?.isFrozen).toBe(false);
    expect(f.row(2)?.toArray()).toEqual([4]);
  });
});
