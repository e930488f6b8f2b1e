// A field's rows ranked by their total over a set of shards, kept while none of those shards'
// fragments changes: an unfiltered TopN is then the first n candidates of one list.
//
// Why: without a filter a row's count is the sum of its sizes (those at or above the threshold),
// so the threshold algorithm of topn-select.ts gives the same answer, but on rows of similar size
// (the common case of a field with many rows spread evenly) it walks most of every shard's list
// on every query. The totals are a derived view of the fragments like the shards' rankings,
// never logged, rebuilt from those rankings when a fragment's version moves.
//
// A list is built only when the same shards are asked twice at the same versions: a field
// written between every TopN keeps the threshold algorithm, which can stop early, instead of
// paying a full build per query.
import type { ReadonlyFragment } from '../state/readonly.js';
import type { ShardRanking, TopNCounts } from './topn-select.js';

/** Rows by total, descending (ties: ascending ID), with the totals; only rows with a total > 0. */
interface Totals {
  rows: Float64Array;
  totals: Float64Array;
}

interface Entry {
  fragments: readonly ReadonlyFragment[];
  versions: readonly number[];
  /** undefined: asked once at these versions, not built yet. */
  totals: Totals | undefined;
}

/** Per (view, threshold, shards) key; WeakMap on the view's owner so a dropped field frees it. */
const entries = new WeakMap<object, Map<string, Entry>>();

/** The key's entry is kept per owner; one owner keeps at most this many (oldest dropped). */
const KEYS_PER_OWNER = 16;

export interface TotalsInput {
  /** The field (or any object whose life bounds the cache). */
  owner: object;
  key: string;
  fragments: readonly ReadonlyFragment[];
  rankings: readonly ShardRanking[];
  threshold: number;
}

/**
 * The top n candidates (every candidate with n = 0) and their counts, from the kept totals, or
 * undefined when there are none yet for these fragment versions (the caller runs the threshold
 * algorithm then).
 */
export function topFromTotals(
  input: TotalsInput,
  n: number,
  isCandidate: (row: number) => boolean,
): TopNCounts | undefined {
  const totals = totalsFor(input);
  if (totals === undefined) return undefined;
  const counts = new Map<number, number>();
  const { rows, totals: sums } = totals;
  for (let i = 0; i < rows.length && (n === 0 || counts.size < n); i++)
    if (isCandidate(rows[i])) counts.set(rows[i], sums[i]);
  // Without a filter a row's size over the shards that counted is its count.
  return { counts, sizes: counts, srcCount: 0 };
}

function totalsFor(input: TotalsInput): Totals | undefined {
  let byKey = entries.get(input.owner);
  if (byKey === undefined) {
    byKey = new Map();
    entries.set(input.owner, byKey);
  }
  const known = byKey.get(input.key);
  if (known !== undefined && sameVersions(known, input.fragments)) {
    known.totals ??= buildTotals(input.rankings, input.threshold);
    return known.totals;
  }
  if (known === undefined && byKey.size >= KEYS_PER_OWNER) {
    const oldest = byKey.keys().next();
    if (oldest.done !== true) byKey.delete(oldest.value);
  }
  byKey.set(input.key, {
    fragments: input.fragments,
    versions: input.fragments.map((f) => f.version),
    totals: undefined,
  });
  return undefined;
}

function sameVersions(e: Entry, fragments: readonly ReadonlyFragment[]): boolean {
  if (e.fragments.length !== fragments.length) return false;
  for (let i = 0; i < fragments.length; i++)
    if (e.fragments[i] !== fragments[i] || e.versions[i] !== fragments[i].version) return false;
  return true;
}

/** Sums each row's sizes at or above the threshold over the shards, then ranks the rows. */
export function buildTotals(rankings: readonly ShardRanking[], threshold: number): Totals {
  const sums = new Map<number, number>();
  for (const r of rankings) {
    const { rows, sizes } = r;
    for (let i = 0; i < rows.length; i++) {
      const size = sizes[i];
      if (size === 0 || size < threshold) continue;
      sums.set(rows[i], (sums.get(rows[i]) ?? 0) + size);
    }
  }
  const ids = Float64Array.from(sums.keys());
  const sum = Float64Array.from(sums.values());
  const order = Array.from(ids.keys()).sort((a, b) => sum[b] - sum[a] || ids[a] - ids[b]);
  const rows = new Float64Array(order.length);
  const totals = new Float64Array(order.length);
  for (let i = 0; i < order.length; i++) {
    rows[i] = ids[order[i]];
    totals[i] = sum[order[i]];
  }
  return { rows, totals };
}
