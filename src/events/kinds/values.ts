// Int field events: values set and cleared in one shard (hand-written decoder,
// events/values-decode.ts), and the bit depth raised.
import { bsiViewName } from '../../domain/names.js';
import { fieldOf } from '../apply-support.js';
import { bitDepthFor, clearValues, setValues } from '../../state/bsi.js';
import type { EventKinds } from '../kind.js';
import { bytesOf, message, num, obj, str } from '../proto-fields.js';
import { decodeValuesPayload } from '../values-decode.js';

export type ValuesEvent =
  /** Int field values for columns (offsets) of one shard; apply does the BSI encoding. */
  | { type: 'ValuesSet'; index: string; field: string; shard: number; columns: Uint32Array; values: BigInt64Array }
  | { type: 'ValuesCleared'; index: string; field: string; shard: number; columns: Uint32Array }
  /** int fields: BSI magnitude bits raised (snapshots carry it; live writes grow it in ValuesSet). */
  | { type: 'BitDepthRaised'; index: string; field: string; bitDepth: number };

const M = { Values: message('Values'), BitDepthRaised: message('BitDepthRaised') };

export const VALUES_EVENTS: EventKinds<ValuesEvent> = {
  ValuesSet: {
    code: 9,
    replay: 'merge',
    snapshot: 'never',
    apply(holder, event) {
      const field = fieldOf(holder, event.index, event.field);
      const base = field.base;
      const depth = Math.max(field.bitDepth, bitDepthFor(event.values, base));
      if (depth !== field.bitDepth) holder.changes.noteLayout();
      field.bitDepth = depth;
      const frag = field.viewForWrite(bsiViewName(event.field)).fragmentForWrite(event.shard);
      setValues(frag, event.columns, event.values, base, field.bitDepth);
    },
    encode: (e) =>
      M.Values.encode({
        index: e.index,
        field: e.field,
        shard: e.shard,
        columns: bytesOf(e.columns),
        values: bytesOf(e.values),
      }).finish(),
    decode: (payload, reuse) => {
      const m = decodeValuesPayload(payload, reuse);
      return {
        type: 'ValuesSet',
        index: m.index,
        field: m.field,
        shard: m.shard,
        columns: m.columns,
        values: m.values,
      };
    },
  },
  ValuesCleared: {
    code: 10,
    replay: 'barrier',
    snapshot: 'never',
    apply(holder, event) {
      const field = fieldOf(holder, event.index, event.field);
      const frag = field.view(bsiViewName(event.field))?.fragment(event.shard);
      if (frag !== undefined) clearValues(frag, event.columns, field.bitDepth);
    },
    encode: (e) =>
      M.Values.encode({ index: e.index, field: e.field, shard: e.shard, columns: bytesOf(e.columns) }).finish(),
    decode: (payload, reuse) => {
      const m = decodeValuesPayload(payload, reuse);
      return { type: 'ValuesCleared', index: m.index, field: m.field, shard: m.shard, columns: m.columns };
    },
  },
  BitDepthRaised: {
    code: 15,
    replay: 'barrier',
    snapshot: 'shard',
    apply(holder, event) {
      const field = fieldOf(holder, event.index, event.field);
      if (event.bitDepth > field.bitDepth) holder.changes.noteLayout();
      field.bitDepth = Math.max(field.bitDepth, event.bitDepth);
    },
    encode: (e) => M.BitDepthRaised.encode({ index: e.index, field: e.field, bitDepth: e.bitDepth }).finish(),
    decode: (payload) => {
      const m = obj(M.BitDepthRaised, payload);
      return { type: 'BitDepthRaised', index: str(m.index), field: str(m.field), bitDepth: num(m.bitDepth) };
    },
  },
};
