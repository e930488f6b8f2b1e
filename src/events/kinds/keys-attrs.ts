// Key and attribute events: string keys given IDs, row and column attribute patches.
import { fieldOf, indexOf, mergeAttrs } from '../apply-support.js';
import { assert } from '../../util/assert.js';
import type { AttrPatch, AttrValue } from '../../domain/types.js';
import type { EventKinds } from '../kind.js';
import { message, num, obj, str, strs } from '../proto-fields.js';

export type KeyAttrEvent =
  /** Keys given sequential IDs from firstId; field '' means the index's column keys. */
  | { type: 'KeysAssigned'; index: string; field: string; firstId: number; keys: string[] }
  | { type: 'RowAttrsSet'; index: string; field: string; row: number; attrs: AttrPatch }
  | { type: 'ColumnAttrsSet'; index: string; column: number; attrs: AttrPatch };

const M = {
  KeysAssigned: message('KeysAssigned'),
  RowAttrsSet: message('RowAttrsSet'),
  ColumnAttrsSet: message('ColumnAttrsSet'),
};

const ATTR_DELETE = 0,
  ATTR_STRING = 1,
  ATTR_INT = 2,
  ATTR_BOOL = 3,
  ATTR_FLOAT = 4;

function attrsOut(patch: AttrPatch): Record<string, unknown>[] {
  return Object.entries(patch).map(([key, v]) => {
    if (v === null) return { key, kind: ATTR_DELETE };
    if (typeof v === 'string') return { key, kind: ATTR_STRING, s: v };
    if (typeof v === 'bigint') return { key, kind: ATTR_INT, s: v.toString() };
    if (typeof v === 'boolean') return { key, kind: ATTR_BOOL, b: v };
    return { key, kind: ATTR_FLOAT, f: v };
  });
}

function attrsIn(list: unknown): AttrPatch {
  const out: AttrPatch = {};
  for (const a of (list ?? []) as Record<string, unknown>[]) {
    const key = str(a.key);
    const kind = num(a.kind ?? 0);
    let v: AttrValue | null;
    if (kind === ATTR_DELETE) v = null;
    else if (kind === ATTR_STRING) v = str(a.s);
    else if (kind === ATTR_INT) v = BigInt(str(a.s) || '0');
    else if (kind === ATTR_BOOL) v = a.b === true;
    else v = typeof a.f === 'number' ? a.f : 0;
    out[key] = v;
  }
  return out;
}

export const KEY_ATTR_EVENTS: EventKinds<KeyAttrEvent> = {
  KeysAssigned: {
    code: 11,
    replay: 'commutes',
    snapshot: 'global',
    apply(holder, event) {
      const index = indexOf(holder, event.index);
      const t = event.field === '' ? index.columnKeys : index.rowKeysFor(event.field);
      assert(
        event.firstId === t.nextId,
        `apply: keys for ${event.index}/${event.field} start at ${event.firstId}, expected ${t.nextId}`,
      );
      t.assign(event.firstId, event.keys);
    },
    encode: (e) => M.KeysAssigned.encode({ index: e.index, field: e.field, firstId: e.firstId, keys: e.keys }).finish(),
    decode: (payload) => {
      const m = obj(M.KeysAssigned, payload);
      const { index, field, firstId, keys } = m;
      return { type: 'KeysAssigned', index: str(index), field: str(field), firstId: num(firstId), keys: strs(keys) };
    },
  },
  RowAttrsSet: {
    code: 12,
    replay: 'commutes',
    snapshot: 'global',
    apply(holder, event) {
      const field = fieldOf(holder, event.index, event.field);
      field.rowAttrs.set(event.row, mergeAttrs(field.rowAttrs.get(event.row), event.attrs));
      if (Object.keys(field.rowAttrs.get(event.row) ?? {}).length === 0) field.rowAttrs.delete(event.row);
    },
    encode: (e) =>
      M.RowAttrsSet.encode({ index: e.index, field: e.field, row: e.row, attrs: attrsOut(e.attrs) }).finish(),
    decode: (payload) => {
      const m = obj(M.RowAttrsSet, payload);
      return {
        type: 'RowAttrsSet',
        index: str(m.index),
        field: str(m.field),
        row: num(m.row),
        attrs: attrsIn(m.attrs),
      };
    },
  },
  ColumnAttrsSet: {
    code: 13,
    replay: 'commutes',
    snapshot: 'global',
    apply(holder, event) {
      const index = indexOf(holder, event.index);
      const merged = mergeAttrs(index.columnAttrs.get(event.column), event.attrs);
      if (Object.keys(merged).length === 0) index.columnAttrs.delete(event.column);
      else index.columnAttrs.set(event.column, merged);
    },
    encode: (e) => M.ColumnAttrsSet.encode({ index: e.index, column: e.column, attrs: attrsOut(e.attrs) }).finish(),
    decode: (payload) => {
      const m = obj(M.ColumnAttrsSet, payload);
      return { type: 'ColumnAttrsSet', index: str(m.index), column: num(m.column), attrs: attrsIn(m.attrs) };
    },
  },
};
