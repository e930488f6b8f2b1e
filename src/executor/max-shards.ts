// /internal/shards/max and 0.x /slices/max: the highest shard holding data, per index.
import { INVERSE_VIEW } from '../domain/names.js';
import { MAX_SHARD } from '../domain/shard.js';
import type { ReadonlyHolder } from '../state/readonly.js';

/**
 * Highest shard holding data, per index by name; 0 for an empty index. The shards of a 0.x
 * inverse view number rows, not columns: they count apart (`inverse`). Shards past MAX_SHARD
 * (stored before imports were range-checked) are not reported: a Go client could not parse them
 * (uint64), and no valid column lives there.
 */
export function maxShards(h: ReadonlyHolder, inverse = false): { [index: string]: number } {
  const out: { [index: string]: number } = {};
  for (const idx of h.sortedIndexes()) {
    let max = 0;
    for (const f of idx.fields.values()) {
      for (const [name, v] of f.views) {
        if ((name === INVERSE_VIEW) !== inverse) continue;
        for (const s of v.fragments.keys()) if (s > max && s <= MAX_SHARD) max = s;
      }
    }
    out[idx.name] = max;
  }
  return out;
}
