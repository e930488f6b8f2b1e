// TopN's exact top n by a threshold algorithm (Fagin's TA), as pure functions over per-shard
// inputs: each shard's rows ranked by bit count (ShardRanking, built from the fragment without
// row views) and, with a filter, |src| in the shard and a function that counts |row ∩ src| there.
// Nothing here reads state, so the selection can run wherever the inputs are (a worker, the
// request thread) and its answer is what counting every candidate in every shard would give.
//
// Walk the shards' ranked lists depth by depth. A row met for the first time gets an upper bound
// from its sizes (its exact count without a filter: a count is its size then); a row whose bound
// cannot beat the current n-th best is skipped, others are counted exactly, shard by shard, and
// dropped as soon as what is left of their bound cannot reach the n-th. A row not met yet has at
// most Σ over shards of the size at the current depth (τ), so the walk stops once the n-th best
// count is above τ. Ties rank by ascending ID, so equal to τ is not enough to stop.

type Work<T> = Generator<void, T, undefined>;

/** Per-candidate sums over some shards; `srcCount`: |src| there (tanimoto only, else 0). */
export interface TopNCounts {
  counts: Map<number, number>;
  sizes: Map<number, number>;
  srcCount: number;
}

/** One shard's rows by bit count, descending (ties: ascending ID), and each row's bit count. */
export interface ShardRanking {
  readonly rows: Float64Array;
  readonly sizes: Uint32Array;
  /** Bit count by row ID when IDs are dense enough for an array; else `byId`. */
  readonly dense: Uint32Array | undefined;
  readonly byId: ReadonlyMap<number, number> | undefined;
}

/** One shard as TopN sees it: its ranking and the cap on a row's count there (|src|, or ∞). */
export interface TopNShard {
  ranking: ShardRanking;
  cap: number;
}

export interface TopNQuery {
  /** 0: every row. */
  n: number;
  /** A shard's count below it counts 0 there (Pilosa's per-shard threshold; not with tanimoto). */
  threshold: number;
  /** 0: none; else rows at or under this Tanimoto coefficient (%) are left out. */
  tanimoto: number;
  /** |src| over the shards (tanimoto only). */
  srcCount: number;
}

/** |row ∩ src| in shards[shard]; undefined without a filter (the count is the row's size). */
export type ExactCount = ((shard: number, row: number) => number) | undefined;

/** Row IDs below this, and below 4× the rows + 1,024, get a dense size array. */
const DENSE_MAX = 1 << 20;

export function rankShard(entries: Iterable<[number, number]>): ShardRanking {
  const ids: number[] = [];
  const bits: number[] = [];
  let max = -1;
  for (const [id, size] of entries) {
    ids.push(id);
    bits.push(size);
    if (id > max) max = id;
  }
  const order = ids.map((_, i) => i).sort((a, b) => bits[b] - bits[a] || ids[a] - ids[b]);
  const rows = new Float64Array(order.length);
  const sizes = new Uint32Array(order.length);
  for (let i = 0; i < order.length; i++) {
    rows[i] = ids[order[i]];
    sizes[i] = bits[order[i]];
  }
  const isDense = max < DENSE_MAX && max < 4 * ids.length + 1024;
  const dense = isDense ? new Uint32Array(max + 1) : undefined;
  const byId = isDense ? undefined : new Map<number, number>();
  for (let i = 0; i < ids.length; i++) {
    if (dense !== undefined) dense[ids[i]] = bits[i];
    else byId?.set(ids[i], bits[i]);
  }
  return { rows, sizes, dense, byId };
}

export function rankedSize(r: ShardRanking, row: number): number {
  if (r.dense !== undefined) return row < r.dense.length ? r.dense[row] : 0;
  return r.byId?.get(row) ?? 0;
}

/** Whether a row passes `tanimotoThreshold` (Pilosa: ceil(100·c / (size + |src| − c)) > t). */
export function tanimotoPasses(count: number, size: number, srcCount: number, t: number): boolean {
  return Math.ceil((count * 100) / (size + srcCount - count)) > t;
}

/**
 * The exact counts of the rows that are the top n (after tanimoto): what topNResult needs to
 * answer as if every candidate had been counted in every shard.
 */
