// Key → ID assignment for the writes of one request, decided before any call runs: the new
// keys of each translator (column keys of the index, row keys of a field) in order of first
// appearance, as ONE KeysAssigned event per translator starting at its nextId (the shared
// service/key-assign.ts does the translating). Reads never assign (an unknown key reads as
// empty), nor do Clear/ClearRow (nothing to clear).
import type { EventSink } from '../../events/types.js';
import type { ColRef, Ref } from '../../executor/index.js';
import { assignKeys as assignBulk } from '../write-model/keys.js';
import type { WritePlan } from './write-plan.js';
import type { ReadonlyIndex } from '../../state/readonly.js';

export function assignKeys(index: ReadonlyIndex, plans: readonly WritePlan[], sink: EventSink): void {
  const { columns, rows } = writeKeys(plans);
  assignBulk(index.columnKeys, columns, sink, index.name, '');
  for (const [field, keys] of rows) assignBulk(index.rowKeys.get(field), keys, sink, index.name, field);
}

/** The keys the writes assign: column keys, and row keys by field, in order of appearance. */
export function writeKeys(plans: readonly WritePlan[]): { columns: string[]; rows: Map<string, string[]> } {
  const columns: string[] = [];
  const rows = new Map<string, string[]>();
  const col = (ref: ColRef): void => {
    if (typeof ref === 'string') columns.push(ref);
  };
  const row = (field: string, ref: Ref): void => {
    if (typeof ref !== 'string') return;
    let keys = rows.get(field);
    if (keys === undefined) rows.set(field, (keys = []));
    keys.push(ref);
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
  return { columns, rows };
}
