// sortSegment against Array.prototype.sort: native path (short or wide segments) and the radix path.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sortSegment } from '../../../src/service/import/column-radix.js';

describe('sortSegment', () => {
  it('sorts exactly the segment, whatever its length and value range', () => {
    const value = fc.oneof(fc.nat(1048575), fc.nat(2000), fc.constantFrom(2 ** 20, 2 ** 32 - 1));
    fc.assert(
      fc.property(fc.array(value, { maxLength: 3000 }), fc.nat(10), fc.nat(10), (vs, before, after) => {
        const a = Uint32Array.from([...Array<number>(before).fill(7), ...vs, ...Array<number>(after).fill(3)]);
        sortSegment(a, before, before + vs.length);
        expect(Array.from(a.subarray(before, before + vs.length))).toEqual([...vs].sort((x, y) => x - y));
        expect(Array.from(a.subarray(0, before))).toEqual(Array<number>(before).fill(7));
        expect(Array.from(a.subarray(before + vs.length))).toEqual(Array<number>(after).fill(3));
      }),
      { numRuns: 200 },
    );
  });
});
