// The import hot path: (row, column) pairs of one shard → one RoaringBitmap32 of column offsets
// per row, without a per-bit object. Pairs already grouped by row (runs) become one bitmap per run
// (built from its serialized form when the run's columns ascend, the common sorted case);
// otherwise a counting sort by row scatters offsets into one Uint32Array (typed-array counters
// when row IDs are small, which they are in practice, then each row sorted; a Map only for sparse
// huge row IDs). The work pauses between pieces (bucketByRowSteps), so a large import can be
// bucketed while other requests are answered; bucketByRow runs it straight through.
import { SHARD_WIDTH } from '../../domain/shard.js';
import type { IdArray } from '../../domain/id-array.js';
import { bitmapFromAscending } from '../../roaring/ascending-bitmap.js';
import { sortSegment } from './column-radix.js';
import { RoaringBitmap32, type Bitmap } from '../../roaring/bitmap.js';
import { runSteps, STEP_ITEMS, type Steps } from '../../util/steps.js';

export interface RowBitmaps {
  rows: number[];
  columns: Bitmap[];
}

/** Row IDs below this use a dense counter array (4 bytes each). */
const DENSE_ROW_LIMIT = 1 << 22;

/** `idx` selects the pairs (indices into rows/cols) that belong to `shard`; undefined = all. */
export function bucketByRow(allRows: IdArray, allCols: IdArray, shard: number, sel?: Uint32Array): RowBitmaps {
  return runSteps(bucketByRowSteps(allRows, allCols, shard, sel));
}

/** bucketByRow as work that pauses about every STEP_ITEMS pairs (or rows). */
export function* bucketByRowSteps(
  allRows: IdArray,
  allCols: IdArray,
  shard: number,
  sel?: Uint32Array,
): Steps<RowBitmaps> {
  // A selection is gathered once, so the loops below index plain arrays (monomorphic, no branch).
  const rows = sel === undefined ? allRows : yield* gather(allRows, sel);
  const cols = sel === undefined ? allCols : yield* gather(allCols, sel);
  const base = shard * SHARD_WIDTH;
  const starts = runStarts(rows);
  yield;
  if (starts !== undefined && distinctRuns(rows, starts)) return yield* fromRuns(rows, cols, base, starts);
  const n = rows.length;
  let maxRow = 0;
  for (let i = 0; i < n; i++) if (rows[i] > maxRow) maxRow = rows[i];
  yield;
  return maxRow < DENSE_ROW_LIMIT
    ? yield* denseSort(rows, cols, base, maxRow)
    : mapSort(rows, cols, base, new Uint32Array(n));
}

/** The selected elements of `a`, in steps (a selection of millions must not hold the event loop). */
export function* gather(a: IdArray, sel: Uint32Array): Steps<Float64Array> {
  const out = new Float64Array(sel.length);
  for (let lo = 0; lo < sel.length; lo += STEP_ITEMS) {
    const hi = Math.min(sel.length, lo + STEP_ITEMS);
    for (let i = lo; i < hi; i++) out[i] = a[sel[i]];
    yield;
  }
  return out;
}

/** Above this many runs per item the pairs are not worth treating as grouped. */
const MAX_RUNS_PER_ITEM = 1 / 8;

/**
 * Where each run of equal rows starts, plus n at the end; undefined when there are so many runs
 * (interleaved rows, as in shuffled input) that the counting sort is the better path anyway.
 */
function runStarts(rows: IdArray): Uint32Array | undefined {
  const n = rows.length;
  const limit = Math.max(16, Math.ceil(n * MAX_RUNS_PER_ITEM));
  // Grown by doubling: sorted requests have a few hundred runs, not n / 8.
  let starts: Uint32Array = new Uint32Array(Math.min(limit, 256) + 1);
  let runs = 0;
  let prev = -1;
  for (let i = 0; i < n; i++) {
    if (rows[i] !== prev) {
      if (runs === limit) return undefined;
      if (runs + 1 === starts.length) starts = grow(starts, Math.min(limit, 2 * runs) + 1);
      starts[runs++] = i;
      prev = rows[i];
    }
  }
  starts[runs] = n;
  return starts.subarray(0, runs + 1);
}

function grow(a: Uint32Array, size: number): Uint32Array {
  const out = new Uint32Array(size);
  out.set(a);
  return out;
}

