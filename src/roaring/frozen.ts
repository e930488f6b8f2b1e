// Bitmaps packed into one buffer in CRoaring's frozen layout, each used in place through a
// read-only view. A mutable bitmap keeps every container in its own allocations (a struct and
// an array each, with allocator headers and spare capacity): about 1.5× to 2× its serialized
// size once the allocator's holes are counted. Packed, a bitmap takes its serialized size plus
// a small view; a write must copy it first (state/fragment.ts does).
import roaring from 'roaring';
import { type Bitmap, RoaringBitmap32 } from './bitmap.js';

/** CRoaring's own layout, which a read-only view uses in place (little-endian, 32-byte aligned). */
export const FROZEN_FORMAT = 'unsafe_frozen_croaring';
export const FROZEN_ALIGN = 32;
export const frozenPad = (at: number): number => (FROZEN_ALIGN - (at % FROZEN_ALIGN)) % FROZEN_ALIGN;

/** Frozen views of `bitmaps` (run-optimized first), all in one new aligned buffer. */
export function packFrozen(bitmaps: readonly Bitmap[]): Bitmap[] {
  const sizes = new Array<number>(bitmaps.length);
  let total = 0;
  for (let i = 0; i < bitmaps.length; i++) {
    bitmaps[i].runOptimize();
    sizes[i] = bitmaps[i].getSerializationSizeInBytes(FROZEN_FORMAT);
    total += frozenPad(total) + sizes[i];
  }
  const buf = roaring.bufferAlignedAllocUnsafe(total, FROZEN_ALIGN);
  const out = new Array<Bitmap>(bitmaps.length);
  let p = 0;
  for (let i = 0; i < bitmaps.length; i++) {
    const pad = frozenPad(p);
    buf.fill(0, p, p + pad);
    p += pad;
    const at = buf.subarray(p, p + sizes[i]);
    bitmaps[i].serialize(FROZEN_FORMAT, at);
    out[i] = RoaringBitmap32.unsafeFrozenView(at, FROZEN_FORMAT);
    p += sizes[i];
  }
  return out;
}
