// The write model of bits: the rules that every writer of a set, mutex, bool or time field
// follows — PQL Set/Clear (service/query/decide-bits.ts), HTTP imports, Kafka-fed imports and
// legacy input (service/import/import-service.ts) — stated once. Each rule has a one-column form
// (a Set() must not build a native bitmap) and, where imports need it, a batch form beside it.
// docs/ARCHITECTURE.md, "One write model", lists them.
import { badRequest } from '../../domain/errors.js';
import { EXISTS_FIELD, STANDARD_VIEW } from '../../domain/names.js';
import { type ColumnId, offsetOf, SHARD_WIDTH, shardOf } from '../../domain/shard.js';
import type { IdArray } from '../../domain/id-array.js';
import { viewsForTimestamp } from '../../domain/time-quantum.js';
import type { EventSink } from '../../events/types.js';
import { type Bitmap, RoaringBitmap32 } from '../../roaring/bitmap.js';
import type { ReadonlyField, ReadonlyIndex } from '../../state/readonly.js';

// ---- Exclusivity: a mutex or bool field holds at most one row per column.

export function isExclusive(field: ReadonlyField): boolean {
  return field.options.type === 'mutex' || field.options.type === 'bool';
}

/** Bool fields have rows 0 (false) and 1 (true) only. */
export function checkBoolRow(field: Pick<ReadonlyField, 'name' | 'options'>, row: number, item?: number): void {
  if (field.options.type !== 'bool' || row === 0 || row === 1) return;
  throw badRequest(
    item === undefined
      ? `bool field ${field.name} only has rows 0 and 1, not ${row}`
      : `bool field imports only support rows 0 and 1: item ${item} has row ${row}`,
  );
}

/** One column set in `row`: clears it from the field's other rows. Returns whether it did. */
export function clearOtherRowsOfColumn(
  index: string,
  field: ReadonlyField,
  shard: number,
  offset: number,
  row: number,
  sink: EventSink,
): boolean {
  const frag = field.view(STANDARD_VIEW)?.fragment(shard);
  if (frag === undefined) return false;
  const others: number[] = [];
  for (const [r, bm] of frag.rows) if (r !== row && bm.has(offset)) others.push(r);
  if (others.length === 0) return false;
  sink.emit({
    type: 'BitsCleared',
    index,
    field: field.name,
    view: STANDARD_VIEW,
    shard,
    rows: others,
    columns: others.map(() => Uint32Array.of(offset)),
  });
  return true;
}

/** Batch form: every column set in some row of `b` is cleared from every other row of the fragment. */
export function clearOtherRows(
  index: string,
  field: ReadonlyField,
  view: string,
  shard: number,
  b: { rows: number[]; columns: Bitmap[] },
  sink: EventSink,
): void {
  const frag = field.view(view)?.fragment(shard);
  if (!frag) return;
  const all = RoaringBitmap32.orMany(b.columns);
  const rows: number[] = [];
  const columns: Bitmap[] = [];
  for (const [row, bits] of frag.rows) {
    const mine = b.rows.indexOf(row);
    const clear = RoaringBitmap32.and(bits, all);
    if (mine >= 0) clear.andNotInPlace(b.columns[mine]);
    if (!clear.isEmpty) {
      rows.push(row);
      columns.push(clear);
    }
  }
  if (rows.length > 0) sink.emit({ type: 'BitsCleared', index, field: field.name, view, shard, rows, columns });
}

/** Within one request, the last pair for a column wins (Pilosa's bulkImportMutex). */
export function lastPerColumn(rows: IdArray, cols: IdArray): [IdArray, IdArray] {
  const last = new Map<number, number>();
  for (let i = 0; i < cols.length; i++) last.set(cols[i], rows[i]);
  if (last.size === cols.length) return [rows, cols];
  return [Float64Array.from(last.values()), Float64Array.from(last.keys())];
}

// ---- Views: where a set bit goes.

/**
 * The views a bit set at `timestampMs` (undefined: none) is written to: standard (unless a time
 * field opts out) plus, on a time field with a timestamp, one view per quantum unit.
 */
export function setViews(field: Pick<ReadonlyField, 'options'>, timestampMs: number | undefined): string[] {
  if (field.options.type !== 'time') return [STANDARD_VIEW];
  const views = field.options.noStandardView ? [] : [STANDARD_VIEW];
  if (timestampMs !== undefined) views.push(...viewsForTimestamp(timestampMs, field.options.timeQuantum));
  return views;
}

// ---- Existence: a column written by a set (or a value) is marked in `_exists`.

/** Whether the column still needs its bit in `_exists` (existence tracked and not yet set). */
export function needsExists(index: ReadonlyIndex, col: ColumnId): boolean {
  const ex = index.existence;
  return ex !== undefined && ex.view(STANDARD_VIEW)?.fragment(shardOf(col))?.has(0, offsetOf(col)) !== true;
}

/** Sets one column's bit in `_exists` when the index tracks existence and it is not set. */
export function markExists(index: ReadonlyIndex, col: ColumnId, sink: EventSink): void {
  if (!needsExists(index, col)) return;
  sink.emit({
    type: 'BitsSet',
    index: index.name,
    field: EXISTS_FIELD,
    view: STANDARD_VIEW,
    shard: shardOf(col),
    rows: [0],
    columns: [Uint32Array.of(offsetOf(col))],
  });
}

/** Batch form for writes that carry no BitsSet of their own (int values): one event per shard. */
export function markExistsAll(
  index: ReadonlyIndex,
  cols: IdArray,
  shards: Map<number, Uint32Array | undefined>,
  sink: EventSink,
  baseShard = 0, // cols and shards are relative to it (an import of IDs above 2^53−1)
): void {
  if (!index.existence) return;
  for (const [shard, idx] of shards) {
    const n = idx === undefined ? cols.length : idx.length;
    const offsets = new Uint32Array(n);
    for (let j = 0; j < n; j++) offsets[j] = cols[idx === undefined ? j : idx[j]] - shard * SHARD_WIDTH;
    sink.emit({
      type: 'BitsSet',
      index: index.name,
      field: EXISTS_FIELD,
      view: STANDARD_VIEW,
      shard: shard + baseShard,
      rows: [0],
      columns: [new RoaringBitmap32(offsets)],
    });
  }
}
