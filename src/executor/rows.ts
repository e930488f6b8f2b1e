// Rows(): the row IDs with at least one bit (in the standard view, or for time fields the time
// views of a range), optionally after `previous`, only those holding `column`, up to `limit`.
import { STANDARD_VIEW } from '../domain/names.js';
import { offsetOf, shardOf } from '../domain/shard.js';
import { quantumUnits, viewPeriod } from '../domain/time-quantum.js';
import { checkResultRows } from './budget.js';
import type { QueryResult } from './result.js';
import { type ReadContext, existingTimeViews } from './context.js';
import type { RowsSpec } from './plan.js';
import { isKeyedField, resolveCol, rowKeyOf, rowOrdinal } from './refs.js';
import type { ReadonlyIndex } from '../state/readonly.js';

type Work<T> = Generator<void, T, undefined>;

export function* rowIds(ctx: ReadContext, spec: RowsSpec): Work<number[]> {
  const views = rowsViews(spec);
  const start = spec.previous === undefined ? 0 : rowOrdinal(ctx.index, spec.field, spec.previous) + 1;
  let shards = ctx.shards;
  let offset: number | undefined;
  if (spec.column !== undefined) {
    const col = resolveCol(ctx.index, spec.column);
    if (col === undefined) return [];
    shards = [shardOf(col)];
    offset = offsetOf(col);
  }
  const found = new Set<number>();
  for (const s of shards) {
    for (const v of views) {
      const frag = ctx.fragment(spec.field, v, s);
      if (frag === undefined) continue;
      let seen = 0;
      // IDs alone make no views of packed rows (state/fragment.ts); a column test views them.
      for (const id of frag.rowKeys()) {
        if (id >= start && (offset === undefined || frag.has(id, offset))) found.add(id);
        // A field can have millions of rows in one shard; the map is not changed meanwhile
        // (the async driver abandons the work if the state changed while it waited).
        if (++seen % ROWS_PER_YIELD === 0) yield;
      }
    }
    yield;
  }
  const ids = [...found].sort((a, b) => a - b);
  return spec.limit === undefined ? ids : ids.slice(0, spec.limit);
}

const ROWS_PER_YIELD = 4096;

export function* rows(ctx: ReadContext, spec: RowsSpec): Work<QueryResult> {
  return rowsResult(ctx.index, spec, yield* rowIds(ctx, spec), ctx.opts.maxResultRows);
}

/** The row IDs of disjoint shard sets (each ascending, each cut at the limit) as one. */
export function mergeRowIds(spec: RowsSpec, lists: readonly (readonly number[])[]): number[] {
  if (lists.length === 1) return [...lists[0]];
  const ids = [...new Set(lists.flat())].sort((a, b) => a - b);
  return spec.limit === undefined ? ids : ids.slice(0, spec.limit);
}

export function rowsResult(
  index: ReadonlyIndex,
  spec: RowsSpec,
  ids: number[],
  maxResultRows: number | undefined,
): QueryResult {
  checkResultRows(ids.length, maxResultRows, 'Rows');
  if (isKeyedField(spec.field))
    return { type: 'rowids', rows: [], keys: ids.map((id) => rowKeyOf(index, spec.field, id)) };
  return { type: 'rowids', rows: ids };
}

/**
 * Time fields with from/to (or without a standard view) read the time views of the range,
 * clamped to the span of the existing views of the quantum's coarsest unit (Pilosa minMaxViews).
 */
function rowsViews(spec: RowsSpec): string[] {
  if (spec.time === undefined) return [STANDARD_VIEW];
  const { field } = spec;
  const coarsest = quantumUnits(field.options.timeQuantum)[0];
  if (coarsest === undefined) return [];
  let min = Infinity;
  let max = -Infinity;
  for (const name of field.views.keys()) {
    const p = viewPeriod(name);
    if (p === undefined || p.unit !== coarsest) continue;
    min = Math.min(min, p.start);
    max = Math.max(max, p.end);
  }
  if (min >= max) return [];
  const from = spec.time.from === undefined || spec.time.from < min ? min : spec.time.from;
  const to = spec.time.to === undefined || spec.time.to > max ? max : spec.time.to;
  return existingTimeViews(field, from, to);
}
