// A hand-written decoder for the Values message (ValuesSet / ValuesCleared), the int-field
// counterpart of bits-decode.ts: protobufjs's generic decode plus the copies into aligned typed
// arrays cost more than applying a small record. Wire format per proto/log/events.proto.
import { PayloadReader } from './payload-reader.js';
import { NameCache } from './name-cache.js';

export interface ValuesPayload {
  index: string;
  field: string;
  shard: number;
  columns: Uint32Array;
  values: BigInt64Array;
}

const NAMES = [new NameCache(), new NameCache()] as const;

const r = new PayloadReader('Values');

/** Replay scratch (`reuse`): grown, never shrunk; only small records are merged from it. */
let scratchColumns = new Uint32Array(64);
let scratchValues = new BigInt64Array(64);

/**
 * `reuse`: the arrays returned may be scratch overwritten by the next call (replay consumes each
 * record before decoding the next).
 */
export function decodeValuesPayload(payload: Uint8Array, reuse = false): ValuesPayload {
  r.reset(payload);
  const buf = r.buf;
  const out: ValuesPayload = { index: '', field: '', shard: 0, columns: EMPTY_COLUMNS, values: EMPTY_VALUES };
  while (!r.done) {
    const tag = r.varint();
    const fieldNo = tag >>> 3;
    const wire = tag & 7;
    if (wire === 2) {
      const end = r.fieldEnd();
      if (fieldNo === 1) out.index = NAMES[0].get(buf, r.pos, end);
      else if (fieldNo === 2) out.field = NAMES[1].get(buf, r.pos, end);
      // Copied: the bytes sit at arbitrary offsets, typed arrays need aligned memory.
      else if (fieldNo === 4) out.columns = copyColumns((end - r.pos) >>> 2, reuse);
      else if (fieldNo === 5) out.values = copyValues((end - r.pos) >>> 3, reuse);
      r.pos = end;
    } else if (wire === 0 && fieldNo === 3) out.shard = r.varint();
    else r.skip(wire);
  }
  return out;
}

const EMPTY_COLUMNS = new Uint32Array(0);
const EMPTY_VALUES = new BigInt64Array(0);

function copyColumns(n: number, reuse: boolean): Uint32Array {
  if (reuse && n > scratchColumns.length) scratchColumns = new Uint32Array(Math.max(n, 2 * scratchColumns.length));
  return fillFromField(reuse ? scratchColumns.subarray(0, n) : new Uint32Array(n));
}

function copyValues(n: number, reuse: boolean): BigInt64Array {
  if (reuse && n > scratchValues.length) scratchValues = new BigInt64Array(Math.max(n, 2 * scratchValues.length));
  return fillFromField(reuse ? scratchValues.subarray(0, n) : new BigInt64Array(n));
}

/** Copies the field's bytes at the cursor into `out`'s memory. */
function fillFromField<T extends Uint32Array | BigInt64Array>(out: T): T {
  new Uint8Array(out.buffer, out.byteOffset, out.byteLength).set(r.buf.subarray(r.pos, r.pos + out.byteLength));
  return out;
}
