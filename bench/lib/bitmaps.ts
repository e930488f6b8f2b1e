// Random column-offset bitmaps for query data. A small pool per density is built bit by bit once
// (2^20 draws each); shards reuse pool members, so 256 shards at 50% cost no per-bit loops.
import { SHARD_WIDTH } from '../../src/domain/shard.js';
import { RoaringBitmap32, type Bitmap } from '../../src/roaring/bitmap.js';

export function randomBitmap(density: number, width = SHARD_WIDTH): Bitmap {
  const buf = new Uint32Array(Math.min(width, Math.ceil(width * density * 1.1) + 64));
  let n = 0;
  for (let i = 0; i < width && n < buf.length; i++) if (Math.random() < density) buf[n++] = i;
  const b = new RoaringBitmap32(buf.subarray(0, n));
  b.runOptimize();
  return b;
}

export function bitmapPool(density: number, size: number): Bitmap[] {
  return Array.from({ length: size }, () => randomBitmap(density));
}
