// Sum/Min/Max over an int field and MinRow/MaxRow over a set-like field, per shard then merged.
// Merging is exact: equal extremes from several shards add their counts (Pilosa keeps one
// shard's count), and a filter only ever selects its own columns' values.
import { STANDARD_VIEW, bsiViewName } from '../domain/names.js';
import { bsiMax, bsiMin, bsiSum, type ValCount } from '../state/bsi.js';
import type { QueryResult } from './result.js';
import { bitmapAt, outShards } from './bitmap-eval.js';
import type { ReadContext } from './context.js';
import type { ReadPlan } from './plan.js';
import { isKeyedField, rowKeyOf } from './refs.js';

type Work<T> = Generator<void, T, undefined>;

export function* valCount(ctx: ReadContext, p: Extract<ReadPlan, { kind: 'valCount' }>): Work<QueryResult> {
  const view = bsiViewName(p.field.name);
  let acc: ValCount | undefined;
  for (const s of p.filter === undefined ? ctx.shards : outShards(ctx, p.filter)) {
    const frag = ctx.fragment(p.field, view, s);
    if (frag !== undefined) {
      const filter = p.filter === undefined ? undefined : bitmapAt(ctx, p.filter, s);
      const { base, bitDepth } = p.field;
      if (p.op === 'sum') {
        const r = bsiSum(frag, filter, base, bitDepth);
        acc = { value: (acc?.value ?? 0n) + r.value, count: (acc?.count ?? 0) + r.count };
      } else {
        const r = p.op === 'min' ? bsiMin(frag, filter, base, bitDepth) : bsiMax(frag, filter, base, bitDepth);
        if (r !== undefined) acc = better(acc, r, p.op);
      }
    }
    yield;
  }
  if (acc === undefined || acc.count === 0) return { type: 'valcount', value: 0n, count: 0 };
  return { type: 'valcount', value: acc.value, count: acc.count };
}

function better(acc: ValCount | undefined, r: ValCount, op: 'min' | 'max'): ValCount {
  if (acc === undefined) return r;
  if (r.value === acc.value) return { value: r.value, count: acc.count + r.count };
  return (op === 'min' ? r.value < acc.value : r.value > acc.value) ? r : acc;
}

/**
 * The smallest/largest row with a bit (∩ filter). Without a filter the count is 1, as in Pilosa
 * ("a row exists"); with one it is the row's intersection count over all shards.
 */
export function* minMaxRow(ctx: ReadContext, p: Extract<ReadPlan, { kind: 'minMaxRow' }>): Work<QueryResult> {
  let best: { id: number; count: number } | undefined;
  for (const s of p.filter === undefined ? ctx.shards : outShards(ctx, p.filter)) {
    const frag = ctx.fragment(p.field, STANDARD_VIEW, s);
    if (frag !== undefined && !frag.isEmpty) {
      const ids = frag.rowIds();
      if (p.op === 'max') ids.reverse();
      const filter = p.filter === undefined ? undefined : bitmapAt(ctx, p.filter, s);
      for (const id of ids) {
        // Rows past the current best cannot win in this shard.
        if (best !== undefined && (p.op === 'min' ? id > best.id : id < best.id)) break;
        const count = filter === undefined ? 1 : (frag.row(id)?.andCardinality(filter) ?? 0);
        if (count === 0) continue;
        if (best === undefined || id !== best.id) best = { id, count };
        else if (filter !== undefined) best = { id, count: best.count + count };
        break;
      }
    }
    yield;
  }
  if (best === undefined) return { type: 'pair', pair: { id: 0, count: 0 } };
  const pair = isKeyedField(p.field)
    ? { id: best.id, key: rowKeyOf(ctx.index, p.field, best.id), count: best.count }
    : { ...best };
  return { type: 'pair', pair };
}