export function* selectTopN(
  shards: readonly TopNShard[],
  q: TopNQuery,
  isCandidate: (row: number) => boolean,
  exact: ExactCount,
): Work<TopNCounts> {
  const walk = new Walk(shards, q, exact, new Best(q.n));
  // Without a filter a row met costs a few array reads and the walk runs through; with one it
  // may count |row ∩ src| in every shard, so the walk yields every ROWS_PER_YIELD rows.
  const slice = exact === undefined ? Number.POSITIVE_INFINITY : ROWS_PER_YIELD;
  while (!walk.run(isCandidate, slice)) yield;
  return walk.best.result(q.srcCount);
}

/** Every candidate counted exactly in every shard (ids, and a cluster node's partial). */
export function* countCandidates(
  shards: readonly TopNShard[],
  q: TopNQuery,
  candidates: readonly number[],
  exact: ExactCount,
): Work<TopNCounts> {
  const out: TopNCounts = { counts: new Map(), sizes: new Map(), srcCount: q.srcCount };
  const walk = new Walk(shards, q, exact, new Best(0));
  for (let i = 0; i < candidates.length; i++) {
    if (i > 0 && i % ROWS_PER_YIELD === 0) yield;
    if (!walk.count(candidates[i])) continue;
    out.counts.set(candidates[i], walk.counted);
    out.sizes.set(candidates[i], walk.countedSize);
  }
  return out;
}

/** Thousands of rows × a large source bitmap can take seconds: yield between slices. */
const ROWS_PER_YIELD = 256;

/**
 * The walk down the shards' ranked lists, resumable between depths. Arrays are taken out of
 * the rankings once: the walk reads them tens of thousands of times a query.
 */
class Walk {
  private depth = 0;
  private readonly longest: number;
  private readonly rows: Float64Array[];
  private readonly sizes: Uint32Array[];
  private readonly dense: (Uint32Array | undefined)[];
  /** |src| a shard, or undefined without a filter. */
  private readonly caps: Float64Array | undefined;
  private readonly seen: (row: number) => boolean;
  /** count()'s answer: the row's count and the sizes of the shards that counted. */
  counted = 0;
  countedSize = 0;

  constructor(
    private readonly shards: readonly TopNShard[],
    private readonly q: TopNQuery,
    private readonly exact: ExactCount,
    readonly best: Best,
  ) {
    this.rows = shards.map((s) => s.ranking.rows);
    this.sizes = shards.map((s) => s.ranking.sizes);
    this.dense = shards.map((s) => s.ranking.dense);
    this.longest = Math.max(0, ...this.rows.map((r) => r.length));
    this.caps = exact === undefined ? undefined : Float64Array.from(shards, (s) => s.cap);
    this.seen = seenRows(shards);
  }

  /** Walks on until done (true) or, at the end of a depth, `rows` rows were met (false). */
  run(isCandidate: (row: number) => boolean, rows: number): boolean {
    const n = this.shards.length;
    let met = 0;
    while (this.depth < this.longest) {
      const depth = this.depth++;
      let tau = 0;
      for (let i = 0; i < n; i++) {
        const list = this.rows[i];
        if (depth >= list.length) continue;
        tau += this.bound(i, this.sizes[i][depth]);
        const row = list[depth];
        if (!this.seen(row) || !isCandidate(row)) continue;
        met++;
        if (this.count(row) && (this.q.tanimoto === 0 || this.passes()))
          this.best.add(row, this.counted, this.countedSize);
      }
      if (tau === 0 || (this.best.full && this.best.beats(tau))) return true;
      if (met >= rows) return false;
    }
    return true;
  }

  private passes(): boolean {
    return tanimotoPasses(this.counted, this.countedSize, this.q.srcCount, this.q.tanimoto);
  }

  /** What a row of `size` bits in shard i can add to a total: capped by |src|, 0 under the threshold. */
  private bound(i: number, size: number): number {
    const c = this.caps === undefined || size <= this.caps[i] ? size : this.caps[i];
    return this.q.tanimoto > 0 || c >= this.q.threshold ? c : 0;
  }

  private sizeAt(i: number, row: number): number {
    const d = this.dense[i];
    if (d !== undefined) return row < d.length ? d[row] : 0;
    return rankedSize(this.shards[i].ranking, row);
  }

