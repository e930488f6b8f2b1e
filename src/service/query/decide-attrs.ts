// SetRowAttrs / SetColumnAttrs: merge an attribute patch (null deletes a key). An event is
// emitted only when the patch changes something, so the log carries no no-op updates.
import type { AttrMap, AttrPatch } from '../../domain/types.js';
import type { EventSink } from '../../events/types.js';
import { resolveCol, resolveRow } from '../../executor/index.js';
import { assert } from '../../util/assert.js';
import type { WritePlan } from './write-plan.js';
import type { ReadonlyIndex } from '../../state/readonly.js';

type Plan<K extends WritePlan['kind']> = Extract<WritePlan, { kind: K }>;

export function decideRowAttrs(index: ReadonlyIndex, p: Plan<'rowAttrs'>, sink: EventSink): void {
  const row = resolveRow(index, p.field, p.row);
  assert(row !== undefined, 'SetRowAttrs: row key was not assigned');
  if (!changes(p.field.rowAttrs.get(row), p.attrs)) return;
  sink.emit({ type: 'RowAttrsSet', index: index.name, field: p.field.name, row, attrs: { ...p.attrs } });
}

export function decideColumnAttrs(index: ReadonlyIndex, p: Plan<'columnAttrs'>, sink: EventSink): void {
  const column = resolveCol(index, p.col);
  // The plan refused columns above 2^53 − 1 (compileWrite): a number here.
  assert(typeof column === 'number', 'SetColumnAttrs: column key was not assigned');
  if (!changes(index.columnAttrs.get(column), p.attrs)) return;
  sink.emit({ type: 'ColumnAttrsSet', index: index.name, column, attrs: { ...p.attrs } });
}

function changes(current: AttrMap | undefined, patch: AttrPatch): boolean {
  for (const [k, v] of Object.entries(patch)) {
    const has = current !== undefined && Object.hasOwn(current, k);
    if (v === null ? has : !has || current[k] !== v) return true;
  }
  return false;
}
