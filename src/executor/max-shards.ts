// /internal/shards/max and 0.x /slices/max: the highest shard holding data, per index.
import type { Holder } from '../state/holder.js';

/** Highest shard holding data, per index by name; 0 for an empty index. */
export function maxShards(h: Holder): { [index: string]: number } {
  const out: { [index: string]: number } = {};
  for (const idx of h.sortedIndexes()) {
    const shards = idx.shards();
    out[idx.name] = shards.length === 0 ? 0 : shards[shards.length - 1];
  }
  return out;
}
