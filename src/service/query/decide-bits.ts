// Set and Clear of one column: decide the events against the current state and emit them, by
// the rules of the write model (service/write-model/bits.ts) that imports follow too.
// `changed` is exact: true only when a bit (or a value) of the field actually changed; the
// existence bit Set records is not part of it (as in Pilosa).
import { INVERSE_VIEW, bsiViewName } from '../../domain/names.js';
import { type ColumnId, offsetOf, shardOf } from '../../domain/shard.js';
import type { EventSink } from '../../events/types.js';
import { resolveCol, resolveRow } from '../../executor/index.js';
import { bsiValue } from '../../state/bsi.js';
import { inverseEnabled } from '../legacy/legacy-meta.js';
import { assert } from '../../util/assert.js';
import { clearOtherRowsOfColumn, isExclusive, markExists, needsExists, setViews } from '../write-model/bits.js';
import type { WritePlan } from './write-plan.js';
import type { ReadonlyField, ReadonlyIndex } from '../../state/readonly.js';

type Plan<K extends WritePlan['kind']> = Extract<WritePlan, { kind: K }>;

// One offset as a plain array: no native bitmap per Set() (see ColumnOffsets).
const one = (offset: number): Uint32Array => Uint32Array.of(offset);

function assignedCol(index: ReadonlyIndex, p: { col: Plan<'set'>['col'] }): ColumnId {
  const col = resolveCol(index, p.col);
  assert(col !== undefined, 'set: column key was not assigned');
  return col;
}

export function decideSet(index: ReadonlyIndex, p: Plan<'set'>, sink: EventSink): boolean {
  const col = assignedCol(index, p);
  const row = resolveRow(index, p.field, p.row);
  assert(row !== undefined, 'set: row key was not assigned');
  // The existence bit rides on the field's BitsSet when there is one: one log record per Set().
  let exists = needsExists(index, col);
  const { field } = p;
  const [shard, off] = [shardOf(col), offsetOf(col)];
  // At most one row per column: clear the column's other row first.
  let changed = isExclusive(field) && clearOtherRowsOfColumn(index.name, field, shard, off, row, sink);
  for (const view of setViews(field, p.timestamp)) {
    if (field.view(view)?.fragment(shard)?.has(row, off) === true) continue;
    sink.emit({
      type: 'BitsSet',
      index: index.name,
      field: field.name,
      view,
      shard,
      rows: [row],
      columns: [one(off)],
      ...(exists ? { exists } : {}),
    });
    exists = false;
    changed = true;
  }
  if (exists) markExists(index, col, sink);
  // The standard view alone says whether the bit changed (the inverse view mirrors it).
  // The plan refused a bigint column on an inverse-enabled frame (compileWrite).
  if (typeof col === 'number' && inverseEnabled(index, field.name)) setInverse(index, field, row, col, sink);
  return changed;
}

/** The transposed bit (column → row) in the inverse view of a 0.x inverseEnabled frame. */
function setInverse(index: ReadonlyIndex, field: ReadonlyField, row: number, col: number, sink: EventSink): void {
  const [shard, off] = [shardOf(row), offsetOf(row)];
  if (field.view(INVERSE_VIEW)?.fragment(shard)?.has(col, off) === true) return;
  sink.emit({
    type: 'BitsSet',
    index: index.name,
    field: field.name,
    view: INVERSE_VIEW,
    shard,
    rows: [col],
    columns: [one(off)],
  });
}

export function decideSetValue(index: ReadonlyIndex, p: Plan<'setValue'>, sink: EventSink): boolean {
  const col = assignedCol(index, p);
  markExists(index, col, sink);
  const { field } = p;
  const [shard, off] = [shardOf(col), offsetOf(col)];
  const frag = field.view(bsiViewName(field.name))?.fragment(shard);
  if (frag !== undefined && bsiValue(frag, off, field.base, field.bitDepth) === p.value) return false;
  sink.emit({
    type: 'ValuesSet',
    index: index.name,
    field: field.name,
    shard,
    columns: Uint32Array.of(off),
    values: BigInt64Array.of(p.value),
  });
  return true;
}

/**
 * Clears the bit from the standard view and every time view. Int fields have no standard view:
 * nothing to clear (Pilosa 1.4). Unknown keys name nothing: false.
 */
export function decideClear(index: ReadonlyIndex, p: Plan<'clear'>, sink: EventSink): boolean {
  const col = resolveCol(index, p.col);
  const row = resolveRow(index, p.field, p.row);
  if (col === undefined || row === undefined || p.field.options.type === 'int') return false;
  const [shard, off] = [shardOf(col), offsetOf(col)];
  let changed = false;
  for (const [name, view] of p.field.views) {
    if (name === INVERSE_VIEW) {
      // Transposed: the column is the row there (rows stop at 2^53 − 1: no bigint column is set).
      if (typeof col !== 'number') continue;
      if (view.fragment(shardOf(row))?.has(col, offsetOf(row)) !== true) continue;
      sink.emit({
        type: 'BitsCleared',
        index: index.name,
        field: p.field.name,
        view: name,
        shard: shardOf(row),
        rows: [col],
        columns: [one(offsetOf(row))],
      });
      continue;
    }
    if (view.fragment(shard)?.has(row, off) !== true) continue;
    sink.emit({
      type: 'BitsCleared',
      index: index.name,
      field: p.field.name,
      view: name,
      shard,
      rows: [row],
      columns: [one(off)],
    });
    changed = true;
  }
  return changed;
}
