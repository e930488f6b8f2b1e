// /internal/shards/max and 0.x /slices/max: the highest shard holding data, per index.
import { MAX_SHARD } from '../domain/shard.js';
import type { Holder } from '../state/holder.js';

/** Highest shard holding data, per index by name; 0 for an empty index. */
export function maxShards(h: Holder): { [index: string]: number } {
  const out: { [index: string]: number } = {};
  for (const idx of h.sortedIndexes()) {
    // Shards past MAX_SHARD (stored before imports were range-checked) are not reported: a Go
    // client could not parse them (uint64), and no valid column lives there.
    const shards = idx.shards();
    let i = shards.length - 1;
    while (i >= 0 && shards[i] > MAX_SHARD) i--;
    out[idx.name] = i < 0 ? 0 : shards[i];
  }
  return out;
}
