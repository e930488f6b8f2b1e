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
