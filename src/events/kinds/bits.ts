// Bit events: bits of rows set and cleared in one (field, view, shard), a row cleared everywhere
// (ClearRow) and a row replaced (Store). Bits records are the bulk of any log: their codec is
// hand-written (events/bits-encode.ts, events/bits-decode.ts).
import { STANDARD_VIEW } from '../../domain/names.js';
import { fieldOf, indexOf } from '../apply-support.js';
import type { Bitmap } from '../../roaring/bitmap.js';
import type { FrozenRow } from '../../roaring/frozen.js';
import { decodeBitsPayload } from '../bits-decode.js';
import { type BitDelta, encodeBitsPayload } from '../bits-encode.js';
import type { EventKinds } from '../kind.js';
import { bytesList, deserializeBitmap, message, num, nums, obj, serializeBitmap, str } from '../proto-fields.js';

export type BitsEvent =
  /**
   * Bulk or single bit sets in one (field, view, shard): the column offsets of each row.
   * `exists`: the columns also enter the index's existence field (row 0 of `_exists`), so an
   * import does not log every column a second time (half the log bytes of a one-row import).
   * `adopt` (never logged): the bitmaps are fresh and nothing else holds them (a snapshot load,
   * an import's own row bitmaps), so apply may keep them as the rows instead of copying them.
   * `deferred` (never logged; a snapshot load only): the fragment's rows, as bitmaps or as
   * frozen bytes to view on first read, made when first needed; `rows` and `columns` are then
   * empty. Only an empty fragment takes them deferred.
   */
  | (BitDelta & {
      type: 'BitsSet';
      exists?: boolean;
      adopt?: boolean;
      deferred?: () => { rows: number[]; columns: Bitmap[] } | { rows: number[]; frozen: FrozenRow[] };
    })
  | (BitDelta & { type: 'BitsCleared' })
  /** ClearRow: the row removed from every view and shard of the field. */
  | { type: 'RowCleared'; index: string; field: string; row: number }
  /** Store: the row of `view` replaced wholesale; shards not listed end up empty for that row. */
  | { type: 'RowStored'; index: string; field: string; view: string; row: number; shards: number[]; columns: Bitmap[] };

const M = { RowCleared: message('RowCleared'), RowStored: message('RowStored') };

/** Built field by field: object spread here cost ~0.5 µs per record on replay. */
function decodeBits<K extends 'BitsSet' | 'BitsCleared'>(type: K, payload: Uint8Array, reuse: boolean): BitsEvent {
  const b = decodeBitsPayload(payload, reuse);
  if (type === 'BitsSet' && b.exists)
    return {
      type: 'BitsSet',
      index: b.index,
      field: b.field,
      view: b.view,
      shard: b.shard,
      rows: b.rows,
      columns: b.columns,
      exists: true,
    };
  return { type, index: b.index, field: b.field, view: b.view, shard: b.shard, rows: b.rows, columns: b.columns };
}

export const BITS_EVENTS: EventKinds<BitsEvent> = {
  BitsSet: {
    code: 5,
    replay: 'merge',
    snapshot: 'shard',
    apply(holder, event) {
      const frag = fieldOf(holder, event.index, event.field).viewForWrite(event.view).fragmentForWrite(event.shard);
      // Existence first: adopted bitmaps may be emptied once adopted (Fragment.adoptRows).
      const existence = event.exists === true ? indexOf(holder, event.index).existence : undefined;
      if (existence !== undefined) {
        const ef = existence.viewForWrite(STANDARD_VIEW).fragmentForWrite(event.shard);
        for (const columns of event.columns) ef.addBits(0, columns);
      }
      if (event.deferred !== undefined) frag.defer(event.deferred);
      if (event.adopt === true) frag.adoptRows(event.rows, event.columns);
      else for (let i = 0; i < event.rows.length; i++) frag.addBits(event.rows[i], event.columns[i]);
    },
    encode: (e) => encodeBitsPayload(e, e.exists === true),
    decode: (payload, reuse) => decodeBits('BitsSet', payload, reuse) as Extract<BitsEvent, { type: 'BitsSet' }>,
  },
  BitsCleared: {
    code: 6,
    replay: 'barrier',
    snapshot: 'never',
    apply(holder, event) {
      const frag = fieldOf(holder, event.index, event.field).view(event.view)?.fragment(event.shard);
      if (frag === undefined) return;
      for (let i = 0; i < event.rows.length; i++) frag.removeBits(event.rows[i], event.columns[i]);
    },
    encode: (e) => encodeBitsPayload(e, false),
    decode: (payload, reuse) =>
      decodeBits('BitsCleared', payload, reuse) as Extract<BitsEvent, { type: 'BitsCleared' }>,
  },
  RowCleared: {
    code: 7,
    replay: 'barrier',
    snapshot: 'never',
    apply(holder, event) {
      const field = fieldOf(holder, event.index, event.field);
      for (const view of field.views.values()) for (const frag of view.fragments.values()) frag.clearRow(event.row);
    },
    encode: (e) => M.RowCleared.encode({ index: e.index, field: e.field, row: e.row }).finish(),
    decode: (payload) => {
      const m = obj(M.RowCleared, payload);
      return { type: 'RowCleared', index: str(m.index), field: str(m.field), row: num(m.row) };
    },
  },
  RowStored: {
    code: 8,
    replay: 'barrier',
    snapshot: 'never',
    apply(holder, event) {
      const view = fieldOf(holder, event.index, event.field).viewForWrite(event.view);
      for (const frag of view.fragments.values()) frag.clearRow(event.row);
      for (let i = 0; i < event.shards.length; i++)
        view.fragmentForWrite(event.shards[i]).setRow(event.row, event.columns[i]);
    },
    encode: (e) =>
      M.RowStored.encode({
        index: e.index,
        field: e.field,
        view: e.view,
        row: e.row,
        shards: e.shards,
        columns: e.columns.map(serializeBitmap),
      }).finish(),
    decode: (payload) => {
      const m = obj(M.RowStored, payload);
      return {
        type: 'RowStored',
        index: str(m.index),
        field: str(m.field),
        view: str(m.view),
        row: num(m.row),
        shards: nums(m.shards),
        columns: bytesList(m.columns).map(deserializeBitmap),
      };
    },
  },
};
