// Key → ID assignment for the writes of one request, decided before any call runs: the new
// keys of each translator (column keys of the index, row keys of a field) in order of first
// appearance, as ONE KeysAssigned event per translator starting at its nextId. Reads never
// assign (an unknown key reads as empty), nor do Clear/ClearRow (nothing to clear).
import type { EventSink } from '../../events/types.js';
import type { Ref } from '../../executor/index.js';
import type { Index } from '../../state/index-state.js';
import type { WritePlan } from './write-plan.js';

export function assignKeys(index: Index, plans: readonly WritePlan[], sink: EventSink): void {
  const columns: string[] = [];
  const rows = new Map<string, string[]>();
  const seenCols = new Set<string>();
  const seenRows = new Map<string, Set<string>>();
  const col = (ref: Ref): void => {
    if (ref.kind !== 'key' || seenCols.has(ref.key) || index.columnKeys.id(ref.key) !== undefined) return;
    seenCols.add(ref.key);
    columns.push(ref.key);
  };
  const row = (field: string, ref: Ref): void => {
    if (ref.kind !== 'key' || index.rowKeys.get(field)?.id(ref.key) !== undefined) return;
    let seen = seenRows.get(field);
    if (seen === undefined) {
      seen = new Set();
      seenRows.set(field, seen);
      rows.set(field, []);
    }
    if (seen.has(ref.key)) return;
    seen.add(ref.key);
    rows.get(field)?.push(ref.key);
  };
  const visit = (p: WritePlan): void => {
    switch (p.kind) {
      case 'set':
        col(p.col);
        row(p.field.name, p.row);
        return;
      case 'setValue':
      case 'columnAttrs':
        col(p.col);
        return;
      case 'store':
      case 'rowAttrs':
        row(p.field.name, p.row);
        return;
      case 'clear':
      case 'clearRow':
        return;
      case 'options':
        visit(p.child);
        return;
    }
  };
  plans.forEach(visit);
  if (columns.length > 0) sink.emit({ type: 'KeysAssigned', index: index.name, field: '', firstId: index.columnKeys.nextId, keys: columns });
  for (const [field, keys] of rows) {
    const firstId = index.rowKeys.get(field)?.nextId ?? 1;
    sink.emit({ type: 'KeysAssigned', index: index.name, field, firstId, keys });
  }
}
