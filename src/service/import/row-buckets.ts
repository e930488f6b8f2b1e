// The import hot path: (row, column) pairs of one shard → one RoaringBitmap32 of column offsets
// per row, without a per-bit object. Pairs already grouped by row (runs) become one bitmap per run;
// otherwise a counting sort by row scatters offsets into one Uint32Array (typed-array counters
// when row IDs are small, which they are in practice; a Map only for sparse huge row IDs).
import { SHARD_WIDTH } from '../../domain/shard.js';
import { RoaringBitmap32, type Bitmap } from '../../state/fragment.js';

export interface RowBitmaps {
  rows: number[];
  columns: Bitmap[];
}

/** Row IDs below this use a dense counter array (4 bytes each). */
const DENSE_ROW_LIMIT = 1 << 22;

/** `idx` selects the pairs (indices into rows/cols) that belong to `shard`; undefined = all. */
export function bucketByRow(allRows: ArrayLike<number>, allCols: ArrayLike<number>, shard: number, sel?: Uint32Array): RowBitmaps {
  // A selection is gathered once, so the loops below index plain arrays (monomorphic, no branch).
  const rows = sel === undefined ? allRows : gather(allRows, sel);
  const cols = sel === undefined ? allCols : gather(allCols, sel);
  const n = rows.length;
  const base = shard * SHARD_WIDTH;
  // One pass: runs (row changes) and the largest row.
  let runs = 0;
  let prev = -1;
  let maxRow = 0;
  for (let i = 0; i < n; i++) {
    const r = rows[i];
    if (r !== prev) {
      runs++;
      prev = r;
    }
    if (r > maxRow) maxRow = r;
  }
  const offsets = new Uint32Array(n);
  // Grouped means one run per distinct row; more runs than possible rows rules it out cheaply.
  if (runs <= 1 || (maxRow < DENSE_ROW_LIMIT && runs <= maxRow + 1 && runs === distinctDense(rows, n, maxRow))) {
    for (let i = 0; i < n; i++) offsets[i] = cols[i] - base;
    return fromRuns(rows, offsets);
  }
  return maxRow < DENSE_ROW_LIMIT ? denseSort(rows, cols, base, maxRow, offsets) : mapSort(rows, cols, base, offsets);
}

function gather(a: ArrayLike<number>, sel: Uint32Array): Float64Array {
  const out = new Float64Array(sel.length);
  for (let i = 0; i < sel.length; i++) out[i] = a[sel[i]];
  return out;
}

function fromRuns(rows: ArrayLike<number>, offsets: Uint32Array): RowBitmaps {
  const out: RowBitmaps = { rows: [], columns: [] };
  const n = offsets.length;
  let start = 0;
  for (let i = 1; i <= n; i++) {
    if (i === n || rows[i] !== rows[start]) {
      out.rows.push(rows[start]);
      out.columns.push(new RoaringBitmap32(offsets.subarray(start, i)));
      start = i;
    }
  }
  return out;
}

function distinctDense(rows: ArrayLike<number>, n: number, maxRow: number): number {
  const seen = new Uint8Array(maxRow + 1);
  let d = 0;
  for (let i = 0; i < n; i++) {
    const r = rows[i];
    if (seen[r] === 0) {
      seen[r] = 1;
      d++;
    }
  }
  return d;
}

function denseSort(rows: ArrayLike<number>, cols: ArrayLike<number>, base: number, maxRow: number, offsets: Uint32Array): RowBitmaps {
  const n = offsets.length;
  const pos = new Uint32Array(maxRow + 2);
  for (let i = 0; i < n; i++) pos[rows[i] + 1]++;
  const out: RowBitmaps = { rows: [], columns: [] };
  // Prefix sums; remember the rows present (ascending, because we walk row IDs in order).
  for (let r = 0; r <= maxRow; r++) {
    if (pos[r + 1] > 0) out.rows.push(r);
    pos[r + 1] += pos[r];
  }
  const ends = pos.slice(); // ends[r + 1] after scatter = end of row r
  for (let i = 0; i < n; i++) {
    offsets[pos[rows[i]]++] = cols[i] - base;
  }
  for (const r of out.rows) out.columns.push(new RoaringBitmap32(offsets.subarray(ends[r], ends[r + 1])));
  return out;
}

function mapSort(rows: ArrayLike<number>, cols: ArrayLike<number>, base: number, offsets: Uint32Array): RowBitmaps {
  const n = offsets.length;
  const counts = new Map<number, number>();
  for (let i = 0; i < n; i++) {
    const r = rows[i];
    counts.set(r, (counts.get(r) ?? 0) + 1);
  }
  const distinct = [...counts.keys()].sort((a, b) => a - b);
  const starts = new Map<number, number>();
  let p = 0;
  for (const r of distinct) {
    starts.set(r, p);
    p += counts.get(r)!;
  }
  const fill = new Map(starts);
  for (let i = 0; i < n; i++) {
    const at = fill.get(rows[i])!;
    offsets[at] = cols[i] - base;
    fill.set(rows[i], at + 1);
  }
  return { rows: distinct, columns: distinct.map((r) => new RoaringBitmap32(offsets.subarray(starts.get(r)!, starts.get(r)! + counts.get(r)!))) };
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
