// Bits and serialized bytes held per index, for /metrics. Walking every row bitmap is cheap per
// row (roaring keeps per-container cardinalities) but grows with the number of rows, so a walk
// that took noticeable time is reused for a while: a scrape never spends more than about 1% of
// the wall clock walking the state. A cheap walk (a small state) is simply redone each scrape.
import type { ReadonlyHolder } from '../state/readonly.js';
import { systemClock } from '../util/clock.js';

export interface IndexFootprint {
  index: string;
  bits: number;
  bytes: number;
}

const CHEAP_WALK_MS = 5;
const cache = new WeakMap<ReadonlyHolder, { at: number; seq: number; tookMs: number; figures: IndexFootprint[] }>();

export function indexFootprints(holder: ReadonlyHolder): IndexFootprint[] {
  const now = systemClock.monotonic();
  const hit = cache.get(holder);
  if (
    hit !== undefined &&
    (hit.seq === holder.appliedSeq || (hit.tookMs > CHEAP_WALK_MS && now - hit.at < 100 * hit.tookMs))
  )
    return hit.figures;
  const figures: IndexFootprint[] = [];
  for (const index of holder.indexes.values()) {
    let bits = 0;
    let bytes = 0;
    for (const field of index.fields.values())
      for (const view of field.views.values())
        for (const fragment of view.fragments.values()) {
          const f = fragment.footprint();
          bits += f.bits;
          bytes += f.bytes;
        }
    figures.push({ index: index.name, bits, bytes });
  }
  cache.set(holder, { at: now, seq: holder.appliedSeq, tookMs: systemClock.monotonic() - now, figures });
  return figures;
}
