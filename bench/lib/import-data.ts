// Synthetic import data: `bits` bits over `rows` rows at 1% density per row, laid out from column
// 0 (so the column space is bits / (rows · 1%)), cut into requests of at most one shard and about
// `maxBits` bits. "sorted" requests list bits by row then column; "random" shuffles each request.
import { SHARD_WIDTH } from '../../src/domain/shard.js';

export const DENSITY = 0.01;
/** Gaps uniform in [1, 2/DENSITY − 1]: mean 1/DENSITY, so 1% density with no duplicate bits. */
const MAX_GAP = Math.round(2 / DENSITY) - 1;

export interface ImportShape {
  bits: number;
  rows: number;
  order: 'sorted' | 'random';
}

export interface Chunk {
  shard: number;
  rowIds: Float64Array;
  columnIds: Float64Array;
}

export function* importChunks(shape: ImportShape, maxBits: number): Generator<Chunk> {
  // 2% spare columns so random gaps never leave the total short; generation stops at `bits`.
  const columns = Math.ceil((shape.bits / (shape.rows * DENSITY)) * 1.02);
  const shards = Math.ceil(columns / SHARD_WIDTH);
  const rowBuf = new Float64Array(Math.ceil((SHARD_WIDTH * 2) / MAX_GAP) + 16);
  let left = shape.bits;
  for (let shard = 0; shard < shards && left > 0; shard++) {
    const lo = shard * SHARD_WIDTH;
    const hi = Math.min(columns, lo + SHARD_WIDTH);
    let rowIds = new Float64Array(maxBits + rowBuf.length);
    let columnIds = new Float64Array(maxBits + rowBuf.length);
    let n = 0;
    for (let row = 0; row < shape.rows && left > 0; row++) {
      let k = 0;
      for (
        let c = lo + Math.floor(Math.random() * MAX_GAP);
        c < hi && k < left && k < rowBuf.length;
        c += 1 + Math.floor(Math.random() * MAX_GAP)
      )
        rowBuf[k++] = c;
      if (n + k > maxBits && n > 0) {
        yield finish(shard, rowIds, columnIds, n, shape.order);
        rowIds = new Float64Array(maxBits + rowBuf.length);
        columnIds = new Float64Array(maxBits + rowBuf.length);
        n = 0;
      }
      rowIds.fill(row, n, n + k);
      columnIds.set(rowBuf.subarray(0, k), n);
      n += k;
      left -= k;
    }
    if (n > 0) yield finish(shard, rowIds, columnIds, n, shape.order);
  }
}

function finish(
  shard: number,
  rowIds: Float64Array,
  columnIds: Float64Array,
  n: number,
  order: ImportShape['order'],
): Chunk {
  const r = rowIds.slice(0, n);
  const c = columnIds.slice(0, n);
  if (order === 'random') {
    for (let i = n - 1; i > 0; i--) {
      const j = Math.floor(Math.random() * (i + 1));
      const tr = r[i];
      r[i] = r[j];
      r[j] = tr;
      const tc = c[i];
      c[i] = c[j];
      c[j] = tc;
    }
  }
  return { shard, rowIds: r, columnIds: c };
}
