// Executes one compiled read call. Every call is a generator that yields between shards: a
// synchronous driver runs it straight through, the asynchronous one returns to the event loop
// between slices (see query.ts). A plan never mutates state.
import type { ColumnId } from '../domain/shard.js';
import type { AttrMap } from '../domain/types.js';
import { assertNever } from '../util/assert.js';
import type { QueryResult, RowColumns } from './result.js';
import { minMaxRow, valCount } from './aggregate.js';
import { countAt, countRowsIntersect, outShards, planRowColumns } from './bitmap-eval.js';
import { columnArray } from './shard-columns.js';
import type { ReadContext, ResultOptions } from './context.js';
import { groupBy } from './group-by.js';
import type { BitmapPlan, ReadPlan } from './plan.js';
import { columnKeyOf, resolveRow } from './refs.js';
import { rows } from './rows.js';
import { topN } from './topn.js';
import type { ReadonlyIndex } from '../state/readonly.js';

export type Work<T> = Generator<void, T, undefined>;

export interface CallOutput {
  result: QueryResult;
  /** Column IDs of a row result, for the response's columnAttrs. */
  columns?: RowColumns;
  /** Options(columnAttrs=true) switches the response-level columnAttrs on. */
  columnAttrs?: boolean;
}

/** executeRead straight through; a Count skips the generator (the commonest small query). */
export function executeReadSync(ctx: ReadContext, plan: ReadPlan): CallOutput {
  if (plan.kind !== 'count') return drainSync(executeRead(ctx, plan));
  return { result: { type: 'count', n: countSync(ctx, plan.child) } };
}

/** Count(child), yielding between shards, not after the last: a one-shard count never suspends. */
export function* countWork(ctx: ReadContext, child: BitmapPlan): Work<number> {
  const shards = outShards(ctx, child);
  let n = 0;
  for (let i = 0; i < shards.length; i++) {
    if (i > 0) yield;
    n += countAt(ctx, child, shards[i]);
  }
  return n;
}

/** Count(child) straight through. */
export function countSync(ctx: ReadContext, child: BitmapPlan): number {
  if (child.kind === 'intersect') {
    const n = countRowsIntersect(ctx, child.children);
    if (n !== undefined) return n;
  }
  const shards = outShards(ctx, child);
  let n = 0;
  for (let i = 0; i < shards.length; i++) n += countAt(ctx, child, shards[i]);
  return n;
}

export function drainSync<T>(work: Work<T>): T {
  for (;;) {
    const r = work.next();
    if (r.done === true) return r.value;
  }
}

export function* executeRead(ctx: ReadContext, plan: ReadPlan): Work<CallOutput> {
  switch (plan.kind) {
    case 'bitmap': {
      const columns = ctx.opts.excludeColumns ? [] : yield* planRowColumns(ctx, plan.plan);
      return bitmapOutput(ctx.index, plan, columns, ctx.opts);
    }
    case 'count':
      return { result: { type: 'count', n: yield* countWork(ctx, plan.child) } };
    case 'valCount':
      return { result: yield* valCount(ctx, plan) };
    case 'minMaxRow':
      return { result: yield* minMaxRow(ctx, plan) };
    case 'topN':
      return { result: yield* topN(ctx, plan) };
    case 'rows':
      return { result: yield* rows(ctx, plan.spec) };
    case 'groupBy':
      return { result: yield* groupBy(ctx, plan) };
    case 'options': {
      const out = yield* executeRead(ctx.withSettings(plan.settings), plan.child);
      return plan.settings.columnAttrs === true ? { ...out, columnAttrs: true } : out;
    }
    default:
      return assertNever(plan, 'read plan');
  }
}

/** A top-level bitmap call's output from its columns (over all shards): row attributes, keys. */
export function bitmapOutput(
  index: ReadonlyIndex,
  plan: Extract<ReadPlan, { kind: 'bitmap' }>,
  columns: RowColumns,
  opts: ResultOptions,
): CallOutput {
  let attrs: AttrMap = {};
  if (plan.attrs !== undefined && !opts.excludeRowAttrs) {
    const id = resolveRow(index, plan.attrs.field, plan.attrs.row);
    attrs = { ...(id === undefined ? {} : (plan.attrs.field.rowAttrs.get(id) ?? {})) };
  }
  return { result: rowResultOf(index, columns, attrs), columns };
}

/** A Row-shaped result: keys instead of columns on an index with keys (§4.5). */
export function rowResult(ctx: ReadContext, columns: ColumnId[], attrs: AttrMap): QueryResult {
  return rowResultOf(ctx.index, columns, attrs);
}

export function rowResultOf(index: ReadonlyIndex, columns: RowColumns, attrs: AttrMap): QueryResult {
  if (index.options.keys)
    // Keys are assigned IDs from 1 on: a column beyond 2^53−1 (import-roaring) has none.
    return {
      type: 'row',
      columns: [],
      keys: columnArray(columns).map((c) => (typeof c === 'number' ? columnKeyOf(index, c) : '')),
      attrs,
    };
  return { type: 'row', columns, attrs };
}
