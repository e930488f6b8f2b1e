// Int field events: values set and cleared in one shard (hand-written decoder,
// events/values-decode.ts), and the bit depth raised.
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
    encode: (e) => M.BitDepthRaised.encode({ index: e.index, field: e.field, bitDepth: e.bitDepth }).finish(),
    decode: (payload) => {
      const m = obj(M.BitDepthRaised, payload);
      return { type: 'BitDepthRaised', index: str(m.index), field: str(m.field), bitDepth: num(m.bitDepth) };
    },
  },
};
