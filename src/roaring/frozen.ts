// Bitmaps packed into one buffer in CRoaring's frozen layout. A mutable bitmap keeps every
// container in its own allocations (a struct and an array each, with allocator headers and spare
// capacity): about 1.5× to 2× its serialized size once the allocator's holes are counted. Packed,
// a bitmap takes its serialized size; a read-only view over its bytes is made when the row is
// first used (a view costs ~0.6 KB of native structs a row, more than a sparse row's own bytes),
// and a write copies the row first (state/fragment.ts does).
import roaring from 'roaring';
import { type Bitmap, RoaringBitmap32 } from './bitmap.js';

/** CRoaring's own layout, which a read-only view uses in place (little-endian, 32-byte aligned). */
export const FROZEN_FORMAT = 'unsafe_frozen_croaring';
/** The alignment the format requires, and the one of rows in a snapshot's body (its file layout). */
export const FROZEN_ALIGN = 32;
export const frozenPad = (at: number, align = FROZEN_ALIGN): number => (align - (at % align)) % align;
/**
 * The alignment of rows packed in memory: a row's bitset containers come first in its bytes, and
 * CRoaring's AVX-512 kernels (its own containers are 64-byte aligned where it uses them) read
 * them 64 bytes at a time, each load across two cache lines at a 32-byte offset. Measured on the
 * HTTP bench's rows (16 shards, two 10% rows a shard, AVX-512 machine): the 16 intersect-counts
 * took 41.8 µs with both rows at 64-byte boundaries, 47.5 µs with both at 32 mod 64.
 */
export const PACK_ALIGN = 64;

/**
 * One bitmap's frozen bytes, buf[start, start + len) with start 32-byte aligned in memory, not
 * viewed yet. `size` is its bit count, or −1 until somebody needed it (a snapshot's rows: the
 * file holds byte lengths only). −1 rather than NaN keeps the field a small integer in V8.
 */
export class FrozenRow {
  constructor(
    readonly buf: Uint8Array,
    readonly start: number,
    readonly len: number,
    private bits: number,
  ) {}

  /** The bytes, for a snapshot to copy as they are (no view, no re-encoding). */
  bytes(): Uint8Array {
    return this.buf.subarray(this.start, this.start + this.len);
  }

  /** A new read-only view over the bytes; it keeps the buffer alive. */
  view(): Bitmap {
    return RoaringBitmap32.unsafeFrozenView(this.bytes(), FROZEN_FORMAT);
  }

  get size(): number {
    if (this.bits < 0) this.bits = this.view().size;
    return this.bits;
  }
}

/**
 * `bitmaps` (run-optimized first) packed into one new buffer, each at a PACK_ALIGN boundary, one
 * FrozenRow each. The buffer is shared memory: query worker threads view the same bytes (no copy
 * per thread).
 */
export function packFrozen(bitmaps: readonly Bitmap[]): FrozenRow[] {
  const sizes = new Array<number>(bitmaps.length);
  let total = 0;
  for (let i = 0; i < bitmaps.length; i++) {
    bitmaps[i].runOptimize();
    sizes[i] = bitmaps[i].getSerializationSizeInBytes(FROZEN_FORMAT);
    total += frozenPad(total, PACK_ALIGN) + sizes[i];
  }
  const buf = roaring.bufferAlignedAllocSharedUnsafe(total, PACK_ALIGN);
  const out = new Array<FrozenRow>(bitmaps.length);
  let p = 0;
  for (let i = 0; i < bitmaps.length; i++) {
    const pad = frozenPad(p, PACK_ALIGN);
    buf.fill(0, p, p + pad);
    p += pad;
    bitmaps[i].serialize(FROZEN_FORMAT, buf.subarray(p, p + sizes[i]));
    out[i] = new FrozenRow(buf, p, sizes[i], bitmaps[i].size);
    p += sizes[i];
  }
  return out;
}