  /**
   * Counts one row exactly into `counted` (true when it has a count) unless its bound shows it
   * cannot enter `best`. Without a filter the bound is the count: no second pass.
   */
  count(row: number): boolean {
    const n = this.shards.length;
    let left = 0;
    for (let i = 0; i < n; i++) left += this.bound(i, this.sizeAt(i, row));
    if (left === 0 || !this.best.admits(left, row)) return false;
    const exact = this.exact;
    if (exact === undefined) {
      // A count is the row's size, counted where it reaches the threshold: size = count.
      this.counted = left;
      this.countedSize = left;
      return true;
    }
    let count = 0;
    let size = 0;
    for (let i = 0; i < n && left > 0; i++) {
      const bits = this.sizeAt(i, row);
      if (bits === 0) continue;
      left -= this.bound(i, bits);
      const c = exact(i, row);
      if (c > 0 && (this.q.tanimoto > 0 || c >= this.q.threshold)) {
        count += c;
        size += bits;
      }
      if (!this.best.admits(count + left, row)) return false;
    }
    this.counted = count;
    this.countedSize = size;
    return count > 0;
  }
}

/**
 * A test that is true the first time it sees a row: a byte a row when every ranking is dense
 * (a Set of thousands of rows costs more than the walk itself), else a Set.
 */
function seenRows(shards: readonly TopNShard[]): (row: number) => boolean {
  let width = 0;
  for (const s of shards) {
    if (s.ranking.dense === undefined) {
      const set = new Set<number>();
      return (row) => set.size !== set.add(row).size;
    }
    width = Math.max(width, s.ranking.dense.length);
  }
  const marks = new Uint8Array(width);
  return (row) => {
    if (marks[row] === 1) return false;
    marks[row] = 1;
    return true;
  };
}

/**
 * The best n rows so far as a heap whose root is the worst of them (lowest count, then highest
 * ID): a row enters only by beating the root. n = 0 keeps every row (no heap order needed).
 */
class Best {
  private readonly ids: number[] = [];
  private readonly counts: number[] = [];
  private readonly sizes: number[] = [];

  constructor(private readonly n: number) {}

  get full(): boolean {
    return this.n > 0 && this.ids.length >= this.n;
  }

  /** Whether a row with this count (an exact count or a bound on it) would rank in. */
  admits(count: number, row: number): boolean {
    if (count === 0) return false;
    if (!this.full) return true;
    return count > this.counts[0] || (count === this.counts[0] && row < this.ids[0]);
  }

  /** Whether the n-th best ranks above every row whose count is at most `tau`. */
  beats(tau: number): boolean {
    return this.counts[0] > tau;
  }

  add(row: number, count: number, size: number): void {
    if (!this.full) {
      this.ids.push(row);
      this.counts.push(count);
      this.sizes.push(size);
      if (this.n > 0) this.up(this.ids.length - 1);
    } else if (this.admits(count, row)) {
      this.ids[0] = row;
      this.counts[0] = count;
      this.sizes[0] = size;
      this.down(0);
    }
  }

  /** The rows kept, as counts for topNResult (which orders them). */
  result(srcCount: number): TopNCounts {
    const out: TopNCounts = { counts: new Map(), sizes: new Map(), srcCount };
    for (let i = 0; i < this.ids.length; i++) {
      out.counts.set(this.ids[i], this.counts[i]);
      out.sizes.set(this.ids[i], this.sizes[i]);
    }
    return out;
  }

  /** a ranks below b (a is nearer the root). */
  private worse(a: number, b: number): boolean {
    const ca = this.counts[a];
    const cb = this.counts[b];
    return ca < cb || (ca === cb && this.ids[a] > this.ids[b]);
  }

  private swap(a: number, b: number): void {
    [this.ids[a], this.ids[b]] = [this.ids[b], this.ids[a]];
    [this.counts[a], this.counts[b]] = [this.counts[b], this.counts[a]];
    [this.sizes[a], this.sizes[b]] = [this.sizes[b], this.sizes[a]];
  }

  private up(i: number): void {
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.worse(i, p)) return;
      this.swap(i, p);
      i = p;
    }
  }

  private down(i: number): void {
    const len = this.ids.length;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < len && this.worse(l, m)) m = l;
      if (r < len && this.worse(r, m)) m = r;
      if (m === i) return;
      this.swap(i, m);
      i = m;
    }
  }
}
