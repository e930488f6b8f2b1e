// bitmapFromAscending against CRoaring's own constructor: array and bitset containers, bases,
// both ID array types, and the refusals (repeats, disorder, values below base).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bitmapFromAscending } from '../../../src/roaring/ascending-bitmap.js';
import { RoaringBitmap32 } from '../../../src/roaring/bitmap.js';

const SHARD = 1 << 20;

describe('bitmapFromAscending', () => {
  it('equals the constructed bitmap, including dense (bitset) containers and a sub-range', () => {
    const density = fc.constantFrom(0.0005, 0.01, 0.06, 0.5);
    fc.assert(
      fc.property(
        density,
        fc.nat(3),
        fc.nat(5),
        fc.boolean(),
        fc.integer({ min: 1, max: 1 << 18 }),
        (d, shard, skip, wide, span) => {
          const base = shard * SHARD;
          const offsets: number[] = [];
          for (let o = 0; o < span; o++) if (Math.random() < d) offsets.push(o * 3);
          const values = offsets.map((o) => o + base);
          const arr = wide ? Float64Array.from(values) : Uint32Array.from(values);
          const start = Math.min(skip, arr.length);
          const got = bitmapFromAscending(arr, start, arr.length, base);
          const want = new RoaringBitmap32(offsets.slice(start));
          expect(got?.isEqual(want)).toBe(true);
          expect(got?.size).toBe(want.size);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('is empty for an empty range', () => {
    expect(bitmapFromAscending(new Uint32Array([5]), 1, 1, 0)?.size).toBe(0);
  });

  it('refuses values that repeat, go down, or lie below base', () => {
    expect(bitmapFromAscending(Uint32Array.from([1, 2, 2, 3]), 0, 4, 0)).toBeUndefined();
    expect(bitmapFromAscending(Uint32Array.from([5, 70_000, 3, 80_000]), 0, 4, 0)).toBeUndefined();
    // A later key beyond the last value's container: caught before it overruns the header.
    expect(bitmapFromAscending(Uint32Array.from([1, 1 << 19, 2]), 0, 3, 0)).toBeUndefined();
    expect(bitmapFromAscending(Uint32Array.from([SHARD - 1, SHARD]), 0, 2, SHARD)).toBeUndefined();
  });

  it('keeps 4096 values in an array container and 4097 in a bitset, both exact', () => {
    for (const n of [4096, 4097, 65_536]) {
      const values = Uint32Array.from({ length: n }, (_, i) => 7 * SHARD + 65_536 + Math.floor((i * 65_536) / n));
      const got = bitmapFromAscending(values, 0, n, 7 * SHARD);
      expect(got?.toArray()).toEqual(Array.from(values, (v) => v - 7 * SHARD));
    }
  });
});
