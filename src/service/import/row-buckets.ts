// The import hot path: (row, column) pairs of one shard → one RoaringBitmap32 of column offsets
// per row, without a per-bit object. Runs of equal rows (sorted input) become one addMany each;
// unsorted input is counting-sorted by row first.
import { SHARD_WIDTH } from '../../domain/shard.js';
import { RoaringBitmap32, type Bitmap } from '../../state/fragment.js';

export interface RowBitmaps {
  rows: number[];
  columns: Bitmap[];
}

/**
 * `idx` selects the pairs (indices into rows/cols) that belong to `shard`; undefined = all.
 */
export function bucketByRow(rows: ArrayLike<number>, cols: ArrayLike<number>, shard: number, idx?: Uint32Array): RowBitmaps {
  const n = idx === undefined ? rows.length : idx.length;
  const base = shard * SHARD_WIDTH;
  const at = (i: number): number => (idx === undefined ? i : idx[i]);
  // Pass 1: are rows grouped (each row in one contiguous run)? Count runs as we go.
  let runs = 0;
  let prev = -1;
  for (let i = 0; i < n; i++) {
    const r = rows[at(i)];
    if (r !== prev) {
      runs++;
      prev = r;
    }
  }
  const offsets = new Uint32Array(n);
  const out: RowBitmaps = { rows: [], columns: [] };
  const counts = new Map<number, number>();
  if (runs <= 1 || runs === countDistinct(rows, n, at, counts)) {
    // Grouped: a slice per run.
    for (let i = 0; i < n; i++) offsets[i] = cols[at(i)] - base;
    let start = 0;
    for (let i = 1; i <= n; i++) {
      if (i === n || rows[at(i)] !== rows[at(start)]) {
        out.rows.push(rows[at(start)]);
        out.columns.push(new RoaringBitmap32(offsets.subarray(start, i)));
        start = i;
      }
    }
  } else {
    // Counting sort by row: counts → start positions → scatter.
    const starts = new Map<number, number>();
    let pos = 0;
    const distinct = [...counts.keys()].sort((a, b) => a - b);
    for (const r of distinct) {
      starts.set(r, pos);
      pos += counts.get(r)!;
    }
    const fill = new Map(starts);
    for (let i = 0; i < n; i++) {
      const j = at(i);
      const p = fill.get(rows[j])!;
      offsets[p] = cols[j] - base;
      fill.set(rows[j], p + 1);
    }
    for (const r of distinct) {
      const s = starts.get(r)!;
      out.rows.push(r);
      out.columns.push(new RoaringBitmap32(offsets.subarray(s, s + counts.get(r)!)));
    }
  }
  return out;
}

function countDistinct(rows: ArrayLike<number>, n: number, at: (i: number) => number, counts: Map<number, number>): number {
  for (let i = 0; i < n; i++) {
    const r = rows[at(i)];
    counts.set(r, (counts.get(r) ?? 0) + 1);
  }
  return counts.size;
}

/** Splits item indices by shard of their column; the common single-shard case allocates nothing. */
export function splitByShard(cols: ArrayLike<number>): Map<number, Uint32Array | undefined> {
  const n = cols.length;
  if (n === 0) return new Map();
  const first = Math.floor(cols[0] / SHARD_WIDTH);
  let single = true;
  for (let i = 1; i < n; i++) {
    if (Math.floor(cols[i] / SHARD_WIDTH) !== first) {
      single = false;
      break;
    }
  }
  if (single) return new Map([[first, undefined]]);
  const lists = new Map<number, number[]>();
  for (let i = 0; i < n; i++) {
    const s = Math.floor(cols[i] / SHARD_WIDTH);
    let l = lists.get(s);
    if (!l) lists.set(s, (l = []));
    l.push(i);
  }
  return new Map([...lists].map(([s, l]) => [s, Uint32Array.from(l)]));
}