/** Whether no row has two runs (then each run is the whole row). */
function distinctRuns(rows: IdArray, starts: Uint32Array): boolean {
  const runs = starts.length - 1;
  if (runs <= 1) return true;
  let maxRow = 0;
  for (let r = 0; r < runs; r++) if (rows[starts[r]] > maxRow) maxRow = rows[starts[r]];
  if (maxRow < DENSE_ROW_LIMIT) {
    // More runs than possible rows rules it out cheaply.
    if (runs > maxRow + 1) return false;
    const seen = new Uint8Array(maxRow + 1);
    for (let r = 0; r < runs; r++) {
      const row = rows[starts[r]];
      if (seen[row] === 1) return false;
      seen[row] = 1;
    }
    return true;
  }
  const seen = new Set<number>();
  for (let r = 0; r < runs; r++) seen.add(rows[starts[r]]);
  return seen.size === runs;
}

/**
 * One bitmap per run: straight from the serialized form when the run's columns ascend (sorted
 * input), else through CRoaring's inserting constructor (it sorts as it goes).
 */
function* fromRuns(rows: IdArray, cols: IdArray, base: number, starts: Uint32Array): Steps<RowBitmaps> {
  const out: RowBitmaps = { rows: [], columns: [] };
  let done = 0;
  for (let r = 0; r + 1 < starts.length; r++) {
    const start = starts[r];
    const end = starts[r + 1];
    out.rows.push(rows[start]);
    out.columns.push(bitmapFromAscending(cols, start, end, base) ?? fromOffsets(cols, start, end, base));
    done += end - start;
    if (done >= STEP_ITEMS) {
      done = 0;
      yield;
    }
  }
  return out;
}

function fromOffsets(cols: IdArray, start: number, end: number, base: number): Bitmap {
  const offsets = new Uint32Array(end - start);
  for (let i = start; i < end; i++) offsets[i - start] = cols[i] - base;
  return new RoaringBitmap32(offsets);
}

/** Counting sort by row (row IDs below DENSE_ROW_LIMIT), then each row's offsets sorted. */
function* denseSort(rows: IdArray, cols: IdArray, base: number, maxRow: number): Steps<RowBitmaps> {
  const n = rows.length;
  const pos = new Uint32Array(maxRow + 2);
  for (let lo = 0; lo < n; lo += STEP_ITEMS) {
    countRows(rows, pos, lo, Math.min(n, lo + STEP_ITEMS));
    yield;
  }
  const out: RowBitmaps = { rows: [], columns: [] };
  // Prefix sums; remember the rows present (ascending, because we walk row IDs in order).
  for (let r = 0; r <= maxRow; r++) {
    if (pos[r + 1] > 0) out.rows.push(r);
    pos[r + 1] += pos[r];
  }
  const ends = pos.slice(); // ends[r + 1] after scatter = end of row r
  const offsets = new Uint32Array(n);
  for (let lo = 0; lo < n; lo += STEP_ITEMS) {
    scatter(rows, cols, base, pos, offsets, lo, Math.min(n, lo + STEP_ITEMS));
    yield;
  }
  let done = 0;
  for (const r of out.rows) {
    const s = ends[r];
    const e = ends[r + 1];
    sortSegment(offsets, s, e);
    // Repeated pairs make bitmapFromAscending decline; the constructor takes those.
    out.columns.push(bitmapFromAscending(offsets, s, e, 0) ?? new RoaringBitmap32(offsets.subarray(s, e)));
    done += e - s;
    if (done >= STEP_ITEMS) {
      done = 0;
      yield;
    }
  }
  return out;
}

// The per-pair loops of denseSort, in plain functions: hot loops stay out of the generator.
function countRows(rows: IdArray, pos: Uint32Array, lo: number, hi: number): void {
  for (let i = lo; i < hi; i++) pos[rows[i] + 1]++;
}

function scatter(
  rows: IdArray,
  cols: IdArray,
  base: number,
  pos: Uint32Array,
  offsets: Uint32Array,
  lo: number,
  hi: number,
): void {
  for (let i = lo; i < hi; i++) offsets[pos[rows[i]]++] = cols[i] - base;
}

function mapSort(rows: IdArray, cols: IdArray, base: number, offsets: Uint32Array): RowBitmaps {
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
  return {
    rows: distinct,
    columns: distinct.map(
      (r) => new RoaringBitmap32(offsets.subarray(starts.get(r)!, starts.get(r)! + counts.get(r)!)),
    ),
  };
}

/** Splits item indices by shard of their column; the common single-shard case allocates nothing. */
export function splitByShard(cols: IdArray): Map<number, Uint32Array | undefined> {
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
