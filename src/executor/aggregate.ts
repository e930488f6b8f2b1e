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
import type { ReadonlyIndex } from '../state/readonly.js';

type Work<T> = Generator<void, T, undefined>;

type ValCountPlan = Extract<ReadPlan, { kind: 'valCount' }>;
type MinMaxRowPlan = Extract<ReadPlan, { kind: 'minMaxRow' }>;
/** The best row of some shards: its ID and count (1 without a filter). */
export type BestRow = { id: number; count: number };

export function* valCount(ctx: ReadContext, p: ValCountPlan): Work<QueryResult> {
  return valCountResult(yield* valCountAcc(ctx, p));
}

/** Sum, or the extreme with its count, over the context's shards; undefined: no value. */
export function* valCountAcc(ctx: ReadContext, p: ValCountPlan): Work<ValCount | undefined> {
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
  return acc;
}

/** Two accumulations of disjoint shard sets as one. */
export function mergeValCount(
  op: ValCountPlan['op'],
  a: ValCount | undefined,
  b: ValCount | undefined,
): ValCount | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return op === 'sum' ? { value: a.value + b.value, count: a.count + b.count } : better(a, b, op);
}

export function valCountResult(acc: ValCount | undefined): QueryResult {
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
export function* minMaxRow(ctx: ReadContext, p: MinMaxRowPlan): Work<QueryResult> {
  return minMaxRowResult(ctx.index, p, yield* minMaxBest(ctx, p));
}

export function* minMaxBest(ctx: ReadContext, p: MinMaxRowPlan): Work<BestRow | undefined> {
  let best: BestRow | undefined;
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
  return best;
}

/** The best rows of disjoint shard sets as one: the same row adds its counts (with a filter). */
export function mergeBestRow(p: MinMaxRowPlan, a: BestRow | undefined, b: BestRow | undefined): BestRow | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  if (a.id === b.id) return p.filter === undefined ? a : { id: a.id, count: a.count + b.count };
  return (p.op === 'min' ? b.id < a.id : b.id > a.id) ? b : a;
}

export function minMaxRowResult(index: ReadonlyIndex, p: MinMaxRowPlan, best: BestRow | undefined): QueryResult {
  if (best === undefined) return { type: 'pair', pair: { id: 0, count: 0 } };
  const pair = isKeyedField(p.field)
    ? { id: best.id, key: rowKeyOf(index, p.field, best.id), count: best.count }
    : { ...best };
  return { type: 'pair', pair };
}
