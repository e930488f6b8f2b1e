// TopN row caches: derived, in-memory, never logged. Per field (WeakMap on the Field object, so
// a deleted field's cache goes with it) and per shard, the candidate rows TopN considers:
// - ranked: the cacheSize rows with the most bits, ties by ascending ID;
// - lru: the cacheSize most recently written rows, approximated at recalculation granularity
//   (rows that appeared since the previous recalculation count as the most recent).
// recalculateCaches() refreshes every cache (the server runs it every 10 s and on
// POST /recalculate-caches), so TopN is exact right after it; a shard never cached is computed
// on first use. Between recalculations, rows created since the last one may be missing (as in
// Pilosa, §4.7).
import { STANDARD_VIEW } from '../domain/names.js';
import type { ReadonlyField, ReadonlyFragment, ReadonlyHolder } from '../state/readonly.js';
import { type ShardRanking, rankShard } from './topn-select.js';

const caches = new WeakMap<ReadonlyField, Map<number, number[]>>();
/** Bumped whenever any cache changes: the candidate unions below are kept until it moves. */
let generation = 0;

export function recalculateCaches(holder: ReadonlyHolder): void {
  for (const index of holder.indexes.values()) {
    for (const field of index.fields.values()) {
      if (field.options.cacheType === 'none') continue;
      const view = field.view(STANDARD_VIEW);
      const next = new Map<number, number[]>();
      const prev = caches.get(field);
      if (view !== undefined) {
        for (const [shard, frag] of view.fragments) next.set(shard, rank(field, frag, prev?.get(shard)));
      }
      caches.set(field, next);
    }
  }
  generation++;
}

/** The candidate rows of one shard (computed now if that shard was never cached). */
export function cachedRows(field: ReadonlyField, shard: number, frag: ReadonlyFragment): readonly number[] {
  let byShard = caches.get(field);
  if (byShard === undefined) {
    byShard = new Map();
    caches.set(field, byShard);
  }
  let rows = byShard.get(shard);
  if (rows === undefined) {
    rows = rank(field, frag, undefined);
    byShard.set(shard, rows);
    generation++;
  }
  return rows;
}

interface Union {
  generation: number;
  shards: string;
  rows: ReadonlySet<number>;
}
const unions = new WeakMap<ReadonlyField, Union>();

/**
 * The union of the caches of these shards (TopN's candidates), kept until a cache changes: a
 * TopN over many shards would otherwise build the same set of thousands of rows every time.
 */
export function cachedUnion(
  field: ReadonlyField,
  shards: readonly number[],
  fragment: (shard: number) => ReadonlyFragment | undefined,
): ReadonlySet<number> {
  const key = shards.join(',');
  const known = unions.get(field);
  if (
    known !== undefined &&
    known.generation === generation &&
    known.shards === key &&
    allCached(field, shards, fragment)
  )
    return known.rows;
  const rows = new Set<number>();
  for (const s of shards) {
    const frag = fragment(s);
    if (frag !== undefined) for (const r of cachedRows(field, s, frag)) rows.add(r);
  }
  // cachedRows may have filled a shard's cache (and moved the generation) on the way.
  unions.set(field, { generation, shards: key, rows });
  return rows;
}

/** Whether every shard with a fragment has its cache (a fragment new since would fill one). */
function allCached(
  field: ReadonlyField,
  shards: readonly number[],
  fragment: (shard: number) => ReadonlyFragment | undefined,
): boolean {
  const byShard = caches.get(field);
  for (const s of shards) if (byShard?.has(s) !== true && fragment(s) !== undefined) return false;
  return true;
}

const rankings = new WeakMap<ReadonlyFragment, { version: number; ranking: ShardRanking }>();

/**
 * Every row of the fragment ranked by its bit count now (not as of the last recalculation: TopN
 * counts exactly), rebuilt after the fragment changes, from bit counts alone (no row views).
 */
export function rankingOf(frag: ReadonlyFragment): ShardRanking {
  const known = rankings.get(frag);
  if (known !== undefined && known.version === frag.version) return known.ranking;
  const ranking = rankShard(frag.rowSizes());
  rankings.set(frag, { version: frag.version, ranking });
  return ranking;
}

function rank(field: ReadonlyField, frag: ReadonlyFragment, previous: number[] | undefined): number[] {
  const size = field.options.cacheSize;
  if (field.options.cacheType === 'lru') {
    // Most recent first: rows new since the last pass, then the survivors in their old order.
    const known = new Set(previous ?? []);
    const fresh = frag.rowIds().filter((r) => !known.has(r));
    const kept = (previous ?? []).filter((r) => frag.hasRow(r));
    return [...fresh, ...kept].slice(0, size);
  }
  const counted: [number, number][] = [];
  for (const [id, size] of frag.rowSizes()) counted.push([id, size]);
  counted.sort((a, b) => b[1] - a[1] || a[0] - b[0]);
  return counted.slice(0, size).map(([id]) => id);
}
