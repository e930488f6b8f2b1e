// packFrozen: every row starts at a 64-byte boundary in memory (CRoaring's AVX-512 kernels read
// a row's leading bitset containers 64 bytes at a time), and each view holds the row's bits.
import roaring from 'roaring';
import { describe, expect, it } from 'vitest';
import { RoaringBitmap32 } from '../../../src/roaring/bitmap.js';
import { PACK_ALIGN, packFrozen } from '../../../src/roaring/frozen.js';

describe('packFrozen', () => {
  it('puts every row at a PACK_ALIGN boundary, whatever the sizes before it', () => {
    // Sizes that leave the next row at every offset mod 64 if only padded to 32: a dense row
    // (bitset containers), small array rows of odd lengths, an empty row.
    const dense = new RoaringBitmap32();
    for (let i = 0; i < 200_000; i += 3) dense.add(i);
    const rows = [dense, new RoaringBitmap32([1, 5, 9]), new RoaringBitmap32(), dense.clone()];
    for (let n = 1; n < 12; n++) rows.push(new RoaringBitmap32(Array.from({ length: n * 5 }, (_, i) => i * 7)));
    const want = rows.map((r) => r.toArray());
    const packed = packFrozen(rows);
    expect(PACK_ALIGN).toBe(64);
    for (let i = 0; i < packed.length; i++) {
      const p = packed[i];
      expect(roaring.isBufferAligned(p.bytes(), PACK_ALIGN)).toBe(true);
      expect(p.view().toArray()).toEqual(want[i]);
      expect(p.size).toBe(want[i].length);
    }
  });
});
