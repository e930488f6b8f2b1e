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
 * The exact counts of the rows that can be in the top n (every other row is left out): what
 * topNResult needs to answer as if every candidate had been counted in every shard.
 */
export function* selectTopN(
  shards: readonly TopNShard[],
  q: TopNQuery,
  isCandidate: (row: number) => boolean,
  exact: ExactCount,
): Work<TopNCounts> {
  const out: TopNCounts = { counts: new Map(), sizes: new Map(), srcCount: q.srcCount };
  const best = new Best(q.n);
  const seen = new Set<number>();
  const shardCount = shards.length;
  let longest = 0;
  for (const s of shards) longest = Math.max(longest, s.ranking.rows.length);
  let met = 0;
  for (let depth = 0; depth < longest; depth++) {
    let tau = 0;
    for (let i = 0; i < shardCount; i++) {
      const r = shards[i].ranking;
      if (depth >= r.rows.length) continue;
      tau += bound(q, Math.min(r.sizes[depth], shards[i].cap));
      const row = r.rows[depth];
      if (seen.has(row)) continue;
      seen.add(row);
      if (!isCandidate(row)) continue;
      if (++met % ROWS_PER_YIELD === 0) yield;
      countRow(shards, q, exact, best, row, out);
    }
    if (tau === 0 || (best.full && best.beats(tau))) break;
  }
  return out;
}

/** Every candidate counted exactly in every shard (ids, and a cluster node's partial). */
export function* countCandidates(
  shards: readonly TopNShard[],
  q: TopNQuery,
  candidates: readonly number[],
  exact: ExactCount,
): Work<TopNCounts> {
  const out: TopNCounts = { counts: new Map(), sizes: new Map(), srcCount: q.srcCount };
  const all = new Best(0);
  for (let i = 0; i < candidates.length; i++) {
    if (i > 0 && i % ROWS_PER_YIELD === 0) yield;
    countRow(shards, q, exact, all, candidates[i], out);
  }
  return out;
}

/** Thousands of rows × a large source bitmap can take seconds: yield between slices. */
const ROWS_PER_YIELD = 256;

/** A shard's count as it adds to the total: 0 under the per-shard threshold. */
function bound(q: TopNQuery, count: number): number {
  return q.tanimoto > 0 || count >= q.threshold ? count : 0;
}

/** Counts one row exactly unless its bound shows it cannot enter `best`; records it in `out`. */
function countRow(
  shards: readonly TopNShard[],
  q: TopNQuery,
  exact: ExactCount,
  best: Best,
  row: number,
  out: TopNCounts,
): void {
  let left = 0;
  for (let i = 0; i < shards.length; i++) left += bound(q, Math.min(rankedSize(shards[i].ranking, row), shards[i].cap));
  if (left === 0 || !best.admits(left, row)) return;
  let count = 0;
  let size = 0;
  for (let i = 0; i < shards.length && left > 0; i++) {
    const s = shards[i];
    const bits = rankedSize(s.ranking, row);
    if (bits === 0) continue;
    left -= bound(q, Math.min(bits, s.cap));
    const c = exact === undefined ? bits : exact(i, row);
    if (c > 0 && bound(q, c) > 0) {
      count += c;
      size += bits;
    }
    if (exact !== undefined && !best.admits(count + left, row)) return;
  }
  if (count === 0) return;
  out.counts.set(row, count);
  out.sizes.set(row, size);
  if (q.tanimoto === 0 || tanimotoPasses(count, size, q.srcCount, q.tanimoto)) best.add(row, count);
}

/**
 * The best n rows so far as a heap whose root is the worst of them (lowest count, then highest
 * ID): a row enters only by beating the root. n = 0 keeps no bound (every row enters).
 */
class Best {
  private readonly ids: number[] = [];
  private readonly counts: number[] = [];

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

  add(row: number, count: number): void {
    if (this.n === 0) return;
    if (!this.full) {
      this.ids.push(row);
      this.counts.push(count);
      this.up(this.ids.length - 1);
    } else if (this.admits(count, row)) {
      this.ids[0] = row;
      this.counts[0] = count;
      this.down(0);
    }
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
