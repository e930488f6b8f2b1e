// Whole-row writes: ClearRow and Store, over the call's shards (the request's `shards`, else
// every shard with data). Bitmaps in events are fresh copies, never live fragment rows.
import { STANDARD_VIEW } from '../../domain/names.js';
import type { EventSink } from '../../events/types.js';
import { type ReadContext, bitmapAt, resolveRow } from '../../executor/index.js';
import { type Bitmap, RoaringBitmap32 } from '../../roaring/bitmap.js';
import { assert } from '../../util/assert.js';
import type { WritePlan } from './write-plan.js';

type Plan<K extends WritePlan['kind']> = Extract<WritePlan, { kind: K }>;

/**
 * Removes the row from every view. Without explicit shards that is every shard (one RowCleared);
 * with them, only those shards (BitsCleared per view and shard). True if any bit was removed.
 */
export function decideClearRow(
  ctx: ReadContext,
  explicitShards: boolean,
  p: Plan<'clearRow'>,
  sink: EventSink,
): boolean {
  const row = resolveRow(ctx.index, p.field, p.row);
  if (row === undefined) return false;
  const index = ctx.index.name;
  const field = p.field.name;
  if (!explicitShards) {
    let found = false;
    for (const view of p.field.views.values()) for (const frag of view.fragments.values()) found ||= frag.hasRow(row);
    if (found) sink.emit({ type: 'RowCleared', index, field, row });
    return found;
  }
  let changed = false;
  for (const [name, view] of p.field.views) {
    for (const shard of ctx.shards) {
      const bm = view.fragment(shard)?.row(row);
      if (bm === undefined) continue;
      sink.emit({ type: 'BitsCleared', index, field, view: name, shard, rows: [row], columns: [bm.clone()] });
      changed = true;
    }
  }
  return changed;
}

/**
 * Replaces the row of the standard view, shard by shard, with the child's result. Without
 * explicit shards every shard with data takes part: one RowStored carries the whole new row.
 * With explicit shards only those change, as BitsSet/BitsCleared deltas.
 */
export function decideStore(ctx: ReadContext, explicitShards: boolean, p: Plan<'store'>, sink: EventSink): boolean {
  const row = resolveRow(ctx.index, p.field, p.row);
  assert(row !== undefined, 'store: row key was not assigned');
  // Decide every shard before emitting: the child may read the row being replaced.
  const next = new Map<number, Bitmap>();
  const deltas: { shard: number; add: Bitmap; remove: Bitmap }[] = [];
  for (const shard of ctx.shards) {
    const bm = bitmapAt(ctx, p.child, shard);
    if (!bm.isEmpty) next.set(shard, bm.clone());
    const prev = p.field.view(STANDARD_VIEW)?.fragment(shard)?.row(row);
    const add = prev === undefined ? bm.clone() : RoaringBitmap32.andNot(bm, prev);
    const remove = prev === undefined ? new RoaringBitmap32() : RoaringBitmap32.andNot(prev, bm);
    if (!add.isEmpty || !remove.isEmpty) deltas.push({ shard, add, remove });
  }
  if (deltas.length === 0) return false;
  const base = { index: ctx.index.name, field: p.field.name, view: STANDARD_VIEW };
  if (!explicitShards) {
    sink.emit({ type: 'RowStored', ...base, row, shards: [...next.keys()], columns: [...next.values()] });
    return true;
  }
  for (const d of deltas) {
    if (!d.remove.isEmpty)
      sink.emit({ type: 'BitsCleared', ...base, shard: d.shard, rows: [row], columns: [d.remove] });
    if (!d.add.isEmpty) sink.emit({ type: 'BitsSet', ...base, shard: d.shard, rows: [row], columns: [d.add] });
  }
  return true;
}
